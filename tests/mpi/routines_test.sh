#!/usr/bin/env bash
# routines_test.sh -- routines_check (the engine's ScaLAPACK routines against
# local LAPACK) under mpirun on 1, 2 and 4 ranks, 4 oversubscribed if need be.
set -uo pipefail
: "${TOP_BUILDDIR:?}"
check=$TOP_BUILDDIR/tests/mpi/routines_check
command -v mpirun >/dev/null || { echo "routines_test: no mpirun, skipped"; exit 77; }
args=(--oversubscribe --bind-to none --mca btl self,vader --mca oob_tcp_if_include lo
      --mca mpi_yield_when_idle 1)
[[ $(id -u) == 0 ]] && args+=(--allow-run-as-root)
# In the sanitizer build, OpenMPI's own allocations left at exit are not ours.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
passed=0; failed=0
for np in 1 2 4; do
    if timeout 300 mpirun "${args[@]}" -np "$np" "$check"; then
        passed=$((passed + 1))
    else
        echo "FAIL: routines_check on $np ranks (exit $?)"
        failed=$((failed + 1))
    fi
done
echo "routines_test: $passed passed, $failed failed"
((failed == 0))
