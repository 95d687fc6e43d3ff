#!/bin/sh
# admin.sh -- the costs of the server's process model and live registration:
# ping through a worker beside a raw TCP ping-pong (one vCPU and across),
# crashed-worker replacement and register-to-callable (numrpc-bench-admin).
# usage: admin.sh [BUILD_DIR] [ROUNDS]   (needs `make check` once: test modules)
set -u
build=$(cd "${1:-$(pwd)}" && pwd) || exit 2
rounds=${2:-30}
for f in bench/numrpc-bench-transfer bench/numrpc-bench-admin server/numrpc-server \
         tests/server/.libs/faults.so tests/server/.libs/live1.so; do
    [ -e "$build/$f" ] || { echo "admin.sh: $build/$f missing (make; make check)" >&2; exit 2; }
done
echo "### ping through a worker vs raw TCP ping-pong, one vCPU (taskset: client and server on cpu 0)"
"$build/bench/numrpc-bench-transfer" --sizes 8 --placement same --no-corba --no-grpc --rounds 15 | grep -i -E "ping|ratio|size"
echo "### the same across vCPUs (client cpu 0, server cpu 1)"
"$build/bench/numrpc-bench-transfer" --sizes 8 --placement different --no-corba --no-grpc --rounds 15 | grep -i -E "ping|ratio|size"
rc=0
stubs=$(mktemp -d /tmp/numrpc-admin-sh-XXXXXX)
ln -s "$build/tests/server/.libs/faults.so" "$stubs/faults.so"
echo "### crashed worker replacement, admin register until callable: test modules only"
"$build/bench/numrpc-bench-admin" "$build/server/numrpc-server" "$stubs" "$build/tests/server/.libs" "$rounds" || rc=1
# The stub modules of this build (BLAS, LAPACK, ...: OpenBLAS loads with them).
for m in "$build"/stubs/.libs/*.so; do ln -s "$m" "$stubs/"; done
for w in 1 2; do
    echo "### the same with this build's stub modules (OpenBLAS), $w worker(s)"
    "$build/bench/numrpc-bench-admin" "$build/server/numrpc-server" "$stubs" "$build/tests/server/.libs" "$rounds" $w || rc=1
done
rm -rf "$stubs"
exit $rc
