#!/usr/bin/env bash
# check.sh -- the quick start's second command: installs what is missing, builds, and
# runs the whole test suite (plain build, the Python package over it, ASan+UBSan build).
set -uo pipefail
top=$(cd "$(dirname "$0")" && pwd)
"$top/scripts/deps.sh" || exit 1

passed=0; failed=0; status=0
run_suite() { # DIR [configure args]
  local dir=$1; shift
  "$top/scripts/build.sh" "$dir" "$@" || { status=1; failed=$((failed + 1)); return; }
  if ! make -C "$dir" -j"$(nproc)" check >"$dir/check.out" 2>&1; then
    status=1
    cat "$dir/check.out"
    for log in "$dir"/tests/*.log; do grep -q -E "FAILED|Failure|ERROR" "$log" && { echo "== $log"; tail -60 "$log"; }; done
  fi
  grep -E "^(PASS|FAIL|ERROR|XFAIL|XPASS|SKIP):|^# " "$dir/check.out" | sed "s|^|[$(basename "$dir")] |"
  local p f logs
  # GoogleTest's summaries, and "name: N passed, N failed" from script tests
  # (test-suite.log repeats the failing logs: not counted twice).
  logs=$(ls "$dir"/tests/*.log 2>/dev/null | grep -v '/test-suite\.log$')
  p=$(cat $logs /dev/null | awk '/^\[  PASSED  \]/ {s += $4} /^[a-z_]+: [0-9]+ passed, [0-9]+ failed$/ {s += $2} END {print s + 0}')
  f=$(cat $logs /dev/null | awk '/^\[  FAILED  \] [0-9]+ tests?, listed/ {s += $4} /^[a-z_]+: [0-9]+ passed, [0-9]+ failed$/ {s += $4} END {print s + 0}')
  # A script test or a program that died before printing its summary.
  local died
  died=$(grep -c -E "^(FAIL|ERROR): .*\.sh$|^ERROR: " "$dir/check.out" || true)
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0} + ${died:-0}))
}

# The Python package (python/) in a fresh virtual environment, over the plain build.
run_python() { # BUILD_DIR
  local out="$1/python-check.out" last p f
  "$top/scripts/python_check.sh" "$1" >"$out" 2>&1 || { status=1; cat "$out"; }
  last=$(tail -1 "$out")
  echo "[python] $last"
  # pytest's summary: "1 failed, 53 passed, 2 errors in 0.9s"
  count() { awk -v w="$1" '{for (i = 1; i < NF; i++) if ($(i + 1) ~ "^" w ",?$") s += $i} END {print s + 0}' <<<"$last"; }
  p=$(count passed); f=$(($(count failed) + $(count errors?)))
  grep -qE ' in [0-9.]+s' <<<"$last" || f=$((f + 1)) # pytest did not get to its summary
  passed=$((passed + p)); failed=$((failed + f))
}

run_suite "$top/build"
run_python "$top/build"
run_suite "$top/build-asan" --enable-sanitizers
echo "$passed passed, $failed failed"
exit $status
