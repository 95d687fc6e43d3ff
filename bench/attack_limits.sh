#!/usr/bin/env bash
# attack_limits.sh -- issue 28's limits beside an attacker (handle table, HTTP slowloris, forged
# REPORTs), real processes on 127.0.0.1, interleaved rounds, tables of medians [min, max].
# usage: attack_limits.sh [--rounds R] [--puts K] [--http-seconds S] [--reports N] [--modes LIST]
#                         [--out DIR] [--server-build DIR] [--tag NAME] [BUILD_DIR]
# --server-build: numrpc-server and numrpc-metaserver from another build (an older tree).
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/procs.sh"
rounds=3 puts=200 http_seconds=30 nreports=100 out="" build=${NUMRPC_BUILD:-} sbuild="" tag=""
modes="handles-none handles http-none http-slowloris forged-reports"
while [[ $# -gt 0 ]]; do
    case $1 in
    --rounds) rounds=$2; shift ;;
    --puts) puts=$2; shift ;;
    --http-seconds) http_seconds=$2; shift ;;
    --reports) nreports=$2; shift ;;
    --modes) modes=${2//,/ }; shift ;;
    --out) out=$2; shift ;;
    --server-build) sbuild=$2; shift ;;
    --tag) tag=$2; shift ;;
    -h | --help) sed -n 2,6p "$0"; exit 0 ;;
    *) build=$1 ;;
    esac
    shift
done
attack_dirs || exit 2
for f in "$build/bench/numrpc-limits-peer" "$build/bench/numrpc-attacker" "$sbuild/server/numrpc-server" \
    "$sbuild/metaserver/numrpc-metaserver" "$sbuild/stubs/.libs/blas.so"; do
    [[ -e $f ]] || { echo "attack_limits.sh: $f missing: build first (make)" >&2; exit 2; }
done
command -v curl > /dev/null || { echo "attack_limits.sh: curl missing" >&2; exit 2; }
export OPENBLAS_NUM_THREADS=1
run=$(mktemp -d /tmp/numrpc-limits-XXXXXX)
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do stop_pid "$p"; done
    rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
peer=$build/bench/numrpc-limits-peer

# Two tokens that may call (alice: the attacker, bob: the measured client).
umask 077
alice=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
bob=0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0
printf 'alice %s call status\nbob %s call status\n' $alice $bob > "$run/tokens"
printf 'alice %s\n' $alice > "$run/alice.tok"
printf 'bob %s\n' $bob > "$run/bob.tok"
umask 022

# Starts numrpc-server with ARGS on a free port: its pid in $spid, port in $sport.
start_server() {
    rm -f "$run/port"
    "$sbuild/server/numrpc-server" --port 0 --bind 127.0.0.1 --port-file "$run/port" --stubs "$sbuild/stubs/.libs" \
        --blas-threads 1 --admin-socket none --quiet "$@" > "$run/server.log" 2>&1 &
    spid=$!
    pids+=("$spid")
    sport=$(port_of "$run/port" "$spid") || { cat "$run/server.log" >&2; echo "attack_limits.sh: no server" >&2; exit 1; }
}

# Stops every process started this round.
stop_all() {
    local p
    for p in "${pids[@]}"; do stop_pid "$p"; done
    pids=()
}

