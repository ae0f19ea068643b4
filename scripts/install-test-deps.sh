#!/usr/bin/env bash
# Installs what the test suite and benchmarks need beyond `npm install`, from Debian's packages:
# zstd (GNU tar reads bundles with it in the integration tests; the collect benchmark's
# baseline runs it), openssl (tests make a throw-away CA for HTTPS receivers and proxies),
# curl (the upload benchmark's anchor), GNU time (benchmarks read peak RSS from it) and tmux
# (the agent's progress tests run it in a real terminal), setpriv (tests run the CLIs without
# root's power over file modes), ss (the replica failure test finds which replica is delivering),
# PostgreSQL (the server suite's second pass and the scale benchmark start a throw-away cluster
# of their own: initdb in a temp dir, never the system service, which is stopped and disabled
# again if the package's install started it) and chromium (the console's browser tests drive
# Debian's build through playwright-core; nothing is downloaded from a browser CDN). For the
# release packages (packaging/, issue 13): binutils (strip), dpkg-dev (dpkg-shlibdeps),
# lintian, logrotate (the agent's rule is run for real), systemd (systemd-analyze verify and
# security), man-db (man -w finds the installed pages), adduser and init-system-helpers (the
# packages' maintainer scripts).
set -euo pipefail
missing=()
pg_missing=0
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || pg_missing=1
[ "$pg_missing" = 1 ] && missing+=(postgresql)
command -v zstd >/dev/null || missing+=(zstd)
command -v gzip >/dev/null || missing+=(gzip)
command -v tar >/dev/null || missing+=(tar)
command -v openssl >/dev/null || missing+=(openssl)
command -v curl >/dev/null || missing+=(curl)
[ -x /usr/bin/time ] || missing+=(time)
command -v tmux >/dev/null || missing+=(tmux)
command -v setpriv >/dev/null || missing+=(util-linux)
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v strip >/dev/null || missing+=(binutils)
command -v dpkg-shlibdeps >/dev/null || missing+=(dpkg-dev)
command -v lintian >/dev/null || missing+=(lintian)
[ -x /usr/sbin/logrotate ] || missing+=(logrotate)
command -v systemd-analyze >/dev/null || missing+=(systemd)
command -v man >/dev/null || missing+=(man-db)
command -v adduser >/dev/null || missing+=(adduser)
command -v deb-systemd-helper >/dev/null || missing+=(init-system-helpers)
command -v ss >/dev/null || missing+=(iproute2)
# The journal detector's test writes a real journal file (these machines run no journald).
[ -x /lib/systemd/systemd-journal-remote ] || missing+=(systemd-journal-remote)
# The package round trips run in throw-away containers (packaging/test/container.ts): podman
# with runc, and debootstrap for their Debian root file system (no registry is reachable).
command -v podman >/dev/null || missing+=(podman)
command -v runc >/dev/null || missing+=(runc)
[ -x /usr/sbin/debootstrap ] || missing+=(debootstrap)
# The server image's tests (packaging/test/image*.test.ts): a bridge network with DNS between
# containers (netavark, aardvark-dns) and the compose files run by podman-compose. netavark
# programs the bridge's NAT and published ports through iptables, which its package does not
# depend on: without it every `podman run` fails ("netavark: No such file or directory").
[ -x /usr/lib/podman/netavark ] || missing+=(netavark)
command -v iptables >/dev/null || [ -x /usr/sbin/iptables ] || missing+=(iptables)
[ -x /usr/lib/podman/aardvark-dns ] || missing+=(aardvark-dns)
command -v podman-compose >/dev/null || missing+=(podman-compose)
# The agent's eBPF exec probe (scripts/build-exec-probe.sh); bpftrace is only its benchmark's anchor.
command -v clang >/dev/null || missing+=(clang)
command -v llvm-strip >/dev/null || missing+=(llvm)
command -v bpftool >/dev/null || missing+=(bpftool)
[ -f /usr/include/bpf/bpf_helpers.h ] || missing+=(libbpf-dev)
[ -f /usr/include/gelf.h ] || missing+=(libelf-dev)
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
command -v bpftrace >/dev/null || missing+=(bpftrace)
# The webhook receivers in docs/receivers/ run on real deliveries in the server suite
# (receivers.test.ts), each with its language's own toolchain.
command -v python3 >/dev/null || missing+=(python3)
command -v go >/dev/null || missing+=(golang-go)
command -v ruby >/dev/null || missing+=(ruby)
command -v php >/dev/null || missing+=(php-cli)
command -v javac >/dev/null || missing+=(default-jdk-headless)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing Debian packages: ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ "$pg_missing" = 1 ] && command -v pg_lsclusters >/dev/null; then
  # Debian's package creates and starts a "main" cluster as a system service: the tests never
  # use it, so stop it (and keep it from starting at boot) rather than leave a server running.
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  pg_lsclusters -h 2>/dev/null | while read -r version name _; do
    $sudo pg_ctlcluster "$version" "$name" stop 2>/dev/null || true
    echo manual | $sudo tee "/etc/postgresql/$version/$name/start.conf" >/dev/null 2>&1 || true
  done
fi
# Podman in this VM: runc (crun is refused), cgroupfs, and no default ulimits (podman's nofile
# limit is refused). The tests bring a containers.conf of their own (CONTAINERS_CONF); this is
# for podman run by hand. Added once, only when the file sets no default_ulimits yet.
conf=/etc/containers/containers.conf
if command -v podman >/dev/null && ! grep -qs '^[[:space:]]*default_ulimits' "$conf"; then
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  if grep -qs '^\[containers\]' "$conf"; then
    $sudo sed -i '/^\[containers\]/a default_ulimits = []' "$conf"
  else
    printf '[containers]\ndefault_ulimits = []\n' | $sudo tee -a "$conf" >/dev/null
  fi
  if ! grep -qs '^\[engine\]' "$conf"; then
    printf '\n[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\n' | $sudo tee -a "$conf" >/dev/null
  fi
fi
