#!/usr/bin/env bash
# demo-run.sh -- the demo's steps on a built tree: a metaserver and two servers on
# 127.0.0.1 and real remote calls; --secure runs them with TLS, mutual TLS and tokens.
# usage: scripts/demo-run.sh BUILD_DIR [--secure] [--quick]
#   --secure  certificates (openssl req) and tokens (openssl rand -hex) made in a
#             temp dir; also shows clients refused (no token, no CA)
#   --quick   small Linpack and GridRPC sizes, and the GridRPC program as built
#             (tests/install/secure_demo_test.sh uses it)
set -euo pipefail
b=$(cd "${1:?usage: demo-run.sh BUILD_DIR [--secure] [--quick]}" && pwd)
shift
secure=0 quick=0
for arg in "$@"; do
  case $arg in
    --secure) secure=1 ;;
    --quick) quick=1 ;;
    *) echo "usage: demo-run.sh BUILD_DIR [--secure] [--quick]" >&2; exit 2 ;;
  esac
done
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

# make_pki DIR: a CA, a certificate for 127.0.0.1/localhost signed by it (the
# servers' and the metaserver's), a client certificate for mutual TLS, and
# tokens: "demo-client" may call and read status (and report to the
# metaserver), "demo-server" may join the metaserver. Secrets are 0600 files.
make_pki() {
  local d=$1 client_secret server_secret
  mkdir -p "$d"
  (
    cd "$d"
    umask 077
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
      -subj "/CN=numrpc demo CA" -keyout ca.key -out ca.pem 2>/dev/null
    # sign NAME SUBJECT EXTENSIONS: NAME.key and NAME.pem, signed by the CA.
    sign() {
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "$2" \
        -keyout "$1.key" -out "$1.csr" 2>/dev/null
      printf '%s\n' "$3" >"$1.ext"
      openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
        -extfile "$1.ext" -out "$1.pem" 2>/dev/null
      rm -f "$1.csr" "$1.ext"
    }
    sign server "/CN=localhost" \
      "subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth"
    sign client "/CN=demo-client" "extendedKeyUsage=clientAuth"
  )
  client_secret=$(openssl rand -hex 32)
  server_secret=$(openssl rand -hex 32)
  (
    umask 077
    echo "demo-client $client_secret" >"$d/client.token"
    echo "demo-server $server_secret" >"$d/server.token"
    echo "demo-client $client_secret call status" >"$d/server-tokens"
    printf 'demo-client %s call status report\ndemo-server %s join\n' \
      "$client_secret" "$server_secret" >"$d/metaserver-tokens"
  )
}

# Options for the metaserver, the servers and the clients.
meta_opts=() server_opts=()
if ((secure)); then
  pki="$run/pki"
  make_pki "$pki"
  # A server's link to the metaserver has no client certificate
  # (--metaserver-tls-ca only), so the metaserver checks servers and
  # clients by token alone; the servers require both.
  meta_opts=(--tls-cert "$pki/server.pem" --tls-key "$pki/server.key" --token-file "$pki/metaserver-tokens")
  server_opts=(--tls-cert "$pki/server.pem" --tls-key "$pki/server.key" --tls-client-ca "$pki/ca.pem"
    --token-file "$pki/server-tokens" --metaserver-tls-ca "$pki/ca.pem" --metaserver-token-file "$pki/server.token")
  export NUMRPC_TLS_CA="$pki/ca.pem" NUMRPC_TLS_CERT="$pki/client.pem" NUMRPC_TLS_KEY="$pki/client.key"
  export NUMRPC_TOKEN_FILE="$pki/client.token"
fi

"$b/metaserver/numrpc-metaserver" --bind 127.0.0.1 --port 0 --port-file "$run/meta.port" \
  --lease-ms 500 --quiet ${meta_opts[@]+"${meta_opts[@]}"} &
pids+=($!)
meta="127.0.0.1:$(port_of "$run/meta.port" numrpc-metaserver)"
servers=()
for name in a b; do
  "$b/server/numrpc-server" --bind 127.0.0.1 --port 0 --port-file "$run/$name.port" \
    --stubs "$b/stubs/.libs" --blas-threads 1 --workers 2 --admin-socket none --quiet \
    --metaserver "$meta" ${server_opts[@]+"${server_opts[@]}"} >/dev/null &
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
[[ $listed == 2 ]] || { echo "demo: the servers did not join the metaserver $meta" >&2; exit 1; }
export OPENBLAS_NUM_THREADS=1

