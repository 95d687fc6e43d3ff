#!/usr/bin/env bash
# tls_figures.sh -- the trust issue's figures in one run: TLS against plain
# TCP (ping, 8 MiB, handshakes, Linpack n=1000 one call) and tokens' cost.
# usage: bench/tls_figures.sh [BUILD_DIR=build] [ROUNDS=7] [SIZES=1000,2000]
#   Every pair is measured interleaved (plain, then TLS, round after round);
#   each line gives the median and spread (min..max) and the ratio of medians.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
rounds=${2:-7}
n=${3:-1000,2000}
[[ $rounds =~ ^[1-9][0-9]?$ && $n =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || { sed -n 4,6p "$0" >&2; exit 2; }
. "$top/bench/servers.sh"
bench_setup tls-figures

bench_machine
echo "== AES-128-GCM alone on one core (openssl speed, 16 KiB blocks: the record size):"
openssl speed -evp aes-128-gcm -bytes 16384 -seconds 2 2>/dev/null | awk '/^aes-128-gcm|^AES-128-GCM/ {print "   " $0}'

echo "== record layers on loopback (numrpc-bench-tls):"
"$build/bench/numrpc-bench-tls"
echo "== numrpc-server itself (numrpc-bench-tls --server):"
"$build/bench/numrpc-bench-tls" --server "$build/server/numrpc-server" --stubs "$build/stubs/.libs"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$tmp/key.pem" -out "$tmp/cert.pem" >/dev/null 2>&1
bench_server plain --workers 1 --blas-threads 1
bench_server tls --workers 1 --blas-threads 1 --tls-cert "$tmp/cert.pem" --tls-key "$tmp/key.pem"
for r in $(seq "$rounds"); do
    for name in plain tls; do
        ca=
        [[ $name == tls ]] && ca=$tmp/cert.pem
        NUMRPC_SERVER="127.0.0.1:$(cat "$tmp/$name.port")" NUMRPC_TLS_CA=$ca timeout 300 \
            "$build/apps/linpack/numrpc-linpack" --sizes "$n" --repeat 5 --mode linpack \
            --csv "$tmp/$name.$r.csv" >/dev/null
    done
done
echo "== warm call (numrpc-goodcalls, dcopy n=16 on a warm connection), $rounds interleaved rounds:"
for r in $(seq "$rounds"); do
    for name in plain tls; do
        ca=
        [[ $name == tls ]] && ca=$tmp/cert.pem
        NUMRPC_TLS_CA=$ca timeout 300 "$build/bench/numrpc-goodcalls" --server "127.0.0.1:$(cat "$tmp/$name.port")" \
            --calls 2000 --procs 1 --fresh-every 0 --label "$name" --csv "$tmp/warm-$name.$r.csv" >/dev/null
    done
done
python3 "$top/bench/warm_medians.py" "$tmp" "$rounds" warm-plain warm-tls

echo "== Linpack n=$n, one call (numrpc-linpack --mode linpack, best of 5 per round), $rounds interleaved rounds:"
python3 - "$tmp" "$rounds" <<'PY'
import csv, statistics, sys
tmp, rounds = sys.argv[1], int(sys.argv[2])
rows = {}  # (name, n) -> [(mflops, send seconds)]
for name in ("plain", "tls"):
    for r in range(1, rounds + 1):
        for x in csv.reader(open(f"{tmp}/{name}.{r}.csv")):
            if x and x[0].isdigit() and x[5]:
                rows.setdefault((name, int(x[0])), []).append((float(x[5]), float(x[7])))
for n in sorted({k[1] for k in rows}):
    med = {}
    for name in ("plain", "tls"):
        v = rows[(name, n)]
        mf = [a for a, _ in v]
        med[name] = statistics.median(mf)
        send = statistics.median([b for _, b in v]) * 1e3
        print(f"   n={n:5d} {name:5s} remote MFLOPS: median {med[name]:8.1f}  spread {min(mf):.1f}..{max(mf):.1f}"
              f"  request sent in {send:.1f} ms ({len(v)} rounds)")
    print(f"   n={n:5d} ratio tls/plain: {med['tls'] / med['plain']:.3f}")
PY

echo "== tokens without TLS, warm dcopy n=16 (bench/tokens_ping.sh):"
"$top/bench/tokens_ping.sh" "$build" 5 2000
