#!/usr/bin/env bash
# soak_test.sh -- bench/soak.sh for 60 s (32 clients, 2 servers behind the
# metaserver, live re-registration, a server SIGKILLed and restarted, an
# attacker's slow and silent connections): no answer wrong, no call lost, and
# every kind of call and every event really happened.  No time is asserted.
set -uo pipefail
: "${TOP_BUILDDIR:?}" "${TOP_SRCDIR:?}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$TOP_SRCDIR/bench/soak.sh" --seconds 60 --call-timeout 5 --out "$out" "$TOP_BUILDDIR" > "$out/log" 2>&1
table=$(ls "$out"/soak-*.md 2>/dev/null | head -1)
events=${table%.md}.events
passed=0 failed=0
check() { # NAME CONDITION...
    local name=$1
    shift
    if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $name"; fi
}
# The number after "LABEL: " in the table's last lines.
figure() { sed -n "s/.*$1: \([0-9][0-9]*\).*/\1/p" "$table" | tail -1; }
# Calls of KIND, and those that ended as expected (the table's calls row).
row() { awk -F'|' -v k=" $1 " '$2 == k {gsub(/ /, "", $3); gsub(/ /, "", $5); print $3, $5}' "$table"; }
check "the soak wrote its table" test -s "${table:-/nonexistent}"
[[ -s ${table:-} ]] || { cat "$out/log"; echo "soak_test: $passed passed, $((failed + 1)) failed"; exit 1; }
check "no wrong answer" test "$(figure "wrong answers")" = 0
check "no lost call" test "$(figure "lost calls")" = 0
check "the metaserver and both servers lived to the end" test "$(figure "processes that died by themselves (metaserver, servers)")" = 0
for kind in dcopy dgemm live dcopy8M crash noroutine cancel timeout; do
    read -r calls expected <<< "$(row "$kind")"
    check "$kind calls were made and some ended as expected" test "${calls:-0}" -gt 0 -a "${expected:-0}" -gt 0
done
check "server b was killed and restarted" grep -q "restarted b [0-9]" "$events"
check "the attacker ran twice" test "$(grep -c attack_start "$events")" = 2
[[ $failed == 0 ]] || cat "$table"
echo "soak_test: $passed passed, $failed failed"
[[ $failed == 0 ]]