if ((secure)); then
  echo "== TLS 1.3 with certificates made for this run (CA, 127.0.0.1/localhost, client) and tokens"
  echo "   NUMRPC_TLS_CA=$NUMRPC_TLS_CA NUMRPC_TLS_CERT=$NUMRPC_TLS_CERT"
  echo "   NUMRPC_TLS_KEY=$NUMRPC_TLS_KEY NUMRPC_TOKEN_FILE=$NUMRPC_TOKEN_FILE"
  echo; echo "== refused: clients missing one of the settings (each must fail)"
  # refused WHAT ENV-UNSETS...: a ping that must fail; prints its error.
  refused() {
    local what=$1 out
    shift
    if out=$(env "$@" "$numrpc" ping "${servers[0]}" 1 2>&1); then
      echo "demo: a client $what was let in" >&2; exit 1
    fi
    echo "client $what: $out"
  }
  refused "without the token" -u NUMRPC_TOKEN_FILE
  refused "without the CA" -u NUMRPC_TLS_CA -u NUMRPC_TLS_CERT -u NUMRPC_TLS_KEY
  echo
fi

echo "== metaserver $meta; servers ${servers[*]} joined with their measured speed"
"$numrpc" status --metaserver "$meta"
echo; echo "== routines offered by ${servers[0]} (numrpc list)"
"$numrpc" list "${servers[0]}" | paste -sd ' ' | fold -s -w 78
echo; echo "== the interface a client fetches at call time (numrpc describe linpack)"
NUMRPC_SERVER="${servers[0]}" "$numrpc" describe linpack
echo; echo "== a null call through a worker process (numrpc ping)"
"$numrpc" ping "${servers[0]}" 200

sizes=100,200,500,1000,2000 repeat=3 grid_n=400
((quick)) && sizes=100,200 repeat=1 grid_n=100
echo; echo "== Linpack: numrpc_call(\"linpack\", a, lda, n, ipvt, b, &info), the server chosen by the metaserver"
NUMRPC_METASERVER="$meta" "$b/apps/linpack/numrpc-linpack" --sizes $sizes --mode both --repeat $repeat

hsize=1000
((quick)) && hsize=200
echo; echo "== a data handle: A crosses once (numrpc_data_put), dgefa keeps its factors on the server,"
echo "   then dgesl with the handle; and 10 right-hand sides solved with the same factors"
NUMRPC_METASERVER="$meta" "$b/apps/linpack/numrpc-linpack" --sizes $hsize --mode handles,multisolve --rhs 10 \
  --repeat $repeat

if [[ -x "$b/apps/sdpa/sdpa-remote" && -r /usr/share/sdpa/example/example1.dat-s ]]; then
  echo; echo "== SDPA run remotely: the server reads the client's file on demand, then the file shipped whole"
  for mode in rfile ship; do
    NUMRPC_SERVER="${servers[1]}" "$b/apps/sdpa/sdpa-remote" /usr/share/sdpa/example/example1.dat-s --mode $mode
  done
fi

echo; echo "== a GridRPC program (GFD.52 only): dmmul blocking, then farmed asynchronously over both servers"
# (--quick: as `make check` built it, when it did)
((quick)) && [[ -x "$b/tests/gridrpc_matmul" ]] || make -s -C "$b/tests" gridrpc_matmul >/dev/null
printf 'servers = %s, %s\n' "${servers[0]}" "${servers[1]}" >"$run/grpc.conf"
"$b/tests/gridrpc_matmul" "$run/grpc.conf" $grid_n

echo; echo "== what the metaserver placed, predicted and measured"
"$numrpc" status --metaserver "$meta"
for server in "${servers[@]}"; do
  echo; echo "== a server's own counters (numrpc status $server; dmmul includes its speed measurement;"
  echo "   the handles above were freed: none is left)"
  "$numrpc" status "$server" | grep -v -E " 0 +0 +0 B +0 B +- +-$"
done
echo; echo "demo: done; the servers and the metaserver stop now."
