#!/usr/bin/env bash
# Installs what the test suite and benchmarks need beyond `npm install`, from Debian's packages:
# zstd (GNU tar reads bundles with it in the integration tests; the collect benchmark's
# baseline runs it), openssl (tests make a throw-away CA for HTTPS receivers and proxies),
# curl (the upload benchmark's anchor), GNU time (benchmarks read peak RSS from it) and tmux
# (the agent's progress tests run it in a real terminal), setpriv (tests run the CLIs without
# root's power over file modes) and chromium (the console's browser tests drive Debian's build
# through playwright-core; nothing is downloaded from a browser CDN). For the release packages
# (packaging/, issue 13): binutils (strip), dpkg-dev (dpkg-shlibdeps), lintian, logrotate (the
# agent's rule is run for real), systemd (systemd-analyze verify and security), man-db (man -w
# finds the installed pages), adduser and init-system-helpers (the packages' maintainer scripts).
set -euo pipefail
missing=()
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
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing Debian packages: ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
