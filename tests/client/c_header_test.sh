#!/usr/bin/env bash
# c_header_test.sh -- `numrpc describe --c-header` gives a header a C program
# compiles against and calls through; a wrong argument type fails to compile;
# a server whose interface hash differs from the header's is refused.
set -euo pipefail
: "${TOP_BUILDDIR:?}" "${TOP_SRCDIR:?}"
tmp=$(mktemp -d)
server= server2=
trap '[[ -n "$server" ]] && kill $server; [[ -n "$server2" ]] && kill $server2; rm -rf "$tmp"' EXIT
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

# Pinned: a header made from pinmod version 1 (tests/client/.libs), called
# on a server with version 2 (same parameters, another hash) is refused.
mkdir "$tmp/v1" "$tmp/v2"
cp "$TOP_BUILDDIR/tests/client/.libs/pinmod.so" "$tmp/v1/"
cp "$TOP_BUILDDIR/tests/client/pinmods/.libs/pinmod2.so" "$tmp/v2/"
kill $server; wait $server 2>/dev/null || true; server=
start() { # start DIR PORTFILE: a server of DIR's modules; its pid in $started
    "$TOP_BUILDDIR/server/numrpc-server" --bind 127.0.0.1 --port 0 --port-file "$2" \
        --stubs "$1" --quiet --workers 1 --admin-socket none &
    started=$!
    for _ in $(seq 200); do [[ -s "$2" ]] && break; sleep 0.05; done
}
start "$tmp/v1" "$tmp/port1"; server=$started
start "$tmp/v2" "$tmp/port2"; server2=$started
v1="127.0.0.1:$(cat "$tmp/port1")" v2="127.0.0.1:$(cat "$tmp/port2")"
"$TOP_BUILDDIR/cli/numrpc" describe --c-header pinmod "$v1" > "$tmp/numrpc_pinmod.h"
cat > "$tmp/pinned.c" <<'C'
#include <stdio.h>
#include "numrpc_pinmod.h"
int main(void)
{
    double x[4] = {1, 2, 3, 4};
    int rc = numrpc_pin_scale(4, 2.0, x);
    printf("%s x=%g,%g,%g,%g %s\n", numrpc_errname(rc), x[0], x[1], x[2], x[3], numrpc_last_error_detail());
    return rc == NUMRPC_OK ? 0 : 3;
}
C
cc ${CFLAGS:-} $cflags "$tmp/pinned.c" -o "$tmp/pinned" $libs ${LDFLAGS:-}
NUMRPC_SERVER="$v1" "$tmp/pinned" | grep -q "x=2,4,6,8" || { echo "the pinned call failed on its own server"; exit 1; }
hash1=$(grep -A2 "numrpc_pin_scale(" "$tmp/numrpc_pinmod.h" | grep -o "pinned to interface [0-9a-f]*" | cut -d' ' -f4)
hash2=$("$TOP_BUILDDIR/cli/numrpc" describe --pin "numrpc://$v2/pin_scale" | tail -1 | cut -d' ' -f2)
[[ -n "$hash1" && -n "$hash2" && "$hash1" != "$hash2" ]] || { echo "hashes: '$hash1' '$hash2'"; exit 1; }
rc=0
out=$(NUMRPC_SERVER="$v2" "$tmp/pinned") || rc=$?
[[ $rc == 3 ]] || { echo "the call on another version was not refused: $out"; exit 1; }
want="pin_scale: $v2 serves interface $hash2, the typed header has $hash1"
[[ "$out" == *EAUTH* && "$out" == *"x=1,2,3,4 "* && "$out" == *"$want"* ]] || { echo "refusal: $out"; exit 1; }
echo "c_header_test: 2 passed, 0 failed"
