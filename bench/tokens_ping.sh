#!/usr/bin/env bash
# tokens_ping.sh -- what tokens cost a warm small call: one server without
# tokens, one with, same build, runs interleaved; medians, spreads, ratio.
# usage: bench/tokens_ping.sh [BUILD_DIR=build] [ROUNDS=5] [CALLS=2000]
#   Each run is numrpc-goodcalls --fresh-every 0 (every call on a warm,
#   authenticated connection); the figure is dcopy of 16 doubles.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
rounds=${2:-5}
calls=${3:-2000}
[[ $rounds =~ ^[1-9][0-9]?$ && $calls =~ ^[1-9][0-9]*$ ]] || { sed -n 4,6p "$0" >&2; exit 2; }
. "$top/bench/servers.sh"
bench_setup tokens-ping
secret=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
printf 'bench %s call\n' "$secret" > "$tmp/server.tokens"
printf 'bench %s\n' "$secret" > "$tmp/client.token"
chmod 600 "$tmp/server.tokens" "$tmp/client.token"

# Both servers on CPU 0, the client on CPU 1.
bench_server_on 0 plain --workers 1 --blas-threads 1
bench_server_on 0 tokens --workers 1 --blas-threads 1 --token-file "$tmp/server.tokens"

run() { # run NAME ROUND [env...]: one measured run, its CSV rows appended
    local name=$1 round=$2
    shift 2
    env "$@" timeout 300 taskset -c 1 "$build/bench/numrpc-goodcalls" --server "127.0.0.1:$(cat "$tmp/$name.port")" \
        --calls "$calls" --procs 1 --fresh-every 0 --label "$name" --csv "$tmp/$name.$round.csv" >/dev/null
}
for r in $(seq "$rounds"); do
    run plain "$r" NUMRPC_TOKEN_FILE=
    run tokens "$r" NUMRPC_TOKEN_FILE="$tmp/client.token"
done

# Per run, the median of its dcopy-16 latencies; then their median, spread and ratio.
python3 "$top/bench/warm_medians.py" "$tmp" "$rounds" plain tokens
