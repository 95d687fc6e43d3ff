#!/usr/bin/env bash
# bench_quick_test.sh -- numrpc-bench-transfer --quick on loopback: every
# system's data comes back intact (the program checks and exits non-zero if
# not) and the CSV has rows for every system.  No time is asserted.
set -euo pipefail
: "${TOP_BUILDDIR:?}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$TOP_BUILDDIR/bench/numrpc-bench-transfer" --quick --sizes 8,64K,1M --rounds 5 \
    --csv "$out/t.csv" > "$out/t.txt"
head -1 "$out/t.csv" | grep -q "^placement,client_cpu,server_cpu,bytes_each_way"
want="raw-tuned raw-naive numrpc-dcopy raw-pingpong numrpc-ping"
[[ -x "$TOP_BUILDDIR/apps/corba/numrpc-corba-server" ]] && want="$want omniorb-dcopy omniorb-ping"
[[ -x "$TOP_BUILDDIR/bench/numrpc-grpc-server" ]] && want="$want grpc-dcopy grpc-ping"
for sys in $want; do
    grep -q ",$sys," "$out/t.csv" || { echo "no rows for $sys"; cat "$out/t.txt"; exit 1; }
done
grep -q "linear model" "$out/t.txt"
echo "bench_quick_test: 1 passed, 0 failed"
