#!/bin/sh
# async.sh -- runs numrpc-bench-async with servers on 127.0.0.1: pings with
# client and server on one vCPU and across two, then a dgemm farm over two
# servers pinned to a core each with one BLAS thread.  usage: async.sh [--quick] [BUILD]
set -u
quick=
build=${NUMRPC_BUILD:-}
for a in "$@"; do case "$a" in --quick) quick=1 ;; *) build=$a ;; esac; done
[ -n "$build" ] || build=$(pwd)
server=$build/server/numrpc-server
bench=$build/bench/numrpc-bench-async
[ -x "$server" ] && [ -x "$bench" ] || { echo "async.sh: build first ($build)" >&2; exit 2; }
tmp=$(mktemp -d)
pids=
trap 'for p in $pids; do kill $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"' EXIT

# start_server NAME CPU: a server pinned to CPU with one BLAS thread; its
# address goes to $addr.
start_server() {
    taskset -c "$2" "$server" --port 0 --bind 127.0.0.1 --port-file "$tmp/$1.port" \
        --stubs "$build/stubs/.libs" --blas-threads 1 --quiet >/dev/null 2>&1 &
    pids="$pids $!"
    i=0
    while [ ! -s "$tmp/$1.port" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    addr="127.0.0.1:$(cat "$tmp/$1.port")"
}

ncpu=$(nproc)
rounds=7; n=1000; calls=50
[ -n "$quick" ] && { rounds=3; n=400; calls=16; }
start_server a 0; a=$addr
echo "## pings, client and server on vCPU 0"
taskset -c 0 "$bench" --server "$a" --only pings --rounds $rounds
if [ "$ncpu" -ge 2 ]; then
    echo "## pings, client on vCPU 1, server on vCPU 0"
    taskset -c 1 "$bench" --server "$a" --only pings --rounds $rounds
    start_server b 1; b=$addr
    echo "## async return and farm: servers on vCPU 0 and 1, one BLAS thread each"
    "$bench" --server "$a" --second "$b" --only return --rounds $rounds --dgemm-n 1200
    "$bench" --server "$a" --second "$b" --only farm --rounds 3 --dgemm-n $n --dgemm-calls $calls
else
    echo "async.sh: one vCPU: the across-vCPU pings and the farm need two (skipped)"
fi
