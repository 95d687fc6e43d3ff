#!/usr/bin/env bash
# attack_p99.sh -- good calls' latency beside a hostile peer: a fresh
# numrpc-server per round, numrpc-goodcalls from 127.0.0.1 (checked against
# local BLAS), numrpc-attacker from other loopback addresses; modes in
# interleaved rounds; a table of medians, spreads and the p99 ratio to none
# (TLS modes: to none-tls).  --server-build takes the server from another
# build (an older tree) while the clients and attackers stay BUILD_DIR's.
# usage: attack_p99.sh [--rounds R] [--calls K] [--connections N] [--modes LIST]
#                      [--out DIR] [--server-build DIR] [--tag NAME] [BUILD_DIR]
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/procs.sh"
rounds=5 calls=400 conns=1000 out="" build=${NUMRPC_BUILD:-} sbuild="" tag=""
modes="none silent slow slowhello statuspipe silent-1src slow-1src firstpacket"
while [[ $# -gt 0 ]]; do
    case $1 in
    --rounds) rounds=$2; shift ;;
    --calls) calls=$2; shift ;;
    --connections) conns=$2; shift ;;
    --modes) modes=${2//,/ }; shift ;;
    --out) out=$2; shift ;;
    --server-build) sbuild=$2; shift ;;
    --tag) tag=$2; shift ;;
    -h | --help) sed -n 2,10p "$0"; exit 0 ;;
    *) build=$1 ;;
    esac
    shift
