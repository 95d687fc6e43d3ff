#!/usr/bin/env bash
# meta_rss.sh -- does the metaserver's memory level off?  Rounds of many
# short-lived clients (each its own connection, so its own thread there):
# the metaserver's RSS and thread count after each round.
#
#   bench/meta_rss.sh [BUILD_DIR] [ROUNDS] [CLIENTS]   (defaults build/ 12 40)
#
# Each round starts CLIENTS soak clients (1 s of calls routed by the
# metaserver to one server: dcopy and dgemm checked against local BLAS) and
# CLIENTS `numrpc status --metaserver` queries at once, and waits for them.
# Prints one line per round and a verdict: RSS of the last half of the rounds
# within 5 % of the rounds' median after the first two (which warm glibc's
# per-thread arenas).  Loopback only; processes stopped by pid.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
rounds=${2:-12}
clients=${3:-40}
run=$(mktemp -d /tmp/numrpc-meta-rss-XXXXXX)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$run"; }
trap cleanup EXIT

"$build/metaserver/numrpc-metaserver" --port 0 --bind 127.0.0.1 --port-file "$run/mport" --quiet &
meta_pid=$!
pids+=("$meta_pid")
for _ in $(seq 50); do [[ -s $run/mport ]] && break; sleep 0.1; done
meta=127.0.0.1:$(cat "$run/mport")
"$build/server/numrpc-server" --port 0 --bind 127.0.0.1 --port-file "$run/sport" --admin-socket none \
    --stubs "$build/stubs/.libs" --blas-threads 1 --workers 4 --metaserver "$meta" >"$run/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [[ -s $run/sport ]] && break; sleep 0.1; done
sleep 1 # the join reaches the metaserver

rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$meta_pid/status"; }
threads() { ls "/proc/$meta_pid/task" | wc -l; }
echo "meta_rss: metaserver $meta, $rounds rounds of $clients clients + $clients status queries"
echo "round  rss_kib  threads  calls_ok"
echo "start  $(rss_kib)  $(threads)  -"
series=()
for r in $(seq "$rounds"); do
    round_pids=()
    for i in $(seq "$clients"); do
        NUMRPC_METASERVER=$meta OPENBLAS_NUM_THREADS=1 timeout 30 \
            "$build/bench/numrpc-soak-client" --client "$i" --seconds 1 --think-ms 20 \
            --records "$run/rec-$i" 2>/dev/null &
        round_pids+=($!)
        timeout 10 "$build/cli/numrpc" status --metaserver "$meta" >/dev/null 2>&1 &
        round_pids+=($!)
    done
    wait "${round_pids[@]}"
    ok=$(cat "$run"/rec-* 2>/dev/null | awk '$4 == "OK" && $3 == "OK"' | wc -l)
    kib=$(rss_kib)
    series+=("$kib")
    printf '%-5s  %s  %s  %s\n' "$r" "$kib" "$(threads)" "$ok"
done

# Verdict: the median after warm-up, and the last half against it.
warm=("${series[@]:2}")
median=$(printf '%s\n' "${warm[@]}" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
half=$((rounds / 2))
worst=$(printf '%s\n' "${series[@]:$half}" | sort -n | tail -1)
ratio=$(awk -v w="$worst" -v m="$median" 'BEGIN {printf "%.3f", w / m}')
level=$(awk -v r="$ratio" 'BEGIN {print (r <= 1.05) ? "yes" : "NO"}')
echo "meta_rss: median after round 2 $median KiB; largest of the last $((rounds - half)) rounds $worst KiB (ratio $ratio); levels off: $level"
