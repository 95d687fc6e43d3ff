# servers.sh -- what the figure scripts share (sourced, bash): a scratch
# directory removed at exit with every server they started, and numrpc-server
# on a free port of 127.0.0.1.  The caller sets build (the build directory).

# bench_setup NAME: makes $tmp, removed at exit with the servers in pids.
bench_setup() {
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/numrpc-$1-XXXXXX")
    pids=()
    trap bench_cleanup EXIT
}

bench_cleanup() {
    for p in "${pids[@]+"${pids[@]}"}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}

# The machine and its load, as each figure run's first line.
bench_machine() {
    echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
}

# bench_server NAME ARGS...: numrpc-server with ARGS on 127.0.0.1, its port
# in $tmp/NAME.port once it listens (within 10 s, else exit 1).
# bench_server_on CPU NAME ARGS...: the same, pinned to CPU.
bench_server() {
    bench_server_on "" "$@"
}

bench_server_on() {
    local cpu=$1 name=$2
    shift 2
    local pin=()
    [[ -n $cpu ]] && pin=(taskset -c "$cpu")
    "${pin[@]+"${pin[@]}"}" "$build/server/numrpc-server" --bind 127.0.0.1 --port 0 --port-file "$tmp/$name.port" \
        --quiet --stubs "$build/stubs/.libs" --admin-socket none "$@" >/dev/null &
    pids+=($!)
    for _ in $(seq 100); do [[ -s $tmp/$name.port ]] && return 0; sleep 0.1; done
    echo "$(basename "$0"): server $name did not start" >&2
    exit 1
}
