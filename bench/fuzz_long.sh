#!/usr/bin/env bash
# fuzz_long.sh -- the long fuzzing run: every libFuzzer target of tests/fuzz,
# one at a time, for 10^7 executions; writes bench/results-fuzz/fuzz-long.md.
#
#   bench/fuzz_long.sh [BUILD_DIR]      (default build/; targets in BUILD_DIR/tests/fuzz-bin)
#   FUZZ_RUNS=N       executions per target (default 10000000)
#   FUZZ_TARGETS="fuzz_wire fuzz_expr"   a subset
#   FUZZ_OUT=FILE     the table (default bench/results-fuzz/fuzz-long.md)
#   FUZZ_LANES=N      targets run N at a time (default 1: a shared 2-core machine)
#   FUZZ_REPORT_ONLY=1  run nothing: the table from the logs already in
#                     BUILD_DIR/fuzz-long (after runs made separately)
#
# One process per target (no -jobs/-workers: the 2-core machine is shared),
# from the seed corpus, new inputs kept in BUILD_DIR/fuzz-long/TARGET.  A
# target stops at its first crash; its input is kept there and counted.
# -timeout=60 catches a hang; on a loaded shared machine a 10 s limit stopped
# units that take milliseconds alone, so the table gives the slowest unit.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
runs=${FUZZ_RUNS:-10000000}
lanes=${FUZZ_LANES:-1}
targets=${FUZZ_TARGETS:-fuzz_wire fuzz_msg_server fuzz_msg_client fuzz_iface fuzz_expr fuzz_meta fuzz_idlc}
out=${FUZZ_OUT:-$top/bench/results-fuzz/fuzz-long.md}
bin=$build/tests/fuzz-bin
work=$build/fuzz-long

commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?')
mkdir -p "$(dirname "$out")" "$work"

# Runs one target from its seed corpus into $work/TARGET (log, corpus, artifacts).
run_target() {
    local t=$1 dir=$work/$1 opts=()
    [[ $t == fuzz_idlc ]] && opts=(-max_len=1024 -dict="$top/tests/fuzz/idl.dict" -close_fd_mask=2)
    rm -rf "$dir" && mkdir -p "$dir/corpus"
    echo "fuzz_long: $t, $runs executions ($(date '+%H:%M:%S'))"
    "$bin/$t" -runs="$runs" -timeout=60 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$dir/" "${opts[@]}" "$dir/corpus" "$top/tests/fuzz/corpus/$t" >"$dir/log" 2>&1
    echo "fuzz_long: $t ended with status $? ($(date '+%H:%M:%S'))"
}

# The table row of a target, from its log and artifacts alone (so a table
# can be written again, or from runs made in several lanes).
row_of() {
    local t=$1 dir=$work/$1
    [[ -f $dir/log ]] || { echo "| $t | not run | | | | | | | |"; return; }
    local execs rss slowest last cov corp crashes seconds rate
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log")
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$dir/log")
    slowest=$(sed -n 's/^stat::slowest_unit_time_sec: *//p' "$dir/log")
    # libFuzzer's last words on a finished run: "Done N runs in S second(s)".
    seconds=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$dir/log")
    # The last status line: "#N DONE cov: C ft: F corp: U/SIZE ..."
    last=$(grep -E '^#[0-9]+' "$dir/log" | tail -1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$last")
    crashes=$(find "$dir" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
    [[ -z $seconds && $crashes == 0 ]] && crashes="unfinished"
    rate=$(( ${execs:-0} / (${seconds:-0} > 0 ? ${seconds:-1} : 1) ))
    echo "| $t | ${execs:-?} | ${corp:-?} | ${cov:-?} | $crashes | ${seconds:-?} | $rate | ${slowest:-?} | ${rss:-?} |"
}

if [[ -z ${FUZZ_REPORT_ONLY:-} ]]; then
    "$top/tests/fuzz/build.sh" "$bin" || exit 1
    # Lane k takes targets k, k+lanes, ...: one fuzzer per lane at a time.
    read -ra list <<<"$targets"
    for ((k = 0; k < lanes; k++)); do
        (for ((i = k; i < ${#list[@]}; i += lanes)); do run_target "${list[i]}"; done) &
    done
    wait
fi
rows=()
total_crashes=0
for t in $targets; do
    row=$(row_of "$t")
    rows+=("$row")
    [[ $(cut -d'|' -f6 <<<"$row" | tr -d ' ') == 0 ]] || total_crashes=$((total_crashes + 1))
    echo "fuzz_long: $row"
done

{
    echo "<!-- fuzz-long.md -- written by bench/fuzz_long.sh: the long run of every fuzz target. -->"
    echo "# Long fuzzing run"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit,"
    echo "$(nproc) cores ($(sed -n 's/^model name\t*: //p' /proc/cpuinfo | head -1)), $(${FUZZ_CC:-clang-14} --version 2>/dev/null | head -1)."
    echo "One process per target ($lanes at a time): \`TARGET -runs=$runs -timeout=60 -rss_limit_mb=2048 CORPUS tests/fuzz/corpus/TARGET\`"
    echo "(fuzz_idlc also \`-max_len=1024 -dict=tests/fuzz/idl.dict\`), ASan + UBSan, leaks checked."
    echo
    echo "| target | executions | corpus at end (inputs/bytes) | edges covered | crashes | seconds | exec/s | slowest unit (s) | peak RSS MB |"
    echo "|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
} >"$out"
echo "fuzz_long: table in $out"
[[ $total_crashes == 0 ]]
