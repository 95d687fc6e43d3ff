#!/usr/bin/env bash
# ab_quick.sh -- A/B of two revisions on loopback: builds each in a worktree, runs the
# quick transfer benchmark alternately, prints ping and 8 MiB medians, spreads, ratios.
# usage: bench/ab_quick.sh REV_BEFORE REV_AFTER [ROUNDS=3]
#   env AB_CACHE  where builds are kept for reuse, one per commit (default /tmp/numrpc-ab)
#       AB_OUT    keep each run's CSV here (default: a temporary dir, removed)
#       AB_TIMEOUT  seconds one benchmark run may take (default 600)
set -euo pipefail

usage() { sed -n 4,7p "$0" >&2; exit 2; }
[[ $# -ge 2 && $# -le 3 ]] || usage
rounds=${3:-3}
[[ $rounds =~ ^[1-9][0-9]?$ ]] || { echo "ab_quick.sh: ROUNDS is 1..99, not '$rounds'" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${AB_CACHE:-/tmp/numrpc-ab}
run_timeout=${AB_TIMEOUT:-600}
before=$(git -C "$top" rev-parse --verify --quiet "$1^{commit}") ||
    { echo "ab_quick.sh: no revision '$1'" >&2; exit 2; }
after=$(git -C "$top" rev-parse --verify --quiet "$2^{commit}") ||
    { echo "ab_quick.sh: no revision '$2'" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/numrpc-ab-XXXXXX")
out=${AB_OUT:-$tmp/runs}
mkdir -p "$cache" "$out"
cache=$(cd "$cache" && pwd)
worktrees=()
child=
cleanup() {
    # The benchmark and the servers it started share timeout's process group.
    # A benchmark stopped by a signal leaves its stubs dir (links into our builds).
    if [[ -n $child ]]; then
        kill -TERM -- "-$child" 2>/dev/null || kill -TERM "$child" 2>/dev/null || true
        wait "$child" 2>/dev/null || true
        for d in /tmp/numrpc-bench-stubs-*; do
            if [[ -L $d/benchsink.so && $(readlink "$d/benchsink.so") == "$cache"/* ]]; then
                rm -rf "$d"
            fi
        done
    fi
    for wt in "${worktrees[@]+"${worktrees[@]}"}"; do
        if ! git -C "$top" worktree remove --force "$wt" 2>/dev/null; then
            rm -rf "$wt"
            git -C "$top" worktree prune 2>/dev/null || true
        fi
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Runs "$@" bounded by $1 seconds in its own process group; returns its status.
bounded() {
    local limit=$1 rc=0
    shift
    timeout -k 10 "$limit" "$@" &
    child=$!
    # Polled: when a signal's trap runs, $child still names what the cleanup must stop.
    while kill -0 "$child" 2>/dev/null; do sleep 0.2; done
    wait "$child" || rc=$?
    child=
    return "$rc"
}

# The build of commit $1, made once in a worktree and kept in $cache/SHA.
build_of() {
    local sha=$1 dir=$cache/$1
    if [[ -f $dir/ab-built && -x $dir/build/bench/numrpc-bench-transfer ]]; then
        echo "ab_quick.sh: reusing $dir/build" >&2
        echo "$dir/build"
        return 0
    fi
    local wt=$tmp/src-$sha
    git -C "$top" worktree add --detach --quiet "$wt" "$sha"
    worktrees+=("$wt")
    [[ -x $wt/scripts/build.sh ]] || { echo "ab_quick.sh: ${sha:0:12} has no scripts/build.sh" >&2; return 1; }
    rm -rf "$dir"
    mkdir -p "$dir"
    echo "ab_quick.sh: building $(git -C "$top" log -1 --format='%h %s' "$sha" | cut -c1-70)" >&2
    if ! bounded 3600 "$wt/scripts/build.sh" "$dir/build" > "$dir/build.log" 2>&1; then
        echo "ab_quick.sh: the build of ${sha:0:12} failed; the end of $dir/build.log:" >&2
        tail -15 "$dir/build.log" >&2
        return 1
    fi
    touch "$dir/ab-built"
    echo "$dir/build"
}

# Builds first (the functions run in this shell so the cleanup sees their worktrees).
build_of "$before" > "$tmp/before.dir" || exit 1
build_of "$after" > "$tmp/after.dir" || exit 1
build_before=$(cat "$tmp/before.dir")
build_after=$(cat "$tmp/after.dir")

# One quick transfer run of a build into CSV $2: what `numrpc bench --quick` runs first,
# limited to ping and 8 MiB and to numrpc and raw TCP (no baselines, no LAN/WAN).
run_once() {
    local bin=$1/bench/numrpc-bench-transfer
    local args=(--quick --sizes 8,8M --csv "$2")
    "$bin" --help 2>/dev/null | grep -q -- --no-corba && args+=(--no-corba)
    "$bin" --help 2>/dev/null | grep -q -- --no-grpc && args+=(--no-grpc)
    bounded "$run_timeout" "$bin" "${args[@]}" > "${2%.csv}.txt" 2>&1 ||
        { echo "ab_quick.sh: $bin failed; see its output:" >&2; tail -15 "${2%.csv}.txt" >&2; return 1; }
}

for ((r = 1; r <= rounds; r++)); do
    for side in before after; do
        dir=$build_before
        [[ $side == after ]] && dir=$build_after
        echo "ab_quick.sh: round $r of $rounds: $side" >&2
        run_once "$dir" "$out/$side-$r.csv"
    done
done

# Per run and placement: the median over its rounds of each figure; then per
# revision the median and min..max over runs, and after/before of the medians.
awk -F, -v before="${before:0:10}" -v after="${after:0:10}" -v rounds="$rounds" '
function median(list,    n, v, i, j, t) {
    n = split(list, v, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
        t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
    }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function range(list,    n, v, i, lo, hi) {
    n = split(list, v, " "); lo = hi = v[1] + 0
    for (i = 2; i <= n; i++) { if (v[i] + 0 < lo) lo = v[i] + 0; if (v[i] + 0 > hi) hi = v[i] + 0 }
    return sprintf("%.4g..%.4g", lo, hi)
}
FNR == 1 {
    split(FILENAME, parts, "/"); run = parts[length(parts)]; sub(/\.csv$/, "", run)
    side = run; sub(/-.*/, "", side)
    next
}
$5 != 0 { next } # packet sweep rows
{
    metric = ""
    if ($6 == "numrpc-ping" && $4 == 8) { metric = "1 numrpc ping (us)"; scale = 1e6 }
    if ($6 == "numrpc-dcopy" && $4 == 8388608) { metric = "2 numrpc 8 MiB round trip (ms)"; scale = 1e3 }
    if ($6 == "raw-pingpong" && $4 == 8) { metric = "3 raw TCP ping-pong (us, reference)"; scale = 1e6 }
    if ($6 == "raw-tuned" && $4 == 8388608) { metric = "4 raw TCP 8 MiB round trip (ms, reference)"; scale = 1e3 }
    if (metric == "") next
    key = metric SUBSEP $1
    per_run[key, run] = per_run[key, run] " " $9 * scale
    runs_of[key, side] = runs_of[key, side] " " run
    keys[key] = 1
}
END {
    printf "ab_quick: before %s, after %s; %d alternating runs each of numrpc-bench-transfer --quick on loopback\n", before, after, rounds
    printf "(each run: the median of its 5 rounds; here the median of the runs [min..max of the runs])\n\n"
    printf "%-42s %-15s %24s %24s %12s\n", "figure", "placement", "before", "after", "after/before"
    n = 0
    for (key in keys) sorted[++n] = key
    for (i = 2; i <= n; i++) for (j = i; j > 1 && sorted[j - 1] > sorted[j]; j--) {
        t = sorted[j]; sorted[j] = sorted[j - 1]; sorted[j - 1] = t
    }
    for (i = 1; i <= n; i++) {
        split(sorted[i], kp, SUBSEP)
        for (s = 1; s <= 2; s++) {
            sd = s == 1 ? "before" : "after"
            vals = ""
            m = split(runs_of[sorted[i], sd], rl, " ")
            for (k = 1; k <= m; k++) if (!seen[sorted[i], rl[k]]++) vals = vals " " median(per_run[sorted[i], rl[k]])
            med[sd] = vals == "" ? "" : median(vals)
            cell[sd] = vals == "" ? "-" : sprintf("%.4g [%s]", med[sd], range(vals))
        }
        ratio = med["before"] != "" && med["after"] != "" && med["before"] > 0 ? sprintf("%.3f", med["after"] / med["before"]) : "-"
        printf "%-42s %-15s %24s %24s %12s\n", substr(kp[1], 3), kp[2], cell["before"], cell["after"], ratio
    }
}' "$out"/before-*.csv "$out"/after-*.csv
[[ -n ${AB_OUT:-} ]] && echo "ab_quick.sh: per-run CSVs and logs in $out" >&2
exit 0
