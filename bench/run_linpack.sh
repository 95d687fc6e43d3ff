#!/bin/sh
# run_linpack.sh -- Linpack local vs remote: numrpc-linpack against a fresh
# numrpc-server (and the omniORB baseline), on loopback or across namespaces.
# usage: run_linpack.sh [--quick] [--out DIR] [--sizes LIST] [--repeat R]
#          [--threads "1 2"] [--mode both|linpack] [--tag NAME]
#          [--server-netns NS --host ADDR] [--delay-ms D] [BUILD_DIR]
set -u
quick=0
out=
build=${NUMRPC_BUILD:-}
sizes=
repeat=3
threads_list="1 2"
mode=both
tag=
netns=
host=127.0.0.1
delay=0
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick=1 ;;
    --out) out=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    --repeat) repeat=$2; shift ;;
    --threads) threads_list=$2; shift ;;
    --mode) mode=$2; shift ;;
    --tag) tag=$2; shift ;;
    --server-netns) netns=$2; shift ;;
    --host) host=$2; shift ;;
    --delay-ms) delay=$2; shift ;;
    -h|--help) sed -n 2,6p "$0"; exit 0 ;;
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
proxy=$build/bench/numrpc-delay-proxy
for f in "$server" "$linpack"; do
    [ -x "$f" ] || { echo "run_linpack.sh: $f not found (give the build dir)" >&2; exit 2; }
done
if [ -z "$sizes" ]; then
    if [ $quick = 1 ]; then sizes=100,200,500,1000; else sizes=100,200,500,1000,2000,4000; repeat=5; fi
fi
# Servers run in the namespace NS when given (the caller runs this script in
# the client's namespace), bound to ADDR.
nsx=
[ -n "$netns" ] && nsx="ip netns exec $netns"
export NUMRPC_BENCH_HOST=$host

tmp=$(mktemp -d /tmp/numrpc-linpack-XXXXXX)
pids=
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
    pids=
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
wait_file() { # file: waits up to 10 s for it to be non-empty
    i=0
    while [ ! -s "$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    [ -s "$1" ]
}
# start_proxy PORT: a delay proxy in the servers' namespace; its port in $via.
start_proxy() {
    rm -f "$tmp/pport"
    $nsx "$proxy" --port-file "$tmp/pport" --to "$1" --delay-ms "$delay" >/dev/null 2>&1 &
    pids="$pids $!"
    wait_file "$tmp/pport" && via=$(cat "$tmp/pport")
}

status=0
for threads in $threads_list; do
    rm -f "$tmp/port"
    $nsx "$server" --port 0 --bind "$host" --allow-insecure --stubs "$stubs" --port-file "$tmp/port" \
        --blas-threads "$threads" --quiet >/dev/null &
    pids="$pids $!"
    wait_file "$tmp/port" || { echo "run_linpack.sh: server did not start" >&2; exit 1; }
    port=$(cat "$tmp/port")
    if [ "$delay" != 0 ]; then
        start_proxy "$port" || { echo "run_linpack.sh: the delay proxy did not start" >&2; exit 1; }
        port=$via
    fi
    # The CORBA baseline (omniORB) with the same BLAS threads, if it was built;
    # behind a proxy its IOR names the proxy (NUMRPC_BENCH_PUBLISH).
    corba_server=$build/apps/corba/numrpc-corba-server
    corba_args=
    if [ -x "$corba_server" ]; then
        rm -f "$tmp/ior"
        if [ "$delay" != 0 ]; then
            cport=$((30000 + $$ % 20000))
            start_proxy "$cport"
            export NUMRPC_BENCH_CORBA_PORT=$cport NUMRPC_BENCH_PUBLISH=$host:$via
        fi
        OPENBLAS_NUM_THREADS=$threads $nsx "$corba_server" --ior-file "$tmp/ior" >/dev/null 2>&1 &
        pids="$pids $!"
        unset NUMRPC_BENCH_CORBA_PORT NUMRPC_BENCH_PUBLISH
        wait_file "$tmp/ior" && corba_args="--corba $tmp/ior"
    else
        echo "run_linpack.sh: no CORBA baseline in this build (omniORB missing): skipped"
    fi
    where="server $host:$port"
    [ -n "$netns" ] && where="$where in namespace $netns"
    [ "$delay" != 0 ] && where="$where, via a delay proxy (+$delay ms each way)"
    echo "== Linpack, $threads BLAS thread(s) on client and server ($where) =="
    NUMRPC_SERVER=$host:$port OPENBLAS_NUM_THREADS=$threads \
        "$linpack" --sizes "$sizes" --repeat "$repeat" --mode "$mode" $corba_args \
        --csv "$out/linpack_${tag}t$threads.csv" || status=1
    for p in $pids; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
    pids=
    echo
done
exit $status
