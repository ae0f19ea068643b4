#!/usr/bin/env bash
# Builds the agent's eBPF exec probe helper, packages/agent/ebpf/build/guard-exec-probe
# (docs/decisions/0012-exec-probe.md), with Debian's toolchain: clang compiles the CO-RE BPF
# object against a vmlinux.h dumped from this host's BTF (generated here, never committed),
# bpftool embeds it in a skeleton, and the loader links libbpf, libelf and zlib statically so
# the binary needs only glibc at run time (no libbpf1/libelf1 on the target host).
# Skips the build when its inputs (sources, this script, tool versions) are unchanged.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$root/packages/agent/ebpf"
out="$src/build"
binary="$out/guard-exec-probe"
btf=/sys/kernel/btf/vmlinux
libdir="/usr/lib/$(uname -m)-linux-gnu"

need() { # need <what is missing> <Debian package>
  echo "build-exec-probe: $1 is missing: install the Debian package '$2' (apt-get install -y $2)" >&2
  exit 1
}
command -v clang >/dev/null || need clang clang
command -v bpftool >/dev/null || need bpftool bpftool
command -v llvm-strip >/dev/null || need llvm-strip llvm
[ -f /usr/include/bpf/bpf_helpers.h ] && [ -f "$libdir/libbpf.a" ] || need "libbpf headers and libbpf.a" libbpf-dev
[ -f "$libdir/libelf.a" ] || need libelf.a libelf-dev
[ -f "$libdir/libz.a" ] || need libz.a zlib1g-dev
[ -f /usr/include/linux/types.h ] || need "kernel headers (linux/types.h)" linux-libc-dev

mkdir -p "$out"
exec 9>"$out/.lock"
flock 9 # concurrent builds (parallel test runs) wait for each other

stamp="$(
  {
    cat "$src/exec-probe.bpf.c" "$src/exec-probe.c" "$src/exec-probe.h" "${BASH_SOURCE[0]}"
    clang --version | head -1
    bpftool version | head -1
    dpkg-query -W -f '${Version}' libbpf-dev libelf-dev zlib1g-dev 2>/dev/null || true
    [ -f "$btf" ] && sha256sum "$btf"
  } | sha256sum | cut -d' ' -f1
)"
if [ -x "$binary" ] && [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "build-exec-probe: $binary is up to date"
  exit 0
fi

[ -r "$btf" ] || {
  echo "build-exec-probe: no BTF at $btf: vmlinux.h cannot be generated (the kernel needs CONFIG_DEBUG_INFO_BTF)" >&2
  exit 1
}
case "$(uname -m)" in
  x86_64) arch=x86 ;;
  aarch64) arch=arm64 ;;
  *) arch="$(uname -m)" ;;
esac

bpftool btf dump file "$btf" format c >"$out/vmlinux.h"
clang -g -O2 -target bpf -D__TARGET_ARCH_"$arch" -Wall -Werror \
  -I"$out" -I"$src" -c "$src/exec-probe.bpf.c" -o "$out/exec-probe.bpf.o"
llvm-strip -g "$out/exec-probe.bpf.o" # keeps .BTF (CO-RE needs it), drops DWARF from the skeleton
bpftool gen skeleton "$out/exec-probe.bpf.o" name exec_probe >"$out/exec-probe.skel.h"
clang -O2 -g0 -Wall -Wextra -Werror -D_FORTIFY_SOURCE=2 -fstack-protector-strong \
  -I"$out" -I"$src" "$src/exec-probe.c" -o "$binary.tmp" \
  -Wl,-Bstatic -lbpf -lelf -lz -Wl,-Bdynamic -Wl,--as-needed -Wl,-z,relro,-z,now -s
mv "$binary.tmp" "$binary"
echo "$stamp" >"$out/.stamp"
echo "build-exec-probe: built $binary ($(stat -c %s "$binary") bytes)"
