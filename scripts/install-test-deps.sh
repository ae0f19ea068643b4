#!/usr/bin/env bash
# Installs what the test suite and benchmarks need beyond `npm ci`: Debian's zstd (GNU tar
# reads bundles with it in the integration tests; the benchmark's baseline runs it).
set -euo pipefail
missing=()
command -v zstd >/dev/null || missing+=(zstd)
command -v gzip >/dev/null || missing+=(gzip)
command -v tar >/dev/null || missing+=(tar)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing Debian packages: ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
