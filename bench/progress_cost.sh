#!/usr/bin/env bash
# progress_cost.sh -- what PROGRESS frames at 0.1 s cost a long call: the same
# dgemm (about 2 s) with and without a handler, interleaved rounds, medians and spread.
# usage: bench/progress_cost.sh [ROUNDS=7] [N=3600]   (after ./scripts/build.sh build)
#   env BUILD  the build directory (default build/)
set -euo pipefail
rounds=${1:-7}
n=${2:-3600}
[[ $rounds =~ ^[1-9][0-9]?$ && $n =~ ^[1-9][0-9]{1,4}$ ]] || { sed -n 4,5p "$0" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/numrpc-progress-XXXXXX")
server=
cleanup() {
    [[ -n $server ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

cat >"$tmp/cost.c" <<'C'
/* Rounds of one dgemm with a progress handler (0.1 s) and one without,
 * in alternating order; prints each call's total seconds. */
#include <stdio.h>
#include <stdlib.h>
#include "numrpc.h"
static int frames;
static void on_frame(const numrpc_progress *p, void *arg) { (void)p; (void)arg; frames++; }
int main(int argc, char **argv)
{
    int rounds = atoi(argv[1]), n = atoi(argv[2]);
    double *a = malloc(sizeof *a * n * n), *b = malloc(sizeof *b * n * n), *c = malloc(sizeof *c * n * n);
    if (!a || !b || !c) return 1;
    for (long i = 0; i < (long)n * n; i++) { a[i] = (i % 13) * 0.1; b[i] = (i % 7) * 0.2; }
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < 2; k++) {
            int with = (k + r) % 2;
            numrpc_set_progress(with ? on_frame : NULL, NULL, 0.1);
            frames = 0;
            if (numrpc_call("dgemm", 'N', 'N', n, n, n, 1.0, a, n, b, n, 0.0, c, n) != NUMRPC_OK) {
                fprintf(stderr, "dgemm: %s\n", numrpc_last_error_detail());
                return 1;
            }
            numrpc_call_info info;
            numrpc_last_call_info(&info);
            printf("%s %.4f %d\n", with ? "with" : "without", info.total_seconds, frames);
        }
    return 0;
}
C
cc -O2 -I"$top/include" "$tmp/cost.c" -o "$tmp/cost" -L"$build/client/.libs" -lnumrpc -Wl,-rpath,"$build/client/.libs"

"$build/server/numrpc-server" --port 0 --bind 127.0.0.1 --stubs "$build/stubs/.libs" --port-file "$tmp/port" \
    --quiet --workers 1 --blas-threads 1 --admin-socket none &
server=$!
for _ in $(seq 100); do [[ -s $tmp/port ]] && break; sleep 0.1; done
[[ -s $tmp/port ]] || { echo "progress_cost.sh: the server did not start" >&2; exit 1; }
NUMRPC_SERVER=127.0.0.1:$(cat "$tmp/port") "$tmp/cost" "$rounds" "$n" >"$tmp/runs"

# Median and spread (min, max) of each kind, and the difference of medians.
python3 - "$tmp/runs" "$n" "$rounds" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
t = {k: sorted(float(r[1]) for r in rows if r[0] == k) for k in ("without", "with")}
frames = statistics.median(int(r[2]) for r in rows if r[0] == "with")
m0, m1 = statistics.median(t["without"]), statistics.median(t["with"])
print(f"dgemm n={sys.argv[2]}, {sys.argv[3]} interleaved rounds, handler at 0.1 s ({frames:.0f} frames a call)")
print("| calls | median s | min s | max s |")
print("| --- | --- | --- | --- |")
for k in ("without", "with"):
    print(f"| {k} a handler | {statistics.median(t[k]):.3f} | {t[k][0]:.3f} | {t[k][-1]:.3f} |")
print(f"cost of progress: {100 * (m1 - m0) / m0:+.2f} % of the call (medians), "
      f"{100 * (t['with'][0] - t['without'][0]) / t['without'][0]:+.2f} % (fastest calls)")
PY
