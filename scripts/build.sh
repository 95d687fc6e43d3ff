#!/usr/bin/env bash
# build.sh -- configures (once) and builds numrpc out of tree in DIR
# (default build/), with extra configure arguments after DIR; a line per step.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/steps.sh"
dir=${1:-$top/build}
shift || true
mkdir -p "$dir"
log="$dir/logs/build.log"
name=$(basename "$dir")
if [[ ! -x "$top/configure" ]]; then
  step "$log" "configuring: autoreconf" bash -c "cd '$top' && autoreconf -fi"
fi
if [[ ! -f "$dir/Makefile" ]]; then
  step "$log" "configuring $name${*:+ ($*)}" bash -c 'cd "$1" && shift && "$@"' _ "$dir" "$top/configure" "$@"
fi
step "$log" "building $name" make -C "$dir" -j"$(nproc)"
