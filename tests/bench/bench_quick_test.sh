#!/usr/bin/env bash
# bench_quick_test.sh -- numrpc-bench-transfer --quick on loopback: every
# system's data comes back intact, round trip and one-way (the program checks
# echoes and acknowledgements and exits non-zero if not), the CSV has rows for
# every system, and a small buffer sweep has a row for every packet x socket
# buffer x TCP_NODELAY.  No time is asserted.
set -euo pipefail
: "${TOP_BUILDDIR:?}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$TOP_BUILDDIR/bench/numrpc-bench-transfer" --quick --sizes 8,64K,1M --rounds 5 \
    --csv "$out/t.csv" > "$out/t.txt"
head -1 "$out/t.csv" | grep -q "^placement,client_cpu,server_cpu,bytes_each_way"
want="raw-tuned raw-naive numrpc-dcopy raw-pingpong numrpc-ping raw-sink numrpc-sink"
[[ -x "$TOP_BUILDDIR/apps/corba/numrpc-corba-server" ]] && want="$want omniorb-dcopy omniorb-ping omniorb-sink"
[[ -x "$TOP_BUILDDIR/bench/numrpc-grpc-server" ]] && want="$want grpc-dcopy grpc-ping grpc-sink"
for sys in $want; do
    grep -q ",$sys," "$out/t.csv" || { echo "no rows for $sys"; cat "$out/t.txt"; exit 1; }
done
grep -q "linear model" "$out/t.txt"
grep -q "one-way bulk" "$out/t.txt"
# The buffer sweep: 2 packet sizes x 2 buffers x NODELAY on/off, 2 rounds.
"$TOP_BUILDDIR/bench/numrpc-bench-transfer" --placement different --buffer-sweep \
    --sweep-bytes 256K --sweep-packets 4K,64K --sweep-bufs 0,64K --rounds 2 --reps 1 \
    --sweep-csv "$out/s.csv" > "$out/s.txt" 2>&1 || { cat "$out/s.txt"; exit 1; }
head -1 "$out/s.csv" | grep -q "^link,placement,bytes_each_way,packet,sockbuf,nodelay"
for p in 4096 65536; do
    for b in 0 65536; do
        for nd in 0 1; do
            n=$(grep -c "^loopback,[a-z-]*,262144,$p,$b,$nd,numrpc-dcopy," "$out/s.csv" || true)
            [[ $n == 2 ]] || { echo "sweep: $n rows for packet $p buffer $b nodelay $nd"; exit 1; }
        done
    done
done
echo "bench_quick_test: 1 passed, 0 failed"
