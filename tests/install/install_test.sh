#!/usr/bin/env bash
# install_test.sh -- `make install` into a fresh prefix gives everything a
# user needs: a program built with pkg-config calls the installed server.
set -euo pipefail
: "${TOP_BUILDDIR:?}" "${TOP_SRCDIR:?}"
prefix=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$prefix"' EXIT
make -s -C "$TOP_BUILDDIR" install prefix="$prefix" >/dev/null

for f in include/numrpc.h lib/libnumrpc.so lib/libnumrpc.a lib/pkgconfig/numrpc.pc \
         bin/numrpc-server bin/numrpc-idlc bin/numrpc lib/numrpc/stubs/linpack.so \
         lib/numrpc/stubs/blas.so; do
  [[ -e "$prefix/$f" ]] || { echo "not installed: $f"; exit 1; }
done

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
flags=$(pkg-config --define-prefix --cflags --libs numrpc)
cc ${CFLAGS:-} -std=c99 -Wall -Wextra -Werror -o "$prefix/remote_solve" \
   "$TOP_SRCDIR/tests/install/remote_solve.c" $flags -lm ${LDFLAGS:-} -Wl,-rpath,"$prefix/lib"

"$prefix/bin/numrpc-server" --bind 127.0.0.1 --port 0 --port-file "$prefix/port" \
   --stubs "$prefix/lib/numrpc/stubs" --quiet --workers 1 &
server=$!
for _ in $(seq 200); do [[ -s "$prefix/port" ]] && break; sleep 0.05; done
export NUMRPC_SERVER="127.0.0.1:$(cat "$prefix/port")"
"$prefix/remote_solve"
LD_LIBRARY_PATH="$prefix/lib" "$prefix/bin/numrpc" list | grep -qx linpack
echo "install_test: 1 passed, 0 failed"
