#!/usr/bin/env bash
# seeds_test.sh -- numrpc-bench-seeds, small: the LSB and PVM ring runs execute
# (data checked by the program), both tables print finite positive figures, the
# ring's fit gives positive r_max and t0, the CSV has every row.  No time asserted.
set -euo pipefail
: "${TOP_BUILDDIR:?}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$TOP_BUILDDIR/bench/numrpc-bench-seeds" --quick --rounds 3 --null-count 50 --lsb-sizes 1K,16K \
    --lsb-bytes 65536 --ring-sizes 8,1M,8M --csv "$out/s.csv" --markdown "$out/s.md" \
    > "$out/s.txt" 2> "$out/s.err" || { cat "$out/s.txt" "$out/s.err"; exit 1; }
fail() { echo "seeds_test: $*"; cat "$out/s.txt"; exit 1; }
for f in "$out/s.txt" "$out/s.md"; do
    grep -q "^### LSB (TR-97-06): null latency" "$f" || fail "no LSB latency table in $f"
    grep -q "^### PVM's ring" "$f" || fail "no ring table in $f"
done
! grep -Eiq "nan|inf|not run|no fit" "$out/s.md" || fail "a cell without a figure"
# LSB latency: numrpc's and raw TCP's cells (columns 6 and 7) are positive.
n=$(awk -F'|' '/^\| (one|two)-way \|/ && $6 + 0 > 0 && $7 + 0 > 0' "$out/s.md" | wc -l)
[[ $n == 2 ]] || fail "$n latency rows with positive figures, want 2"
# LSB throughput: 3 modes x 2 sizes, numrpc and raw Mbit/s (columns 4, 5) positive.
n=$(awk -F'|' '/^\| [0-9]+ KiB \| / && $4 + 0 > 0 && $5 + 0 > 0' "$out/s.md" | wc -l)
[[ $n == 6 ]] || fail "$n throughput rows with positive figures, want 6"
# The ring's fit, numrpc and raw: r_max (column 4) and t0 (column 7) positive.
n=$(awk -F'|' '/\(this run\)/ && $4 + 0 > 0 && $7 + 0 > 0' "$out/s.md" | wc -l)
[[ $n == 2 ]] || fail "$n ring fits with positive r_max and t0, want 2"
n=$(awk -F'|' '/^\| [0-9]+ (B|KiB) \| [0-9.]+ (µs|ms)/' "$out/s.md" | wc -l)
[[ $n == 3 ]] || fail "$n hop rows, want 3"
# The CSV: every figure finite and positive, every series there.
head -1 "$out/s.csv" | grep -q "^experiment,system,mode,bytes,round,seconds_per_op,ops_per_round$"
bad=$(awk -F, 'NR > 1 && !($6 + 0 > 0 && $6 !~ /nan|inf/)' "$out/s.csv" | wc -l)
[[ $bad == 0 ]] || fail "$bad CSV rows without a positive time"
for want in "lsb-null 12" "lsb-throughput 36" "ring-hop 18" "ring-stay 9"; do
    set -- $want
    n=$(grep -c "^$1," "$out/s.csv" || true)
    [[ $n == "$2" ]] || fail "$n $1 rows, want $2"
done
echo "seeds_test: 1 passed, 0 failed"
