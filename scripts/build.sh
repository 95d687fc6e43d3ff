#!/usr/bin/env bash
# build.sh -- configures (once) and builds numrpc out of tree in DIR
# (default build/), with extra configure arguments after DIR.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$top/build}
shift || true
[[ -x "$top/configure" ]] || (cd "$top" && autoreconf -fi >/dev/null 2>&1)
mkdir -p "$dir"
cd "$dir"
[[ -f Makefile ]] || "$top/configure" -q "$@"
make -j"$(nproc)" >/dev/null
echo "build: $dir ready"
