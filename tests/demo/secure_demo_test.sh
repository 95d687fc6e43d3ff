#!/usr/bin/env bash
# secure_demo_test.sh -- `./demo.sh --secure` on this build (scripts/demo-run.sh
# --secure --quick): every call (data handles too) succeeds over TLS + tokens,
# clients without the token or the CA are refused with NUMRPC_EAUTH, and numrpc
# status says "TLS, tokens required" for both servers (the metaserver's and own).
set -euo pipefail
: "${TOP_BUILDDIR:?}" "${TOP_SRCDIR:?}"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { cat "$out"; echo "FAIL: $1"; exit 1; }
timeout 120 "$TOP_SRCDIR/scripts/demo-run.sh" "$TOP_BUILDDIR" --secure --quick >"$out" 2>&1 ||
    fail "the secure demo stopped (exit $?)"
# expect COUNT REGEX WHAT: exactly COUNT lines of the output match.
expect() {
    local n
    n=$(grep -c -E -- "$2" "$out" || true)
    [[ $n == "$1" ]] || fail "$3: $n lines match /$2/, want $1"
}
servers=$(sed -n 's/^== metaserver .*; servers \(.*\) joined.*/\1/p' "$out")
read -r a b <<<"$servers"
[[ -n ${a-} && -n ${b-} ]] || fail "the demo did not name its two servers"

expect 1 "^client without the token: numrpc ping: .*this server requires a token \(set NUMRPC_TOKEN_FILE\) \(NUMRPC_EAUTH\)$" \
    "a client without the token is refused with NUMRPC_EAUTH"
expect 1 "^client without the CA: numrpc ping: .*this server requires TLS \(set NUMRPC_TLS_CA\) \(NUMRPC_EAUTH\)$" \
    "a client without the CA is refused with NUMRPC_EAUTH"
# The SECURITY section of both `numrpc status --metaserver`, for each server.
for s in "$a" "$b"; do
    expect 2 "^$s +TLS, tokens required$" "the metaserver's status shows $s as TLS with tokens"
    expect 2 "^$s +yes +[0-9a-f]{16} +demo-server$" "the metaserver shows $s's certificate and its owner token"
done
expect 2 "^security: TLS, tokens required$" "each server's own status says TLS with tokens"
expect 2 "^metaserver: up .*, 2 servers, .*, tokens required$" "the metaserver lists both servers and requires tokens"
# Calls: remote Linpack solved (a remote residual on every row), ping, SDPA, GridRPC.
expect 4 "^ +(100|200) (linpack|dgefa\+dgesl) +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ .* [0-9.]+ +[0-9.]+$" \
    "remote Linpack rows with a remote residual"
expect 1 "^ +200 handles +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ .* [0-9.]+ +[0-9.]+$" \
    "Linpack through a data handle, with a remote residual"
expect 1 "^ +200 +10 +[0-9.]+ .* [0-9.]+ +[0-9.]+$" "10 solves with the factors kept in a handle"
expect 2 "^data handles: 0, 0 B$" "each server's status counts its handles (all freed)"
expect 1 "^200 calls to $a: median" "200 pings over TLS"
expect 1 "^gridrpc_matmul: 12 passed, 0 failed$" "the GridRPC program over TLS"
if [[ -x "$TOP_BUILDDIR/apps/sdpa/sdpa-remote" && -r /usr/share/sdpa/example/example1.dat-s ]]; then
    expect 2 "^phase.value += pdOPT$" "SDPA solved remotely in both modes"
fi
expect 1 "^demo: done" "the demo ran to its end"
echo "secure_demo_test: calls over TLS + tokens passed; refusals NUMRPC_EAUTH; both servers TLS, tokens required"
