#!/bin/sh
# footprint.sh -- what a user installs and writes to make a remote call:
# installed size of the numrpc client vs an omniORB client, and client lines.
# usage: footprint.sh BUILD_DIR   (prints a markdown section on stdout)
set -eu
build=${1:?usage: footprint.sh BUILD_DIR}
src=$(cd "$(dirname "$0")/.." && pwd)
prefix=$(mktemp -d /tmp/numrpc-footprint-XXXXXX)
trap 'rm -rf "$prefix"' EXIT
make -s -C "$build" install prefix="$prefix" >/dev/null 2>&1

kb() { du -skL "$@" 2>/dev/null | awk '{s += $1} END {printf "%.2f", s / 1024}'; }
lib=/usr/lib/$(gcc -print-multiarch)
client=$(kb "$prefix/lib/libnumrpc.so.0" "$prefix/include/numrpc.h")
client_tirpc=$(kb "$prefix/lib/libnumrpc.so.0" "$prefix/include/numrpc.h" "$lib/libtirpc.so.3")
server=$(kb "$prefix/bin/numrpc-server" "$prefix/lib/numrpc/stubs")
omni_rt=$(kb "$lib/libomniORB4.so.2" "$lib/libomnithread.so.4")
omni_dev=$(kb "$lib/libomniORB4.so.2" "$lib/libomnithread.so.4" /usr/include/omniORB4 \
    /usr/include/omnithread /usr/include/omnithread.h /usr/bin/omniidl /usr/lib/omniidl \
    /usr/lib/python3/dist-packages/omniidl /usr/lib/python3/dist-packages/omniidl_be)

# Client lines for one remote Linpack call, counted between markers.
count() { awk -v tag="$2" '$0 ~ "BEGIN " tag {on = 1; next} $0 ~ "END " tag {on = 0} on && NF' "$1" | wc -l; }
corba_setup=$(count "$src/apps/corba/corba_client.cc" "client setup")
corba_call=$(count "$src/apps/corba/corba_client.cc" "remote call")
# The call of the app's one-call mode (apps/linpack/linpack_run.c; it once lived in linpack_demo.c).
numrpc_call=$(grep -c 'numrpc_call("linpack"' "$src/apps/linpack/linpack_run.c" || true)

cat <<EOT
## Footprint and client code

Installed size a client needs (MB; shared libraries and headers, as du counts them):

| what | numrpc | omniORB |
|---|---|---|
| client run time | $client (libnumrpc + numrpc.h; $client_tirpc with libtirpc) | $omni_rt (libomniORB4 + libomnithread) |
| to build a client | the same (no IDL compiler, no stubs) | $omni_dev (libraries, headers, omniidl) |
| server | $server (numrpc-server + stub modules) | the ORB libraries above + the servant |

Client lines for one remote Linpack solve (the published comparison: Ninf 1, CORBA 14):

| system | set-up lines | call lines |
|---|---|---|
| numrpc | 0 (NUMRPC_SERVER in the environment) | $numrpc_call (\`numrpc_call("linpack", a, lda, n, ipvt, b, &info)\`) |
| omniORB (apps/corba/corba_client.cc) | $corba_setup | $corba_call |
EOT
