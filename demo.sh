#!/usr/bin/env bash
# demo.sh -- the quick start's first command: installs what is missing, builds,
# starts a metaserver and two servers on localhost, and makes real remote calls.
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
"$top/scripts/deps.sh"
"$top/scripts/build.sh" "$top/build"
b="$top/build"
numrpc="$b/cli/numrpc"

run=$(mktemp -d)
pids=()
stop_all() {
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
  rm -rf "$run"
}
trap stop_all EXIT

# The port a process wrote to FILE (it picked a free one).
port_of() {
  for _ in $(seq 200); do [[ -s "$1" ]] && { cat "$1"; return; }; sleep 0.05; done
  echo "demo: $2 did not start" >&2; exit 1
}

"$b/metaserver/numrpc-metaserver" --bind 127.0.0.1 --port 0 --port-file "$run/meta.port" \
  --lease-ms 500 --quiet &
pids+=($!)
meta="127.0.0.1:$(port_of "$run/meta.port" numrpc-metaserver)"
servers=()
for name in a b; do
  "$b/server/numrpc-server" --bind 127.0.0.1 --port 0 --port-file "$run/$name.port" \
    --stubs "$b/stubs/.libs" --blas-threads 1 --workers 2 --admin-socket none --quiet \
    --metaserver "$meta" >/dev/null &
  pids+=($!)
  servers+=("127.0.0.1:$(port_of "$run/$name.port" numrpc-server)")
done
# Each server measures its speed curve before it joins (about a second).
for _ in $(seq 300); do
  # Each server's line of the table (a server shows up again under IDENTITY).
  listed=$("$numrpc" status --metaserver "$meta" 2>/dev/null | { grep -o -E "^(${servers[0]}|${servers[1]}) " || true; } | sort -u | wc -l)
  [[ $listed == 2 ]] && break
  sleep 0.1
done
export OPENBLAS_NUM_THREADS=1

echo "== metaserver $meta; servers ${servers[*]} joined with their measured speed"
"$numrpc" status --metaserver "$meta"
echo; echo "== routines offered by ${servers[0]} (numrpc list)"
"$numrpc" list "${servers[0]}" | paste -sd ' ' | fold -s -w 78
echo; echo "== the interface a client fetches at call time (numrpc describe linpack)"
NUMRPC_SERVER="${servers[0]}" "$numrpc" describe linpack
echo; echo "== a null call through a worker process (numrpc ping)"
"$numrpc" ping "${servers[0]}" 200

echo; echo "== Linpack: numrpc_call(\"linpack\", a, lda, n, ipvt, b, &info), the server chosen by the metaserver"
NUMRPC_METASERVER="$meta" "$b/apps/linpack/numrpc-linpack" --sizes 100,200,500,1000,2000 --mode both --repeat 3

if [[ -x "$b/apps/sdpa/sdpa-remote" && -r /usr/share/sdpa/example/example1.dat-s ]]; then
  echo; echo "== SDPA run remotely: the server reads the client's file on demand, then the file shipped whole"
  for mode in rfile ship; do
    NUMRPC_SERVER="${servers[1]}" "$b/apps/sdpa/sdpa-remote" /usr/share/sdpa/example/example1.dat-s --mode $mode
  done
fi

echo; echo "== a GridRPC program (GFD.52 only): dmmul blocking, then farmed asynchronously over both servers"
make -s -C "$b/tests" gridrpc_matmul >/dev/null
printf 'servers = %s, %s\n' "${servers[0]}" "${servers[1]}" >"$run/grpc.conf"
"$b/tests/gridrpc_matmul" "$run/grpc.conf" 400

echo; echo "== what the metaserver placed, predicted and measured"
"$numrpc" status --metaserver "$meta"
for server in "${servers[@]}"; do
  echo; echo "== a server's own counters (numrpc status $server; dmmul includes its speed measurement)"
  "$numrpc" status "$server" | grep -v -E " 0 +0 +0 B +0 B +- +-$"
done
echo; echo "demo: done; the servers and the metaserver stop now."
