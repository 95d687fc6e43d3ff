# procs.sh -- sourced by the attack scripts and soak.sh: start a numrpc process
# on a free port and wait for it, stop it by pid (bounded), RSS, quantiles.

# The attack scripts' directories, made absolute: build (the clients'; default
# $here/../build), sbuild (the servers'; default build's) and out (default
# $here/results-attack, made).  Status 1 when one does not exist.
attack_dirs() {
    [[ -n $build ]] || build=$here/../build
    build=$(cd "$build" && pwd) || return 1
    [[ -n $sbuild ]] || sbuild=$build
    sbuild=$(cd "$sbuild" && pwd) || return 1
    [[ -n $out ]] || out=$here/results-attack
    mkdir -p "$out" && out=$(cd "$out" && pwd)
}

# The port a process wrote to FILE (within 20 s, and while PID, if given,
# lives), or nothing (status 1).
port_of() {
    local i
    for i in $(seq 400); do
        [[ -s $1 ]] && { cat "$1"; return 0; }
        [[ -n ${2:-} ]] && ! kill -0 "$2" 2>/dev/null && return 1
        sleep 0.05
    done
    return 1
}

# SIGTERM to PID, SIGKILL after 10 s; waits for it (our child) in any case.
stop_pid() {
    local pid=$1 i
    [[ -n $pid ]] || return 0
    kill "$pid" 2>/dev/null || return 0
    for i in $(seq 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    return 0
}

# VmRSS of PID in KiB (0 when it is gone).
rss_kb() {
    awk '/^VmRSS:/ {print $2; f = 1} END {if (!f) print 0}' "/proc/$1/status" 2>/dev/null || echo 0
}

# The children of PID (a server's workers and its metaserver link).
children_of() {
    cat "/proc/$1/task/$1/children" 2>/dev/null
}

# Reads numbers (one a line) on stdin: "count p50 p99" (nearest rank), or
# "0 - -" when there are none.
quantiles() {
    sort -g | awk '{v[NR] = $1}
        function q(p,  r) { r = int(p * NR + 0.999999); if (r < 1) r = 1; return v[r] }
        END { if (NR == 0) print "0 - -"; else printf "%d %.3f %.3f\n", NR, q(0.5), q(0.99) }'
}

# Milliseconds since the epoch (the clock soak clients stamp their calls with).
now_ms() {
    date +%s%3N
}
