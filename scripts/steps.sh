# steps.sh -- the quick start's progress: one line per step with its time, the step's
# output in a log, and the log's last lines when it fails (sourced by the scripts).

# The seconds since t0 ($SECONDS), as "42s" or "3m 07s".
step_took() {
  local s=$((SECONDS - $1))
  ((s < 60)) && echo "${s}s" || printf '%dm %02ds\n' $((s / 60)) $((s % 60))
}

# step LOG TITLE COMMAND...: runs COMMAND with its output appended to LOG,
# printing "TITLE ... done (TIME)"; on failure "FAILED (TIME)", then the
# log's last 40 lines, and returns COMMAND's status.
step() {
  local log=$1 title=$2 t0=$SECONDS rc=0
  shift 2
  mkdir -p "$(dirname "$log")"
  printf '%-52s' "$title ..."
  "$@" >>"$log" 2>&1 || rc=$?
  if ((rc == 0)); then
    echo " done ($(step_took "$t0"))"
  else
    echo " FAILED ($(step_took "$t0"))"
    echo "---- the last 40 lines of $log:"
    tail -n 40 "$log"
    echo "----"
  fi
  return $rc
}
