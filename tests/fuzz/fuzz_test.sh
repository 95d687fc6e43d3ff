#!/usr/bin/env bash
# fuzz_test.sh -- builds the libFuzzer targets (tests/fuzz/build.sh, clang)
# and runs each for a few seconds over its seed corpus: a crash, a sanitizer
# report, a leak or a timeout fails.  Runs in the plain build only.
set -uo pipefail
: "${TOP_BUILDDIR:?}" "${TOP_SRCDIR:?}"
case " ${CFLAGS:-} " in
*-fsanitize=*)
    echo "fuzz_test: skipped in the sanitizer build (the targets carry ASan and UBSan themselves; the plain build runs them)"
    exit 77
    ;;
esac
here=$TOP_SRCDIR/tests/fuzz
bin=$TOP_BUILDDIR/tests/fuzz-bin
"$here/build.sh" "$bin"
rc=$?
if [[ $rc == 77 ]]; then
    echo "fuzz_test: skipped: no clang with libFuzzer (scripts/deps.sh installs clang-14 and libclang-rt-14-dev)"
    exit 77
fi
if [[ $rc != 0 ]]; then
    echo "FAILED: building the fuzz targets"
    echo "fuzz_test: 0 passed, 1 failed"
    exit 1
fi
seconds=${FUZZ_SECONDS:-3}
passed=0
failed=0
for target in fuzz_wire fuzz_msg_server fuzz_msg_client fuzz_iface fuzz_expr fuzz_meta fuzz_idlc; do
    opts=()
    [[ $target == fuzz_idlc ]] && opts=(-max_len=1024 -dict="$here/idl.dict" -close_fd_mask=2)
    work=$(mktemp -d)
    # New inputs go to the first directory; the seeds are only read.
    "$bin/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$work/" "${opts[@]}" "$work" "$here/corpus/$target" >"$work/log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
    if [[ $rc == 0 ]] && ! grep -q -E "ERROR: |runtime error:" "$work/log"; then
        echo "ok: $target ran ${runs:-?} inputs in ${seconds} s"
        passed=$((passed + 1))
        rm -rf "$work"
    else
        keep=$TOP_BUILDDIR/tests/fuzz-failures/$target
        rm -rf "$keep" && mkdir -p "$keep" && cp "$work"/log "$work"/crash-* "$work"/leak-* "$work"/timeout-* \
            "$work"/oom-* "$keep"/ 2>/dev/null
        echo "FAILED: $target (exit $rc); log and input kept in $keep"
        grep -E "ERROR: |runtime error:|SUMMARY" "$work/log" | head -5
        failed=$((failed + 1))
        rm -rf "$work"
    fi
done
echo "fuzz_test: $passed passed, $failed failed"
[[ $failed == 0 ]]
