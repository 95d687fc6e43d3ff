#!/bin/sh
# untravelled.sh -- the figure of the untravelled budget: what a CALL of a few
# hundred bytes makes a worker touch, with and without the budget (and, given a
# build from before it, there too), as a markdown table (numrpc-bench-untravelled).
# usage: untravelled.sh [BUILD_DIR] [ROUNDS] [BEFORE_BUILD_DIR]
set -u
build=$(cd "${1:-$(pwd)}" && pwd) || exit 2
rounds=${2:-3}
before_dir=${3:-}
for f in bench/numrpc-bench-untravelled server/numrpc-server stubs/.libs/blas.so stubs/.libs/lapack.so; do
    [ -e "$build/$f" ] || { echo "untravelled.sh: $build/$f missing (make)" >&2; exit 2; }
done
stubs=$(mktemp -d /tmp/numrpc-untravelled-XXXXXX)
trap 'rm -rf "$stubs"' EXIT
ln -s "$build/stubs/.libs/blas.so" "$build/stubs/.libs/lapack.so" "$stubs/"
set -- "$build/server/numrpc-server" "$stubs" "$rounds"
if [ -n "$before_dir" ]; then
    before=$(cd "$before_dir" && pwd)/server/numrpc-server
    [ -x "$before" ] || { echo "untravelled.sh: $before missing" >&2; exit 2; }
    set -- "$@" "$before"
fi
"$build/bench/numrpc-bench-untravelled" "$@"
