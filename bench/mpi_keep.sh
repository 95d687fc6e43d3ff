#!/usr/bin/env bash
# mpi_keep.sh -- the figure of docs/mpi.md "Handles: factors kept on the grid":
# a server with a 4-rank job, then numrpc-bench-mpi-keep N K against it.
# Usage: bench/mpi_keep.sh [BUILD_DIR] [N] [K]
set -euo pipefail
build=${1:-build}; n=${2:-2000}; k=${3:-10}
dir=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
TMPDIR=$dir "$build/server/numrpc-server" --port 0 --port-file "$dir/port" --mpi-ranks 4 \
  --mpi-args --oversubscribe --mpi-engine "$build/mpi/numrpc-mpi-engine" --stubs "$build/stubs/.libs" \
  --admin-socket none &
pid=$!
for _ in $(seq 100); do [[ -s $dir/port ]] && break; sleep 0.1; done
NUMRPC_SERVER=127.0.0.1:$(cat "$dir/port") "$build/bench/numrpc-bench-mpi-keep" "$n" "$k"
