#!/usr/bin/env bash
# call_path_ab.sh -- issue 29's figures: one revision against another on loopback,
# interleaved: null call and 8 MiB (bench/ab_quick.sh), then async pings and a farm.
# usage: bench/call_path_ab.sh REV_BEFORE REV_AFTER [ROUNDS=5]
#   both revisions are built once in AB_CACHE (default /tmp/numrpc-ab) by ab_quick.sh;
#   then, alternating revisions round by round, bench/async.sh --quick runs each
#   build's client against its own servers: pings on one vCPU and across two
#   (blocking and async, us per call), a dgemm farm over two servers (seconds).
#   env CALLPATH_ASYNC_ONLY=1  skips the ab_quick.sh part (both builds must be cached)
set -euo pipefail
[[ $# -ge 2 && $# -le 3 ]] || { sed -n 4,9p "$0" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
rounds=${3:-5}
[[ $rounds =~ ^[1-9][0-9]?$ ]] || { echo "call_path_ab.sh: ROUNDS is 1..99" >&2; exit 2; }
export AB_CACHE=${AB_CACHE:-/tmp/numrpc-ab}
sha() { git -C "$top" rev-parse --verify --quiet "$1^{commit}" || { echo "call_path_ab.sh: no revision '$1'" >&2; exit 2; }; }
before=$(sha "$1")
after=$(sha "$2")

if [[ -z ${CALLPATH_ASYNC_ONLY:-} ]]; then
    echo "== null call and 8 MiB, numrpc-bench-transfer --quick (bench/ab_quick.sh $1 $2 $rounds):"
    "$top/bench/ab_quick.sh" "$before" "$after" "$rounds"
fi
declare -A dir=([before]=$AB_CACHE/$before/build [after]=$AB_CACHE/$after/build)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/numrpc-callpath-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for r in $(seq "$rounds"); do
    for side in before after; do
        echo "call_path_ab.sh: round $r of $rounds: $side" >&2
        timeout 600 sh "$top/bench/async.sh" --quick "${dir[$side]}" > "$tmp/$side.$r.txt" 2>&1 ||
            { echo "call_path_ab.sh: async.sh failed:" >&2; tail -5 "$tmp/$side.$r.txt" >&2; exit 1; }
    done
done

echo
echo "== asynchronous calls, bench/async.sh --quick, $rounds alternating runs per revision"
echo "   (each run: the median of its 3 rounds; here the median of the runs [min..max])"
awk -v before="${before:0:10}" -v after="${after:0:10}" '
function median(list,    n, v, i, j, t) {
    n = split(list, v, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function range(list,    n, v, i, lo, hi) {
    n = split(list, v, " "); lo = hi = v[1] + 0
    for (i = 2; i <= n; i++) { if (v[i] + 0 < lo) lo = v[i] + 0; if (v[i] + 0 > hi) hi = v[i] + 0 }
    return sprintf("%.4g..%.4g", lo, hi)
}
function add(name, value) { vals[name, side] = vals[name, side] " " value; names[name] = 1 }
FNR == 1 { side = FILENAME; sub(/.*\//, "", side); sub(/\..*/, "", side) }
/^## pings, client and server on vCPU 0/ { where = "one vCPU" }
/^## pings, client on vCPU 1/ { where = "two vCPUs" }
/^pings:/ {
    for (i = 1; i <= NF; i++) {
        if ($i == "blocking") add("1 blocking ping, " where " (us)", $(i + 1))
        if ($i == "async" && $(i + 1) ~ /^[0-9.]+$/) add("2 async ping, " where " (us)", $(i + 1))
    }
}
/^async return:/ { for (i = 1; i <= NF; i++) if ($i == "us") add("3 async dgemm n=1200 returns (us)", $(i - 1)) }
/^farm:/ {
    for (i = 1; i <= NF; i++) {
        if ($i == "server") add("4 farm, 1 server (s)", $(i + 1))
        if ($i == "servers") add("5 farm, 2 servers (s)", $(i + 1))
    }
}
END {
    printf "before %s, after %s\n\n%-40s %22s %22s %12s\n", before, after, "figure", "before", "after", "after/before"
    n = 0
    for (k in names) sorted[++n] = k
    for (i = 2; i <= n; i++) for (j = i; j > 1 && sorted[j - 1] > sorted[j]; j--) { t = sorted[j]; sorted[j] = sorted[j - 1]; sorted[j - 1] = t }
    for (i = 1; i <= n; i++) {
        k = sorted[i]
        b = median(vals[k, "before"]); a = median(vals[k, "after"])
        printf "%-40s %22s %22s %12s\n", substr(k, 3), sprintf("%.4g [%s]", b, range(vals[k, "before"])),
            sprintf("%.4g [%s]", a, range(vals[k, "after"])), (b > 0 ? sprintf("%.3f", a / b) : "-")
    }
}' "$tmp"/before.*.txt "$tmp"/after.*.txt
