#!/usr/bin/env bash
# linpack_modes_test.sh -- numrpc-linpack --mode all against a live server: every
# mode solves (small residuals) and the bytes show where the matrix crossed.
set -euo pipefail
: "${TOP_BUILDDIR:?}"
tmp=$(mktemp -d)
server=
trap '[[ -n "$server" ]] && kill "$server" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { cat "$tmp/out" 2>/dev/null; echo "FAIL: $1"; exit 1; }

"$TOP_BUILDDIR/server/numrpc-server" --bind 127.0.0.1 --port 0 --port-file "$tmp/port" \
    --stubs "$TOP_BUILDDIR/stubs/.libs" --blas-threads 1 --workers 2 --admin-socket none --quiet >/dev/null &
server=$!
for _ in $(seq 200); do [[ -s "$tmp/port" ]] && break; sleep 0.05; done
[[ -s "$tmp/port" ]] || fail "the server did not start"
export NUMRPC_SERVER="127.0.0.1:$(cat "$tmp/port")" OPENBLAS_NUM_THREADS=1

n=150 k=4
timeout 120 "$TOP_BUILDDIR/apps/linpack/numrpc-linpack" --sizes $n --mode all --rhs $k --repeat 1 \
    --csv "$tmp/l.csv" >"$tmp/out" 2>&1 || fail "numrpc-linpack --mode all exited $?"
grep -qE "^ *$n +$k " "$tmp/out" || fail "no multi-solve table row for n=$n K=$k"

# check MODE LOW HIGH: the mode's row exists, both residuals are at most 10,
# and its bytes on the wire are in [LOW, HIGH).
check() {
    awk -F, -v mode="$1" -v low="$2" -v high="$3" -v k="$k" '
        $2 == mode { rows++
            if (!($13 != "" && $13 + 0 <= 10 && $14 != "" && $14 + 0 <= 10)) bad = "residuals " $13 ", " $14
            if (!($12 + 0 >= low && $12 + 0 < high)) bad = bad " bytes " $12 " not in [" low ", " high ")"
            if (mode == "multisolve" && !($17 == k && $18 > 0 && $19 > 0 && $20 > 0))
                bad = bad " multi-solve figures rhs=" $17 " solve_s=" $18 " linpacks_s=" $19 " transfer_s=" $20
        }
        END { if (rows != 1) { print mode ": " rows + 0 " rows"; exit 1 } if (bad) { print mode ":" bad; exit 1 } }
    ' "$tmp/l.csv" || fail "$1"
}
matrix=$((8 * n * n))
# The one-call linpack ships A out once (x comes back); dgefa + dgesl ship it
# out, back and out again.
check linpack $matrix $((matrix + 24 * n + 4096))
check dgefa+dgesl $((3 * matrix)) $((3 * matrix + 8192))
# Through a handle A crosses once: the put; then pivots and b (put, dgefa,
# dgesl, free: 4 calls' framing).
check handles $matrix $((matrix + 24 * n + 4096))
check multisolve $matrix $((matrix + 4 * n + 20 * k * n + 4096 + 1024 * k))

if "$TOP_BUILDDIR/apps/linpack/numrpc-linpack" --mode handles,nosuch --sizes 10 >/dev/null 2>"$tmp/err"; then
    fail "an unknown mode was accepted"
fi
grep -q "bad --mode 'handles,nosuch'" "$tmp/err" || fail "the unknown mode's message: $(cat "$tmp/err")"
echo "linpack_modes_test: 1 passed, 0 failed"
