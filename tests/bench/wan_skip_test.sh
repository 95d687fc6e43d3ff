#!/usr/bin/env bash
# wan_skip_test.sh -- bench/netlab.sh (veth LAN and shaped WAN between two
# network namespaces it creates): without root it skips cleanly (exit 0, a
# line saying why, nothing created); as root a short run measures across the
# namespaces (every system's data checked by the harness) and removes every
# namespace and link it made.  No time is asserted.
set -euo pipefail
: "${TOP_BUILDDIR:?}" "${TOP_SRCDIR:?}"
passed=0
failed=0
check() { # name, then a command that must succeed
    local name=$1
    shift
    if "$@"; then passed=$((passed + 1)); else echo "FAILED: $name"; failed=$((failed + 1)); fi
}
out=$(mktemp -d)
chmod 777 "$out"
trap 'rm -rf "$out"' EXIT
# A copy in a world-readable place: the unprivileged user may not be able to
# reach the checkout (the skip happens before the build dir is used).
cp "$TOP_SRCDIR/bench/netlab.sh" "$out/netlab.sh"
chmod 755 "$out/netlab.sh"
# Names this test's runs use (other tests may make namespaces meanwhile).
export NUMRPC_NETLAB_ID=$$
netns_count() { ip netns list 2>/dev/null | grep -c "numrpc-[a-z]*-$$" || true; }
links() { ip -o link show 2>/dev/null | grep -c " nr[sc]$$[@:]" || true; }

# 1. Without root: the skip.
run=(sh "$out/netlab.sh" --out "$out/o" "$TOP_BUILDDIR")
if [[ $(id -u) == 0 ]]; then
    if command -v setpriv >/dev/null; then
        run=(setpriv --reuid=65534 --regid=65534 --clear-groups env NUMRPC_NETLAB_ID=$$ "${run[@]}")
    else
        run=()
    fi
fi
if [[ ${#run[@]} -gt 0 ]]; then
    set +e
    text=$("${run[@]}" 2>&1)
    rc=$?
    set -e
    echo "$text"
    check "unprivileged run exits 0" test "$rc" = 0
    check "says why it skipped" grep -q "skipped: the LAN/WAN runs need root" <<<"$text"
    check "says what it skipped" grep -q "skipped: veth LAN and 3 Mbit/s WAN runs" <<<"$text"
    check "creates no namespace" test "$(netns_count)" = 0
    check "writes no result" test ! -e "$out/o/lan.csv"
fi

# 2. As root: a short LAN + WAN run across the namespaces, then nothing left.
if [[ $(id -u) == 0 ]] && ip netns add "numrpc-probe-$$" 2>/dev/null; then
    ip netns del "numrpc-probe-$$"
    set +e
    text=$(sh "$TOP_SRCDIR/bench/netlab.sh" --quick --no-linpack --sizes 8,64K --wan-sizes 8,4K \
        --delay-ms 2 --out "$out/r" "$TOP_BUILDDIR" 2>&1)
    rc=$?
    set -e
    echo "$text" | grep -E "^== |MISSED|failed|differ" || true
    check "root run exits 0" test "$rc" = 0
    for f in lan wan; do
        for sys in raw-tuned numrpc-dcopy raw-sink numrpc-sink numrpc-ping; do
            check "$f.csv has $sys" grep -q ",$sys," "$out/r/$f.csv"
        done
    done
    check "LAN ran across the namespaces" grep -q "link veth-lan; numrpc-server 10.77.0.1" <<<"$text"
    check "namespaces removed" test "$(netns_count)" = 0
    check "veth pair removed" test "$(links)" = 0
else
    echo "wan_skip_test: not root or no namespaces here: the root run is not tested"
fi
echo "wan_skip_test: $passed passed, $failed failed"
[[ $failed == 0 ]]
