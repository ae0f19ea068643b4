module guardreceiver

go 1.19
