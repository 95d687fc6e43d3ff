#!/usr/bin/env bash
# demo.sh -- the quick start's first command: installs what is missing,
# builds, starts a numrpc server on a free localhost port, and solves linear
# systems remotely with LINPACK (local vs remote, n = 100 ... 2000).
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
"$top/scripts/deps.sh"
"$top/scripts/build.sh" "$top/build"
b="$top/build"

portfile=$(mktemp)
"$b/server/numrpc-server" --bind 127.0.0.1 --port 0 --port-file "$portfile" \
  --stubs "$b/stubs/.libs" --quiet --blas-threads 1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -f "$portfile"' EXIT
for _ in $(seq 100); do [[ -s "$portfile" ]] && break; sleep 0.05; done
export NUMRPC_SERVER="127.0.0.1:$(cat "$portfile")"
export OPENBLAS_NUM_THREADS=1

echo; echo "== routines offered by $NUMRPC_SERVER (numrpc list)"
"$b/client/numrpc" list
echo; echo "== the interface the client fetched at call time (numrpc describe linpack)"
"$b/client/numrpc" describe linpack
echo; echo "== a null call through a worker process (numrpc ping)"
"$b/client/numrpc" ping 200
echo; echo "== Linpack: numrpc_call(\"linpack\", a, lda, n, ipvt, b, &info), one BLAS thread each side"
"$b/apps/linpack/numrpc-linpack" --sizes 100,200,500,1000,2000 --mode both --repeat 3
echo; echo "demo: done; the server stops now."
