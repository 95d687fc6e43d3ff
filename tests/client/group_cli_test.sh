#!/usr/bin/env bash
# group_cli_test.sh -- `numrpc status --all` over the servers a metaserver
# lists; then `status --all` and `admin --all register` over a list with one
# dead server: a block or line each, the dead one's error shown, and the
# command exits nonzero.  (A server that dies leaves the metaserver's list
# at once: its link closes.)
set -euo pipefail
: "${TOP_BUILDDIR:?}"
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT
wait_port() { for _ in $(seq 200); do [[ -s "$1" ]] && return 0; sleep 0.05; done; echo "no port in $1"; exit 1; }

"$TOP_BUILDDIR/metaserver/numrpc-metaserver" --port 0 --bind 127.0.0.1 --allow-insecure --quiet \
    --drop-after 60 --port-file "$tmp/meta" &
pids+=($!)
wait_port "$tmp/meta"
meta="127.0.0.1:$(cat "$tmp/meta")"
head -c 32 /dev/urandom | base64 > "$tmp/secret"
chmod 600 "$tmp/secret"
for s in a b c; do
    "$TOP_BUILDDIR/server/numrpc-server" --bind 127.0.0.1 --port 0 --port-file "$tmp/$s" --quiet --workers 1 \
        --stubs "$TOP_BUILDDIR/tests/server/.libs" --admin-socket none --admin-secret-file "$tmp/secret" \
        --metaserver "$meta" > /dev/null &
    pids+=($!)
    eval "pid_$s=$!"
    wait_port "$tmp/$s"
done
# Until the metaserver lists all three (a bound on the wait, not a timing check).
for _ in $(seq 100); do
    n=$("$TOP_BUILDDIR/cli/numrpc" status --all --metaserver "$meta" 2>/dev/null | grep -c '^== ' || true)
    [[ "$n" == 3 ]] && break
    sleep 0.1
done
[[ "$n" == 3 ]] || { echo "the metaserver lists $n servers, not 3"; exit 1; }
"$TOP_BUILDDIR/cli/numrpc" status --all --metaserver "$meta" > "$tmp/status"
[[ $(grep -c "^workers " "$tmp/status") == 3 ]] || { echo "not three blocks"; exit 1; }
grep -q "^3 servers, 3 answered" "$tmp/status"

dead="127.0.0.1:$(cat "$tmp/b")"
kill -9 "$pid_b"
wait "$pid_b" 2>/dev/null || true
export NUMRPC_SERVER="127.0.0.1:$(cat "$tmp/a"),$dead,127.0.0.1:$(cat "$tmp/c")"

rc=0
"$TOP_BUILDDIR/cli/numrpc" status --all > "$tmp/status" 2>&1 || rc=$?
grep -v "^[a-z_]* *[a-z_]*mod\|^[a-z_]* *\(faults\|hostile\|live\|builtin\) " "$tmp/status"
[[ $rc == 1 ]] || { echo "status --all exited $rc, not 1"; exit 1; }
grep -q "^== $dead ==" "$tmp/status"
grep -A1 "^== $dead ==" "$tmp/status" | grep -q "^error: .*(NUMRPC_ECONNECT)"
[[ $(grep -c "^workers " "$tmp/status") == 2 ]] || { echo "not two live blocks"; exit 1; }
grep -q "^3 servers, 2 answered" "$tmp/status"

rc=0
"$TOP_BUILDDIR/cli/numrpc" admin --all --secret-file "$tmp/secret" register live1.so \
    > "$tmp/admin" 2>&1 || rc=$?
cat "$tmp/admin"
[[ $rc == 1 ]] || { echo "admin --all exited $rc, not 1"; exit 1; }
for s in a c; do grep -q "^127.0.0.1:$(cat "$tmp/$s"): registered module live" "$tmp/admin"; done
grep -q "^$dead: error: .*(NUMRPC_ECONNECT)" "$tmp/admin"
grep -q "^3 servers, 2 done" "$tmp/admin"
echo "group CLI: status and admin reached every listed server"
