#!/bin/sh
# run_linpack.sh -- Linpack local vs remote: numrpc-linpack against a fresh
# numrpc-server, 1 BLAS thread on both sides, then 2 threads on both sides.
# usage: run_linpack.sh [--quick] [--out DIR] [BUILD_DIR]   (or env NUMRPC_BUILD)
set -u
quick=0
out=
build=${NUMRPC_BUILD:-}
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick=1 ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n 2,4p "$0"; exit 0 ;;
    *) build=$1 ;;
    esac
    shift
done
here=$(cd "$(dirname "$0")" && pwd)
[ -n "$build" ] || build=$(pwd)
[ -n "$out" ] || out=$here/out
mkdir -p "$out"
server=$build/server/numrpc-server
stubs=$build/stubs/.libs
linpack=$build/apps/linpack/numrpc-linpack
for f in "$server" "$linpack"; do
    [ -x "$f" ] || { echo "run_linpack.sh: $f not found (give the build dir)" >&2; exit 2; }
done
if [ $quick = 1 ]; then sizes=100,200,500,1000; repeat=3
else sizes=100,200,500,1000,2000,4000; repeat=3; fi

tmp=$(mktemp -d /tmp/numrpc-linpack-XXXXXX)
srv_pid=
corba_pid=
corba_server=$build/apps/corba/numrpc-corba-server
cleanup() {
    [ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
    [ -n "$corba_pid" ] && kill "$corba_pid" 2>/dev/null && wait "$corba_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

status=0
for threads in 1 2; do
    rm -f "$tmp/port"
    "$server" --port 0 --bind 127.0.0.1 --stubs "$stubs" --port-file "$tmp/port" \
        --blas-threads "$threads" --quiet >/dev/null &
    srv_pid=$!
    i=0
    while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    port=$(cat "$tmp/port" 2>/dev/null)
    [ -n "$port" ] || { echo "run_linpack.sh: server did not start" >&2; exit 1; }
    # The CORBA baseline (omniORB) with the same BLAS threads, if it was built.
    corba_args=
    if [ -x "$corba_server" ]; then
        rm -f "$tmp/ior"
        OPENBLAS_NUM_THREADS=$threads "$corba_server" --ior-file "$tmp/ior" >/dev/null 2>&1 &
        corba_pid=$!
        i=0
        while [ ! -s "$tmp/ior" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
        [ -s "$tmp/ior" ] && corba_args="--corba $tmp/ior"
    else
        echo "run_linpack.sh: no CORBA baseline in this build (omniORB missing): skipped"
    fi
    echo "== Linpack, $threads BLAS thread(s) on client and server (server 127.0.0.1:$port) =="
    NUMRPC_SERVER=127.0.0.1:$port OPENBLAS_NUM_THREADS=$threads \
        "$linpack" --sizes "$sizes" --repeat "$repeat" --mode both $corba_args \
        --csv "$out/linpack_t$threads.csv" || status=1
    kill "$srv_pid"; wait "$srv_pid" 2>/dev/null; srv_pid=
    if [ -n "$corba_pid" ]; then kill "$corba_pid"; wait "$corba_pid" 2>/dev/null; corba_pid=; fi
    echo
done
exit $status
