#!/usr/bin/env bash
# soak.sh -- issue 14's soak: 32 clients make mixed calls for --seconds (600)
# against 2 servers behind the metaserver, while a module is re-registered
# every 10 s, one server is SIGKILLed and restarted, and an attacker holds slow
# and silent connections in two windows.  Table: calls, errors by cause,
# latency of good calls with and without the attacker, RSS at start and end.
# usage: soak.sh [--seconds S] [--clients N] [--attack-connections N]
#                [--think-ms M] [--call-timeout S] [--out DIR] [--keep] [BUILD_DIR]
# Exit 0 when no answer was wrong and no call was lost (none past its time
# limit + 5 s, none past the clients' watchdog); the figures are printed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/procs.sh"
seconds=600 clients=32 attack=1000 think=50 limit=20 out="" keep="" build=${NUMRPC_BUILD:-}
while [[ $# -gt 0 ]]; do
    case $1 in
    --seconds) seconds=$2; shift ;;
    --clients) clients=$2; shift ;;
    --attack-connections) attack=$2; shift ;;
    --think-ms) think=$2; shift ;;
    --call-timeout) limit=$2; shift ;;
    --out) out=$2; shift ;;
    --keep) keep=1 ;;
    -h | --help) sed -n 2,11p "$0"; exit 0 ;;
    *) build=$1 ;;
    esac
    shift
done
[[ -n $build ]] || build=$here/../build
build=$(cd "$build" && pwd) || exit 2
[[ -n $out ]] || out=$here/results-soak
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
(( seconds >= 30 )) || { echo "soak.sh: --seconds must be at least 30" >&2; exit 2; }
mods=$build/tests/server/.libs
if [[ ! -e $mods/faults.so || ! -e $mods/live1.so || ! -e $mods/live2.so ]]; then
    make -s -C "$build/tests" server/faults.la server/live1.la server/live2.la >/dev/null || exit 2
fi
for f in bench/numrpc-soak-client bench/numrpc-attacker server/numrpc-server metaserver/numrpc-metaserver \
         cli/numrpc stubs/.libs/blas.so; do
    [[ -e $build/$f ]] || { echo "soak.sh: $build/$f missing: build first (make)" >&2; exit 2; }
done