# Waits (at most $3 s) until FILE has a line starting with WORD.
wait_line() { # FILE WORD SECONDS
    local i
    for i in $(seq $(($3 * 20))); do
        grep -q "^$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

# The value of key K in a line of k=v words.
kv() { # LINE KEY
    echo "$1" | tr ' ' '\n' | awk -F= -v k="$2" '$1 == k {print substr($0, length(k) + 2); exit}'
}

# handles-none / handles: bob's puts and gets, alone or beside alice's full share.
round_handles() { # ROUND MODE
    local round=$1 mode=$2 held="-" sum
    mkdir -p "$run/hdir"
    start_server --token-file "$run/tokens" --handle-dir "$run/hdir"
    if [[ $mode == handles ]]; then
        NUMRPC_TOKEN_FILE=$run/alice.tok "$peer" fill --server "127.0.0.1:$sport" > "$run/fill.out" 2>&1 &
        pids+=($!)
        wait_line "$run/fill.out" ready 120 || { cat "$run/fill.out" >&2; exit 1; }
        held=$(kv "$(grep ^ready "$run/fill.out")" held)
    fi
    sum=$(NUMRPC_TOKEN_FILE=$run/bob.tok timeout 600 "$peer" good --server "127.0.0.1:$sport" --puts "$puts" | grep ^summary)
    stop_all
    [[ -n $sum ]] || { echo "attack_limits.sh: no summary from the good client" >&2; exit 1; }
    echo "$round,$mode,$puts,$(kv "$sum" ok),$(kv "$sum" refused),$(kv "$sum" errors),$(kv "$sum" wrong),$(
        )$(kv "$sum" put_p50_ms),$(kv "$sum" put_p99_ms),$(kv "$sum" get_p50_ms),$(kv "$sum" get_p99_ms),$held,-,-,-,$(
        )$(kv "$sum" codes)" >> "$out/$stem.rounds.csv"
    printf "round %d %-15s %s held=%s\n" "$round" "$mode" "${sum#summary }" "$held"
}

# http-none / http-slowloris: GET /metrics every 0.5 s for $http_seconds s
# (each within 5 s), alone or beside 64 connections trickling a byte every 4 s.
round_http() { # ROUND MODE
    local round=$1 mode=$2 t0 t1 end code ms ok failed q cut="-" line
    rm -f "$run/hport"
    start_server --http-port 0 --http-port-file "$run/hport"
    local hport
    hport=$(port_of "$run/hport" "$spid") || { echo "attack_limits.sh: no HTTP port" >&2; exit 1; }
    if [[ $mode == http-slowloris ]]; then
        "$build/bench/numrpc-attacker" --target "127.0.0.1:$hport" --mode httpslow --rate 0.25 --connections 64 \
            --sources 127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5 --reconnect --seconds $((http_seconds + 60)) \
            --report-every 1000 > "$run/attacker.out" 2>&1 &
        pids+=($!)
        wait_line "$run/attacker.out" ready 20 || { cat "$run/attacker.out" >&2; exit 1; }
        sleep 1
    fi
    : > "$run/http.ms"
    end=$(($(now_ms) + http_seconds * 1000))
    while (($(now_ms) < end)); do
        t0=$(now_ms)
        code=$(curl -s -o /dev/null --max-time 5 -w '%{http_code}' "http://127.0.0.1:$hport/metrics" 2>/dev/null)
        t1=$(now_ms)
        [[ $code == 200 ]] && echo $((t1 - t0)) >> "$run/http.ms" || echo failed >> "$run/http.ms"
        sleep 0.5
    done
    if [[ $mode == http-slowloris ]]; then
        kill -TERM "${pids[-1]}" 2>/dev/null
        wait_line "$run/attacker.out" done 15
        line=$(grep "^done " "$run/attacker.out")
        cut=$(kv "$line" closed)
    fi
    stop_all
    failed=$(grep -c failed "$run/http.ms")
    q=$(grep -v failed "$run/http.ms" | quantiles)
    ok=${q%% *}
    q=${q#* }
    echo "$round,$mode,$((ok + failed)),$ok,-,$failed,-,${q% *},${q#* },-,-,$cut,-,-,-,-" >> "$out/$stem.rounds.csv"
    printf "round %d %-15s gets=%d ok=%d failed=%d p50,p99_ms=%s attacker_cut=%s\n" "$round" "$mode" \
        $((ok + failed)) "$ok" "$failed" "$q" "$cut"
}

# forged-reports: a metaserver, a server joined to it; the predicted speed of
# dgemm on it before and after $nreports forged reports from 127.0.0.2.
round_reports() { # ROUND MODE
    local round=$1 mode=$2 mport line
    rm -f "$run/mport"
    "$sbuild/metaserver/numrpc-metaserver" --port 0 --bind 127.0.0.1 --port-file "$run/mport" --quiet \
        > "$run/meta.log" 2>&1 &
    pids+=($!)
    mport=$(port_of "$run/mport" "${pids[-1]}") || { cat "$run/meta.log" >&2; exit 1; }
    start_server --metaserver "127.0.0.1:$mport"
    line=$(timeout 120 "$peer" reports --meta "127.0.0.1:$mport" --server "127.0.0.1:$sport" --routine dgemm \
        --count "$nreports" --from 127.0.0.2 | grep ^reports)
    stop_all
    [[ $line == *ratio=* ]] || { echo "attack_limits.sh: reports: $line" >&2; exit 1; }
    echo "$round,$mode,$nreports,$(kv "$line" sent),-,-,-,-,-,-,-,-,$(kv "$line" before),$(kv "$line" after),$(
        )$(kv "$line" ratio),-" >> "$out/$stem.rounds.csv"
    printf "round %d %-15s %s\n" "$round" "$mode" "${line#reports }"
}

