#!/bin/sh
# deadline.sh -- the end-to-end deadline's margin: a server of BUILD_DIR on a
# free loopback port, then numrpc-bench-deadline against it (linpack, 196 MB in).
# usage: deadline.sh [BUILD_DIR] [TIMEOUT_S] [N] [ROUNDS]
set -u
build=$(cd "${1:-$(pwd)}" && pwd) || exit 2
for f in bench/numrpc-bench-deadline server/numrpc-server; do
    [ -e "$build/$f" ] || { echo "deadline.sh: $build/$f missing (make)" >&2; exit 2; }
done
portfile=$(mktemp /tmp/numrpc-deadline-XXXXXX)
rm -f "$portfile"
"$build/server/numrpc-server" --port 0 --bind 127.0.0.1 --stubs "$build/stubs/.libs" --port-file "$portfile" \
    --quiet --workers 2 --blas-threads 1 --admin-socket none >/dev/null &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -f "$portfile"' EXIT
i=0
while [ ! -s "$portfile" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
[ -s "$portfile" ] || { echo "deadline.sh: the server did not start" >&2; exit 1; }
"$build/bench/numrpc-bench-deadline" "127.0.0.1:$(cat "$portfile")" "${2:-0.3}" "${3:-4950}" "${4:-11}"
