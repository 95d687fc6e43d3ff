#!/usr/bin/env bash
# tlsfuzzer_test.sh -- numrpc-server's TLS record layer against the
# tlslite-ng probes of tests/server/tlsfuzzer_checks.py (named after
# tlsfuzzer's TLS 1.3 scripts): a real server with a certificate made for
# the run on 127.0.0.1, the short set (about 1 s) by default, --full for all.
# usage: tlsfuzzer_test.sh [--full] [probe names...]
# Needs python3 with tlslite-ng: $TOP_BUILDDIR/tlsfuzzer-venv (bench/tlsfuzzer.sh
# makes it), else a python3 that imports tlslite; without either it SKIPs
# (exit 77): the suite never reaches for the network.
set -euo pipefail
top=${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${TOP_BUILDDIR:-$top/build}
mode=--short
if [[ ${1:-} == --full ]]; then mode=; shift; fi
python=
for p in "$build/tlsfuzzer-venv/bin/python" python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import tlslite' 2>/dev/null; then python=$p; break; fi
done
if [[ -z $python ]]; then
  echo "SKIP: no python with tlslite-ng (run bench/tlsfuzzer.sh once to make $build/tlsfuzzer-venv from PyPI)"
  exit 77
fi
server_bin=$build/server/numrpc-server
[[ -x $server_bin ]] || { echo "FAIL: no $server_bin"; exit 1; }
command -v openssl >/dev/null || { echo "SKIP: no openssl command to make the certificate"; exit 77; }

dir=$(mktemp -d /tmp/numrpc-tlsfuzzer-XXXXXX)
pid=
cleanup() {
  if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
# a CA and a server certificate (RSA: tlslite-ng's surest) for 127.0.0.1
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/ca.key" -out "$dir/ca.pem" -days 2 \
  -subj "/CN=numrpc tlsfuzzer CA" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout "$dir/server.key" -out "$dir/server.csr" -subj "/CN=localhost" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n' > "$dir/ext.cnf"
openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
  -out "$dir/server.pem" -days 2 -extfile "$dir/ext.cnf" 2>/dev/null

"$server_bin" --port 0 --bind 127.0.0.1 --port-file "$dir/port" --stubs "$build/stubs/.libs" \
  --tls-cert "$dir/server.pem" --tls-key "$dir/server.key" --admin-socket none --workers 2 \
  --blas-threads 1 --quiet > "$dir/server.log" 2>&1 &
pid=$!
for _ in $(seq 100); do [[ -s $dir/port ]] && break; sleep 0.1; done
[[ -s $dir/port ]] || { echo "FAIL: the server did not start"; cat "$dir/server.log"; exit 1; }
rc=0
"$python" "$top/tests/server/tlsfuzzer_checks.py" -p "$(cat "$dir/port")" $mode "$@" || rc=$?
if ! kill -0 "$pid" 2>/dev/null; then echo "FAIL: the server died"; rc=1; fi
if [[ $rc != 0 ]]; then echo "-- server log:"; cat "$dir/server.log"; fi
exit $rc
