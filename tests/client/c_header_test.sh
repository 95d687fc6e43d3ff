#!/usr/bin/env bash
# c_header_test.sh -- `numrpc describe --c-header` gives a header a C program
# compiles against and calls through; a wrong argument type fails to compile.
set -euo pipefail
: "${TOP_BUILDDIR:?}" "${TOP_SRCDIR:?}"
tmp=$(mktemp -d)
server=
trap '[[ -n "$server" ]] && kill $server; rm -rf "$tmp"' EXIT
"$TOP_BUILDDIR/server/numrpc-server" --bind 127.0.0.1 --port 0 --port-file "$tmp/port" \
    --stubs "$TOP_BUILDDIR/stubs/.libs" --quiet --workers 1 &
server=$!
for _ in $(seq 200); do [[ -s "$tmp/port" ]] && break; sleep 0.05; done
addr="127.0.0.1:$(cat "$tmp/port")"
"$TOP_BUILDDIR/cli/numrpc" describe --c-header linpack "$addr" > "$tmp/numrpc_linpack.h"
cat > "$tmp/ok.c" <<'C'
#include <math.h>
#include <stdio.h>
#include "numrpc_linpack.h"
int main(void)
{
    double a[9] = {4, 1, 0, 1, 5, 2, 0, 2, 6}, b[3] = {1, 2, 3}, x[3] = {1, 2, 3};
    int ipvt[3], info = -1;
    if (numrpc_linpack(a, 3, 3, ipvt, x, &info) != NUMRPC_OK || info != 0) return 1;
    for (int i = 0; i < 3; i++) {
        double r = -b[i];
        for (int j = 0; j < 3; j++) r += a[j * 3 + i] * x[j];
        if (fabs(r) > 1e-12) return 1;
    }
    puts("typed call solved the system");
    return 0;
}
C
sed 's/int ipvt\[3\]/double ipvt[3]/' "$tmp/ok.c" > "$tmp/bad.c"
cflags="-std=c11 -Wall -Werror -I$TOP_SRCDIR/include -I$tmp"
libs="$TOP_BUILDDIR/client/.libs/libnumrpc.so -Wl,-rpath,$TOP_BUILDDIR/client/.libs -lm"
cc ${CFLAGS:-} $cflags "$tmp/ok.c" -o "$tmp/ok" $libs ${LDFLAGS:-}
NUMRPC_SERVER="$addr" "$tmp/ok"
if cc ${CFLAGS:-} $cflags -c "$tmp/bad.c" -o "$tmp/bad.o" 2> "$tmp/bad.err"; then
    echo "a double* passed for int *ipvt compiled: the header checks nothing"; exit 1
fi
grep -q "incompatible pointer type" "$tmp/bad.err"
echo "c_header_test: 1 passed, 0 failed"