done
attack_dirs || exit 2
for f in bench/numrpc-goodcalls bench/numrpc-attacker bench/numrpc-tls-attacker cli/numrpc $sbuild/server/numrpc-server \
    $sbuild/stubs/.libs/blas.so; do
    [[ $f == /* ]] || f=$build/$f
    [[ -e $f ]] || { echo "attack_p99.sh: $f missing: build first (make)" >&2; exit 2; }
done
export OPENBLAS_NUM_THREADS=1
run=$(mktemp -d /tmp/numrpc-attack-XXXXXX)
server_pid="" goodcalls_pid="" attacker_pid=""
cleanup() {
    stop_pid "$goodcalls_pid"; stop_pid "$attacker_pid"; stop_pid "$server_pid"
    rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# The TLS modes' server certificate, its own CA (127.0.0.1, one day).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$run/key.pem" -out "$run/cert.pem" > /dev/null 2>&1 ||
    { echo "attack_p99.sh: openssl req failed" >&2; exit 2; }
eight=127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5,127.0.0.6,127.0.0.7,127.0.0.8,127.0.0.9
per_peer=no
"$sbuild/server/numrpc-server" --help 2>&1 | grep -q -- "--max-connections-per-peer" && per_peer=yes
budget=20 timeout=5

# The attacker's options for a mode (empty for none).
attack_args() {
    case $1 in
    none) ;;
    silent | slow | slowhello) echo "--mode $1 --connections $conns --sources $eight" ;;
    statuspipe) echo "--mode statuspipe --connections 20 --pipeline 5000 --sources $eight" ;;
    silent-1src) echo "--mode silent --connections $conns --sources 127.0.0.2" ;;
    slow-1src) echo "--mode slow --connections $conns --sources 127.0.0.2" ;;
    # issue 28: a HELLO and the first 4 KiB of a multi-packet CALL, then nothing (40 connections, as found)
    firstpacket) echo "--mode firstpacket --connections 40 --call-n 8192 --sources 127.0.0.2" ;;
    # issue 28, TLS (numrpc-tls-attacker): empty records as fast as one client can send them;
    # 40 connections each with a HELLO, a CALL's first packet, then an empty record every 200 ms
    none-tls) ;;
    emptyrec-dispatcher) echo "--mode flood --connections 1 --sources 127.0.0.2" ;;
    emptyrec-worker) echo "--mode trickle --connections 40 --interval-ms 200 --sources 127.0.0.2" ;;
    *) echo "attack_p99.sh: unknown mode $1" >&2; exit 2 ;;
    esac
}

# Waits (at most $2 s) until FILE has a line starting with WORD; status 1 if not.
wait_line() { # FILE WORD SECONDS
    local i
    for i in $(seq $(($3 * 20))); do
        grep -q "^$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

# TLS modes: the server's certificate options, the clients' CA, the attacker.
is_tls() { [[ $1 == none-tls || $1 == emptyrec-* ]]; }

# Times `numrpc status` every 0.5 s (each within 30 s) while PID lives: one
# line per probe, milliseconds or "failed".
probe_status() { # PORT PID
    local t0 t1
    while kill -0 "$2" 2>/dev/null; do
        t0=$(now_ms)
        if timeout 30 "$build/cli/numrpc" status "127.0.0.1:$1" > /dev/null 2>&1; then
            t1=$(now_ms); echo $((t1 - t0))
        else
            echo failed
        fi
        sleep 0.5
    done
}

# One round of one mode: a row of rounds.csv.
one_round() { # ROUND MODE
    local round=$1 mode=$2 port args status summary attacker_line="-" tls=() attacker=numrpc-attacker
    rm -f "$run/port" "$run/go" "$run/gc.out" "$run/attacker.out"
    if is_tls "$mode"; then
        tls=(--tls-cert "$run/cert.pem" --tls-key "$run/key.pem")
        attacker="numrpc-tls-attacker --ca $run/cert.pem"
        export NUMRPC_TLS_CA=$run/cert.pem
    else
        unset NUMRPC_TLS_CA
    fi
    "$sbuild/server/numrpc-server" "${tls[@]}" --port 0 --bind 127.0.0.1 --port-file "$run/port" \
        --stubs "$sbuild/stubs/.libs" --blas-threads 1 --max-connections 4096 --admin-socket none \
        --quiet > "$run/server.log" 2>&1 &
    server_pid=$!
    port=$(port_of "$run/port" "$server_pid") || { echo "attack_p99.sh: no server" >&2; exit 1; }
    "$build/bench/numrpc-goodcalls" --server "127.0.0.1:$port" --calls "$calls" --procs 4 \
        --timeout $timeout --budget $budget --label "$mode/$round" --csv "$out/$stem.calls.csv" \
        --go-file "$run/go" > "$run/gc.out" 2>&1 &
    goodcalls_pid=$!
    wait_line "$run/gc.out" warm 60 || { cat "$run/gc.out" >&2; exit 1; }
    args=$(attack_args "$mode")
    if [[ -n $args ]]; then
        [[ $attacker == numrpc-attacker ]] && args+=" --reconnect"
        "$build/bench/"$attacker --target "127.0.0.1:$port" $args \
            --seconds $((budget + timeout + 60)) \
            --report-every 1000 > "$run/attacker.out" 2>&1 &
        attacker_pid=$!
        wait_line "$run/attacker.out" ready 20 || { cat "$run/attacker.out" >&2; exit 1; }
        sleep 1 # the server sees them all
    fi
    touch "$run/go"
    probe_status "$port" "$goodcalls_pid" > "$run/status.ms"
    wait "$goodcalls_pid"
    goodcalls_pid=""
    local failed
    failed=$(grep -c failed "$run/status.ms")
    status=$(grep -v failed "$run/status.ms" | sort -n |
             awk -v f="$failed" '{v[NR] = $1} END {if (NR) printf "%s,%s,%d", v[int((NR + 1) / 2)], v[NR], f
                                                   else printf "-,-,%d", f}')
    if [[ -n $attacker_pid ]]; then
        stop_pid "$attacker_pid"
        attacker_pid=""
        attacker_line=$(grep "^done " "$run/attacker.out" | sed 's/^done //')
    fi
    stop_pid "$server_pid"
    server_pid=""
    summary=$(grep "^summary " "$run/gc.out") || { cat "$run/gc.out" >&2; exit 1; }
    echo "$round,$mode,$(echo "$summary" | awk '{for (i = 3; i <= NF; i++) {split($i, kv, "="); printf "%s,", kv[2]}}')$status,\"$attacker_line\"" \
        >> "$out/$stem.rounds.csv"
    printf "round %d %-12s %s status(p50,max,failed)=%s\n" "$round" "$mode" "${summary#summary }" "$status"
}

rev=$(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)
srev=$(git -C "$sbuild" describe --always --dirty 2>/dev/null || echo unknown)
[[ $sbuild == "$build" ]] || rev="server $srev, clients $rev"
stem=attack-p99-$(date +%Y%m%d-%H%M%S)-${srev}${tag:+-$tag}
echo "round,mode,calls,ok,refused,errors,wrong,skipped,p50_ms,p99_ms,fresh,fresh_p50_ms,fresh_max_ms,codes,$(
     )status_p50_ms,status_max_ms,status_failed,attacker_at_end" > "$out/$stem.rounds.csv"
echo "label,proc,routine,n,fresh,code,wrong,seconds" > "$out/$stem.calls.csv"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq "$rounds"); do
    for mode in $modes; do one_round "$round" "$mode"; done
done

# ---- The table: per mode, medians across rounds with [min, max] ----
{
    echo "# Good calls' latency beside an attacker ($(date -u +%Y-%m-%dT%H:%MZ), $rev)"
    echo
    echo "\`bench/attack_p99.sh --rounds $rounds --calls $calls --connections $conns --modes ${modes// /,}\`;"
    echo "server: $sbuild; load before: $load_before."
    echo "Per round: a fresh server (\`--max-connections 4096 --blas-threads 1\`, other limits at their"
    echo "defaults; the server has --max-connections-per-peer: $per_peer, left at its default); 4"
    echo "client processes from 127.0.0.1 make $calls blocking calls in all (dcopy of 16, 4096, 65536"
    echo "doubles, dgemm of order 32 and 96 in turn, each checked against local BLAS; every 10th a new"
    echo "client's: new connection, interface fetched again) with a ${timeout} s time limit, none started"
    echo "after ${budget} s. The attacker (reconnecting) comes from 8 addresses (127.0.0.2-9), or one"
    echo "(-1src); slow = 1 byte/s; statuspipe = 20 connections x 5000 STATUS never read. Latencies"
    echo "are those of right answers (refusals and errors are counted beside them; \"-\": none answered)."
    echo "\`numrpc status\` is timed every 0.5 s during the calls. Cells: median of the rounds [min, max]."
    echo "Issue 28: firstpacket = 40 connections from 127.0.0.2, each a HELLO and the first 4 KiB packet"
    echo "of a CALL, then nothing. TLS modes (server with --tls-cert, clients with NUMRPC_TLS_CA; their"
    echo "ratio is to none-tls): emptyrec-dispatcher = one connection streaming empty TLS records as"
    echo "fast as it can; emptyrec-worker = 40 connections, each a HELLO, a CALL's first packet, then an"
    echo "empty record every 200 ms (numrpc-tls-attacker); both reconnect when cut."
    echo
    echo "| mode | rounds | calls | answered | refused | errors | wrong | p50 ms | p99 ms | p99 / p99 none | new client max ms | status p50 ms | status max ms | status failed | error codes |"
    echo "|---|---:|---:|---:|---:|---:|---:|---|---|---:|---|---|---|---:|---|"
    awk -F, 'NR > 1 {
            m = $2; if (!(m in n)) order[++k] = m
            r = ++n[m]; calls[m] += $3; ok[m] += $4; refused[m] += $5; errors[m] += $6; wrong[m] += $7; sfail[m] += $17
            v["p50", m, r] = $9; v["p99", m, r] = $10; v["fresh", m, r] = $13; v["sp50", m, r] = $15; v["smax", m, r] = $16
            if ($14 != "-") { c = split($14, kv, ";"); for (j = 1; j <= c; j++) { split(kv[j], x, ":"); code[m, x[1]] += x[2]; names[x[1]] = 1 } }
        }
        # The median of column a over the rounds of mode m; lo and hi the spread.
        function med(m, a,   i, j, t, w, c) {
            c = 0
            for (i = 1; i <= n[m]; i++) if (v[a, m, i] != "-") w[++c] = v[a, m, i] + 0
            for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (w[j] < w[i]) { t = w[i]; w[i] = w[j]; w[j] = t }
            if (c == 0) return "-"
            lo = w[1]; hi = w[c]
            return c % 2 ? w[(c + 1) / 2] : (w[c / 2] + w[c / 2 + 1]) / 2
        }
        function cell(m, a,   x) { x = med(m, a); return x == "-" ? "-" : sprintf("%.3g [%.3g, %.3g]", x, lo, hi) }
        function codes_of(m,   c, s) { s = ""; for (c in names) if ((m, c) in code) s = s (s ? " " : "") c ":" code[m, c]; return s ? s : "-" }
        END {
            base = ("none" in n) ? med("none", "p99") : 0
            tbase = ("none-tls" in n) ? med("none-tls", "p99") : 0
            for (i = 1; i <= k; i++) {
                m = order[i]; r = med(m, "p99"); b = (m == "none-tls" || m ~ /^emptyrec-/) ? tbase : base
                printf "| %s | %d | %d | %d | %d | %d | %d | %s | %s | %s | %s | %s | %s | %d | %s |\n", m, n[m], calls[m],
                    ok[m], refused[m], errors[m], wrong[m], cell(m, "p50"), cell(m, "p99"),
                    (b > 0 && r != "-" ? sprintf("%.2f", r / b) : "-"), cell(m, "fresh"), cell(m, "sp50"),
                    cell(m, "smax"), sfail[m], codes_of(m)
            }
        }' "$out/$stem.rounds.csv"
    echo
    echo "Raw data: \`$stem.rounds.csv\` (one row per round, with the attacker's last counts),"
    echo "\`$stem.calls.csv.gz\` (one row per call)."
} > "$out/$stem.md"
gzip -9 "$out/$stem.calls.csv"
cat "$out/$stem.md"