rev=$(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)
srev=$(git -C "$sbuild" describe --always --dirty 2>/dev/null || echo unknown)
[[ $sbuild == "$build" ]] || rev="servers $srev, peers $rev"
stem=attack-limits-$(date +%Y%m%d-%H%M%S)-${srev}${tag:+-$tag}
echo "round,mode,requests,answered,refused,errors,wrong,p50_ms,p99_ms,get_p50_ms,get_p99_ms,attacker,$(
     )speed_before,speed_after,speed_ratio,codes" > "$out/$stem.rounds.csv"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq "$rounds"); do
    for mode in $modes; do
        case $mode in
        handles | handles-none) round_handles "$round" "$mode" ;;
        http-none | http-slowloris) round_http "$round" "$mode" ;;
        forged-reports) round_reports "$round" "$mode" ;;
        *) echo "attack_limits.sh: unknown mode $mode" >&2; exit 2 ;;
        esac
    done
done

# ---- The tables: per mode, sums of counts and medians across rounds [min, max] ----
# table KIND HEADER: the rows of the modes of one kind (handles, http, reports).
table() {
    awk -F, -v kind="$1" 'NR > 1 {
            m = $2; k = m ~ /^handles/ ? "handles" : m ~ /^http/ ? "http" : "reports"
            if (k != kind) next
            if (!(m in n)) order[++nm] = m
            r = ++n[m]; req[m] += $3; ok[m] += $4; refused[m] += $5; errors[m] += $6; wrong[m] += $7
            v["p50", m, r] = $8; v["p99", m, r] = $9; v["gp50", m, r] = $10; v["gp99", m, r] = $11
            v["att", m, r] = $12; v["ratio", m, r] = $15
            if ($16 != "-") { c = split($16, kv, ";"); for (j = 1; j <= c; j++) { split(kv[j], cv, ":"); code[m, cv[1]] += cv[2]; names[cv[1]] = 1 } }
        }
        function med(m, a,   i, j, t, w, c) {
            c = 0
            for (i = 1; i <= n[m]; i++) if (v[a, m, i] != "-" && v[a, m, i] != "") w[++c] = v[a, m, i] + 0
            for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (w[j] < w[i]) { t = w[i]; w[i] = w[j]; w[j] = t }
            if (c == 0) return "-"
            lo = w[1]; hi = w[c]
            return c % 2 ? w[(c + 1) / 2] : (w[c / 2] + w[c / 2 + 1]) / 2
        }
        function cell(m, a,   x) { x = med(m, a); return x == "-" ? "-" : sprintf("%.3g [%.3g, %.3g]", x, lo, hi) }
        function count(m, a,   x) { x = med(m, a); return x == "-" ? "-" : sprintf("%d [%d, %d]", x, lo, hi) }
        function codes_of(m,   c, s) { s = ""; for (c in names) if ((m, c) in code) s = s (s ? " " : "") c ":" code[m, c]; return s ? s : "-" }
        function ratio(m, base,   r, b) { r = med(m, "p99"); b = (base in n) ? med(base, "p99") : "-"
            return (r != "-" && b != "-" && b > 0) ? sprintf("%.2f", r / b) : "-" }
        END {
            for (i = 1; i <= nm; i++) {
                m = order[i]
                if (kind == "handles")
                    printf "| %s | %d | %d | %d | %d | %d | %d | %s | %s | %s | %s | %s | %s | %s |\n", m, n[m], req[m], ok[m],
                        refused[m], errors[m], wrong[m], cell(m, "p50"), cell(m, "p99"), ratio(m, "handles-none"),
                        cell(m, "gp50"), cell(m, "gp99"), count(m, "att"), codes_of(m)
                else if (kind == "http")
                    printf "| %s | %d | %d | %d | %d | %s | %s | %s | %s |\n", m, n[m], req[m], ok[m], errors[m],
                        cell(m, "p50"), cell(m, "p99"), ratio(m, "http-none"), count(m, "att")
                else {
                    mr = med(m, "ratio"); inside = (mr != "-" && lo >= 0.25 * 0.999 && hi <= 4 * 1.001) ? "yes" : "no"
                    printf "| %s | %d | %d | %s | %s |\n", m, n[m], ok[m], cell(m, "ratio"), inside
                }
            }
        }' "$out/$stem.rounds.csv"
}
{
    echo "# Stalled requests, counts and reports beside an attacker ($(date -u +%Y-%m-%dT%H:%MZ), $rev)"
    echo
    echo "\`bench/attack_limits.sh --rounds $rounds --puts $puts --http-seconds $http_seconds --reports $nreports$(
         ) --modes ${modes// /,}\`;"
    echo "servers: $sbuild; load before: $load_before. Per round fresh processes on 127.0.0.1, limits at"
    echo "their defaults; modes interleaved; cells: median of the rounds [min, max]; counts summed."
    echo
    echo "Handles: a server with two tokens that may call; token bob (from 127.0.0.1) makes $puts puts of 16"
    echo "doubles, each read back (checked equal) and freed, alone (handles-none) or after token alice"
    echo "put tiny handles until the server refused one, holding them (handles). Latencies: puts and gets"
    echo "answered; refused = ELIMIT or EBUSY."
    echo
    echo "| mode | rounds | puts | answered | refused | errors | wrong | put p50 ms | put p99 ms | p99 / none | get p50 ms | get p99 ms | alice's handles held | error codes |"
    echo "|---|---:|---:|---:|---:|---:|---:|---|---|---:|---|---|---|---|"
    table handles
    echo
    echo "HTTP port (--http-port, other options at their defaults): \`curl /metrics\` from 127.0.0.1 every"
    echo "0.5 s for $http_seconds s, each within 5 s, alone (http-none) or beside 64 connections from"
    echo "127.0.0.2-5 sending an endless header a byte every 4 s, reopened when cut (numrpc-attacker"
    echo "--mode httpslow). Failed = no 200 within 5 s. Cut = attacker connections the server closed."
    echo
    echo "| mode | rounds | GETs | answered | failed | p50 ms | p99 ms | p99 / none | attacker connections cut |"
    echo "|---|---:|---:|---:|---:|---|---|---:|---|"
    table http
    echo
    echo "Reports: a metaserver and a numrpc-server joined to it (its speed measured at join); $nreports"
    echo "REPORTs from 127.0.0.2 (no token) of dgemm calls of 1e9 flops taking 1e6 s each. Cell: the"
    echo "predicted speed of that server for dgemm at 1e9 flops after the reports / before them (the"
    echo "measured one); window: [1/4, 4]."
    echo
    echo "| mode | rounds | reports sent | predicted / measured after | within [1/4, 4] |"
    echo "|---|---:|---:|---|---|"
    table reports
    echo
    echo "Raw data: \`$stem.rounds.csv\` (one row per round)."
} > "$out/$stem.md"
cat "$out/$stem.md"
