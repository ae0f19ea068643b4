#!/usr/bin/env bash
# Installs what the test suite and benchmarks need beyond `npm install`, from Debian's packages:
# zstd (GNU tar reads bundles with it in the integration tests; the collect benchmark's
# baseline runs it), openssl (tests make a throw-away CA for HTTPS receivers and proxies),
# curl (the upload benchmark's anchor), GNU time (benchmarks read peak RSS from it) and tmux
# (the agent's progress tests run it in a real terminal), setpriv (tests run the CLIs without
# root's power over file modes) and chromium (the console's browser tests drive Debian's build
# through playwright-core; nothing is downloaded from a browser CDN).
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
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing Debian packages: ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
