// guard-verify checks a captured Guard delivery: a file of "Name: value" header lines and a
// file of the raw body, against one or more secrets. Exit 0 when genuine, 1 when refused, 2
// for a usage or configuration mistake.
//
//	guard-verify [--now=SECONDS] guard-signature|standard-webhooks HEADERS BODY SECRET...
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"guardreceiver/guardwebhook"
)

const usage = "guard-verify [--now=SECONDS] guard-signature|standard-webhooks HEADERS BODY SECRET..."

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	verifier := &guardwebhook.Verifier{}
	if len(args) > 0 && strings.HasPrefix(args[0], "--now=") {
		seconds, err := strconv.ParseFloat(strings.TrimPrefix(args[0], "--now="), 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, usage)
			return 2
		}
		now := time.Unix(0, int64(seconds*1e9))
		verifier.Now = func() time.Time { return now }
		args = args[1:]
	}
	if len(args) < 4 || (args[0] != "guard-signature" && args[0] != "standard-webhooks") {
		fmt.Fprintln(os.Stderr, usage)
		return 2
	}
	scheme := args[0]
	verifier.Secrets = args[3:]
	header, err := readHeaders(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	// Leave out the other scheme's headers, so Verify checks the one asked for.
	if scheme == "standard-webhooks" {
		header.Del("Guard-Signature")
	} else {
		header.Del("Webhook-Signature")
		header.Del("Webhook-Id")
		header.Del("Webhook-Timestamp")
	}
	body, err := os.ReadFile(args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	event, err := verifier.Verify(body, header)
	var refused *guardwebhook.VerificationError
	switch {
	case errors.As(err, &refused):
		fmt.Fprintf(os.Stderr, "refused (%s): %s\n", refused.Code, refused.Message)
		return 1
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var data struct {
		SignalID string `json:"signal_id"`
		EventID  string `json:"event_id"`
	}
	_ = json.Unmarshal(event.Data, &data)
	id := data.SignalID
	if id == "" {
		id = data.EventID
	}
	fmt.Printf("verified by %s: %s %s\n", scheme, event.EventType, id)
	return 0
}

func readHeaders(path string) (http.Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	header := http.Header{}
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		if name, value, ok := strings.Cut(lines.Text(), ":"); ok {
			header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
		}
	}
	return header, lines.Err()
}
