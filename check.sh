#!/usr/bin/env bash
# check.sh -- the quick start's second command: installs what is missing, builds, and
# runs the whole test suite (plain build, the Python package over it, ASan+UBSan build).
set -uo pipefail
top=$(cd "$(dirname "$0")" && pwd)
"$top/scripts/deps.sh" || exit 1

. "$top/scripts/steps.sh"
passed=0; failed=0; status=0
# Tests passed and failed in a suite's logs: GoogleTest's summaries, and
# "name: N passed, N failed" from script tests (test-suite.log repeats the
# failing logs: not counted twice), plus a script or program that died
# before printing its summary.
count_suite() { # DIR: sets p and f
  local dir=$1 logs died
  logs=$(ls "$dir"/tests/*.log 2>/dev/null | grep -v '/test-suite\.log$')
  p=$(cat $logs /dev/null | awk '/^\[  PASSED  \]/ {s += $4} /^[a-z_]+: [0-9]+ passed, [0-9]+ failed$/ {s += $2} END {print s + 0}')
  f=$(cat $logs /dev/null | awk '/^\[  FAILED  \] [0-9]+ tests?, listed/ {s += $4} /^[a-z_]+: [0-9]+ passed, [0-9]+ failed$/ {s += $4} END {print s + 0}')
  died=$(grep -c -E "^(FAIL|ERROR): .*\.sh$|^ERROR: " "$dir/check.out" || true)
  f=$((${f:-0} + ${died:-0}))
}

run_suite() { # DIR [configure args]
  local dir=$1 p f t0=$SECONDS
  shift
  "$top/scripts/build.sh" "$dir" "$@" || { status=1; failed=$((failed + 1)); return; }
  "$top/scripts/tlslite_venv.sh" "$dir" # the TLS probes' tlslite-ng (from PyPI; they SKIP without it)
  : >"$dir/check.out"
  if ! step "$dir/check.out" "testing $(basename "$dir") (make check)" make -C "$dir" -j"$(nproc)" check; then
    status=1
    grep -E "^(FAIL|ERROR|XPASS):" "$dir/check.out"
    for log in "$dir"/tests/*.log; do grep -q -E "FAILED|Failure|ERROR" "$log" && { echo "== $log"; tail -60 "$log"; }; done
  fi
  count_suite "$dir"
  echo "  $(basename "$dir"): $p passed, $f failed (the list: $dir/check.out)"
  passed=$((passed + p)); failed=$((failed + f))
}

# The Python package (python/) in a fresh virtual environment, over the plain build.
run_python() { # BUILD_DIR
  local out="$1/python-check.out" last p f
  : >"$out"
  step "$out" "testing the Python package (pytest)" "$top/scripts/python_check.sh" "$1" || status=1
  last=$(tail -1 "$out")
  # pytest's summary: "1 failed, 53 passed, 2 errors in 0.9s"
  count() { awk -v w="$1" '{for (i = 1; i < NF; i++) if ($(i + 1) ~ "^" w ",?$") s += $i} END {print s + 0}' <<<"$last"; }
  p=$(count passed); f=$(($(count failed) + $(count errors?)))
  grep -qE ' in [0-9.]+s' <<<"$last" || f=$((f + 1)) # pytest did not get to its summary
  echo "  python: $p passed, $f failed (the log: $out)"
  passed=$((passed + p)); failed=$((failed + f))
}

t_all=$SECONDS
run_suite "$top/build"
run_python "$top/build"
run_suite "$top/build-asan" --enable-sanitizers
echo "$passed passed, $failed failed, in $(step_took "$t_all")"
exit $status