run=$(mktemp -d /tmp/numrpc-soak-XXXXXX)
meta_pid="" a_pid="" b_pid="" attacker_pid="" client_pids=()
cleanup() {
    local p
    for p in "${client_pids[@]}"; do kill -9 "$p" 2>/dev/null; done
    stop_pid "$attacker_pid"; stop_pid "$a_pid"; stop_pid "$b_pid"; stop_pid "$meta_pid"
    if [[ -n $keep ]]; then echo "soak.sh: raw data kept in $run"; else rm -rf "$run"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
events=$run/events
event() { echo "$(now_ms) $*" >> "$events"; }

# ---- The metaserver and two servers serving BLAS and the fault routines ----
mkdir -p "$run/stubs"
ln -s "$build/stubs/.libs/blas.so" "$mods/faults.so" "$run/stubs/"
"$build/metaserver/numrpc-metaserver" --bind 127.0.0.1 --port 0 --port-file "$run/meta.port" \
    --lease-ms 500 --drop-after 2 --quiet > "$run/meta.log" 2>&1 &
meta_pid=$!
meta=127.0.0.1:$(port_of "$run/meta.port" "$meta_pid") || { echo "soak.sh: no metaserver" >&2; exit 1; }
server_args=(--bind 127.0.0.1 --stubs "$run/stubs" --blas-threads 1 --workers 4 --max-connections 4096
             --quiet --metaserver "$meta")
start_server() { # NAME PORT: starts it, sets ${NAME}_pid and ${NAME}_port
    local name=$1 port=$2 pid
    rm -f "$run/$name.port"
    # crash() raises SIGSEGV in a worker on purpose: not a report (in an ASan build)
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0 \
        "$build/server/numrpc-server" "${server_args[@]}" --port "$port" --port-file "$run/$name.port" \
        --admin-socket "$run/$name.sock" --module-dir "$run/$name-modules" >> "$run/$name.log" 2>&1 &
    pid=$!
    printf -v "${name}_pid" %s "$pid"
    printf -v "${name}_port" %s "$(port_of "$run/$name.port" "$pid")"
}
a_port=0 b_port=0
start_server a 0
start_server b 0
[[ $a_port -gt 0 && $b_port -gt 0 ]] || { echo "soak.sh: a server did not start" >&2; exit 1; }
for _ in $(seq 300); do # each measures its speed before it joins
    # Each server's line of the table (a server shows up again under IDENTITY).
    listed=$("$build/cli/numrpc" status --metaserver "$meta" 2>/dev/null |
             grep -o -E "^127\.0\.0\.1:($a_port|$b_port) " | sort -u | wc -l)
    [[ $listed == 2 ]] && break
    sleep 0.1
done
[[ $listed == 2 ]] || { echo "soak.sh: the servers did not join the metaserver" >&2; exit 1; }

live_version=1
register_live() { # on every server that is up; alternates live1/live2
    local name
    for name in a b; do
        [[ -S $run/$name.sock ]] || continue
        "$build/server/numrpc-server" admin --socket "$run/$name.sock" register "$mods/live$live_version.so" \
            >> "$run/admin.log" 2>&1 || event "register_failed $name"
    done
    live_version=$((3 - live_version))
}
register_live
for _ in $(seq 300); do # the servers tell the metaserver of it in their own time
    "$build/cli/numrpc" status --metaserver "$meta" 2>/dev/null |
        grep -E "^ +live_version " | grep ":$a_port" | grep -q ":$b_port" && break
    sleep 0.1
done

rss_snapshot() { # PHASE: one line per process: phase role pid kib [processes]
    local phase=$1 c kids kb n i=0
    {
        echo "$phase metaserver $meta_pid $(rss_kb "$meta_pid")"
        for c in a b; do
            local pid_var=${c}_pid
            echo "$phase server-$c ${!pid_var} $(rss_kb "${!pid_var}")"
            kb=0 n=0
            for kids in $(children_of "${!pid_var}"); do kb=$((kb + $(rss_kb "$kids"))); n=$((n + 1)); done
            echo "$phase server-$c-children - $kb $n"
        done
        [[ -n $attacker_pid ]] && echo "$phase attacker $attacker_pid $(rss_kb "$attacker_pid")"
        for c in "${client_pids[@]}"; do echo "$phase client-$i $c $(rss_kb "$c")"; i=$((i + 1)); done
    } >> "$run/rss"
}

# ---- The clients and the timeline ----
export NUMRPC_METASERVER=$meta OPENBLAS_NUM_THREADS=1
unset NUMRPC_SERVER
t0=$(now_ms)
event start
for i in $(seq 0 $((clients - 1))); do
    "$build/bench/numrpc-soak-client" --client "$i" --seconds "$seconds" --think-ms "$think" \
        --call-timeout "$limit" --watchdog $((limit + 40)) --records "$run/client-$i.rec" \
        2> "$run/client-$i.err" &
    client_pids+=($!)
done
at() { echo $((t0 + $1 * seconds * 10)); } # at PERCENT: ms since the epoch
warm=$(at 10) a1=$(at 20) a1_end=$(at 40) kill_at=$(at 55) b_warm=$(at 65) a2=$(at 70) a2_end=$(at 85)
end_rss=$((t0 + seconds * 1000 - (seconds > 100 ? seconds * 30 : 3000)))
next_register=$((t0 + 10000))
start_attacker() { # until END_MS
    "$build/bench/numrpc-attacker" --target "127.0.0.1:$a_port,127.0.0.1:$b_port" --connections "$attack" \
        --mode slow,silent --sources 127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5 --reconnect \
        --seconds $((($1 - $(now_ms)) / 1000)) --report-every 10 >> "$run/attacker.log" 2>&1 &
    attacker_pid=$!
    event "attack_start $attacker_pid"
}
done_events=""
due() { [[ " $done_events " != *" $1 "* && $(now_ms) -ge $2 ]] && done_events+=" $1"; }
clients_left() {
    local p n=0
    for p in "${client_pids[@]}"; do kill -0 "$p" 2>/dev/null && n=$((n + 1)); done
    echo $n
}
hard_end=$((t0 + (seconds + limit + 70) * 1000)) # the clients' watchdog and some
while [[ $(clients_left) -gt 0 && $(now_ms) -lt $hard_end ]]; do
    now=$(now_ms)
    if (( now >= next_register )); then register_live; next_register=$((next_register + 10000)); fi
    due warm "$warm" && { event warm; rss_snapshot start; }
    due a1 "$a1" && start_attacker "$a1_end"
    due a2 "$a2" && start_attacker "$a2_end"
    if [[ -n $attacker_pid ]] && ! kill -0 "$attacker_pid" 2>/dev/null; then
        wait "$attacker_pid"; event attack_end; attacker_pid=""
    fi
    if due kill "$kill_at"; then
        kill -9 "$b_pid"; wait "$b_pid" 2>/dev/null; event "killed b $b_pid"
        for _ in $(seq 50); do # its workers die with it and free the port
            start_server b "$b_port"
            [[ -s $run/b.port ]] && break
            sleep 0.2
        done
        event "restarted b $b_pid"
    fi
    due b_warm "$b_warm" && rss_snapshot b-start
    due end_rss "$end_rss" && rss_snapshot end
    sleep 0.2
done
for p in "${client_pids[@]}"; do # past the bound: killed, their call lost
    if kill -0 "$p" 2>/dev/null; then kill -9 "$p"; event "client_killed $p"; fi
    wait "$p" 2>/dev/null
done
client_pids=()
for p in "$meta_pid" "$a_pid" "$b_pid"; do kill -0 "$p" 2>/dev/null || event "died $p"; done
event stop
stop_pid "$attacker_pid"; attacker_pid=""

# ---- The table ----
rev=$(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)
table=$out/soak-$(date +%Y%m%d-%H%M%S).md
source "$here/soak_report.sh"
soak_report > "$table"
cp "$run/events" "${table%.md}.events"
cp "$run/rss" "${table%.md}.rss"
cat "$table"
grep -q "^VERDICT: pass" "$table"
