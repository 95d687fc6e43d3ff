#!/usr/bin/env bash
# wan_skip_test.sh -- without root the WAN rate run (which creates a network
# namespace) skips cleanly: exit 0, a line saying why, nothing left behind.
set -euo pipefail
: "${TOP_BUILDDIR:?}" "${TOP_SRCDIR:?}"
out=$(mktemp -d)
chmod 777 "$out"
trap 'rm -rf "$out"' EXIT
# A copy in a world-readable place: the unprivileged user may not be able to
# reach the checkout (the skip happens before the build dir is used).
cp "$TOP_SRCDIR/bench/wan.sh" "$out/wan.sh"
chmod 755 "$out/wan.sh"
run=(sh "$out/wan.sh" --rate-only --out "$out/o" "$TOP_BUILDDIR")
if [[ $(id -u) == 0 ]]; then
    command -v setpriv >/dev/null || { echo "wan_skip_test: 0 passed, 0 failed (no setpriv)"; exit 0; }
    run=(setpriv --reuid=65534 --regid=65534 --clear-groups "${run[@]}")
fi
before=$(ip netns list 2>/dev/null | wc -l)
text=$("${run[@]}" 2>&1)
echo "$text"
grep -q "skipped: the WAN emulation needs root" <<<"$text"
[[ $(ip netns list 2>/dev/null | wc -l) == "$before" ]]
echo "wan_skip_test: 1 passed, 0 failed"
