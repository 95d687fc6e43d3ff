#!/usr/bin/env bash
# isolation_ab.sh -- issue 27's figures: a revision's server against another's,
# interleaved on loopback: null call and 8 MiB, plain and TLS, warm and fresh TLS calls.
# usage: bench/isolation_ab.sh REV_BEFORE REV_AFTER [ROUNDS=5]
#   plain ping and 8 MiB come from bench/ab_quick.sh (which builds both revisions
#   in AB_CACHE, default /tmp/numrpc-ab); then, alternating revisions round by
#   round: numrpc-bench-tls --server (PROBE ping and 8 MiB each way to a plain
#   and a TLS server, 20 interleaved runs) and numrpc-goodcalls on a TLS server,
#   warm (one connection) and fresh (a new connection, resumed handshake, per call).
set -euo pipefail
[[ $# -ge 2 && $# -le 3 ]] || { sed -n 4,9p "$0" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
rounds=${3:-5}
[[ $rounds =~ ^[1-9][0-9]?$ ]] || { echo "isolation_ab.sh: ROUNDS is 1..99" >&2; exit 2; }
export AB_CACHE=${AB_CACHE:-/tmp/numrpc-ab}
sha() { git -C "$top" rev-parse --verify --quiet "$1^{commit}" || { echo "isolation_ab.sh: no revision '$1'" >&2; exit 2; }; }
before=$(sha "$1")
after=$(sha "$2")

echo "== plain TCP, numrpc-bench-transfer --quick (bench/ab_quick.sh $1 $2 $rounds):"
"$top/bench/ab_quick.sh" "$before" "$after" "$rounds"
declare -A dir=([before]=$AB_CACHE/$before/build [after]=$AB_CACHE/$after/build)

build=${dir[after]} # servers.sh's bench_server starts $build's server
. "$top/bench/servers.sh"
bench_setup isolation-ab
bench_machine
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$tmp/key.pem" -out "$tmp/cert.pem" >/dev/null 2>&1

for r in $(seq "$rounds"); do
    for side in before after; do
        build=${dir[$side]}
        echo "isolation_ab.sh: round $r of $rounds: $side" >&2
        timeout 600 "$build/bench/numrpc-bench-tls" --server "$build/server/numrpc-server" --stubs "$build/stubs/.libs" \
            >"$tmp/probe-$side.$r.txt"
        bench_server "tls-$side-$r" --workers 1 --blas-threads 1 --tls-cert "$tmp/cert.pem" --tls-key "$tmp/key.pem"
        for fresh in 0 1; do
            label=warm
            [[ $fresh == 1 ]] && label=fresh
            NUMRPC_TLS_CA=$tmp/cert.pem timeout 300 "$build/bench/numrpc-goodcalls" \
                --server "127.0.0.1:$(cat "$tmp/tls-$side-$r.port")" --calls 1000 --procs 1 --fresh-every "$fresh" \
                --label "$label-$side" --csv "$tmp/$label-$side.$r.csv" >/dev/null
        done
        kill "${pids[-1]}" && wait "${pids[-1]}" 2>/dev/null || true
    done
done

echo "== numrpc-server, PROBE over plain TCP and TLS (numrpc-bench-tls --server), $rounds rounds per revision:"
echo "   per round the median of 20 interleaved runs; here the median of the rounds [min..max]"
python3 - "$tmp" "$rounds" <<'PY'
import re, statistics, sys
tmp, rounds = sys.argv[1], int(sys.argv[2])
line = re.compile(r"^(PROBE ping|PROBE 8 MiB each way)\s+tcp ([\d.]+) (\w+) \S+\s+tls ([\d.]+)")
vals = {}
for side in ("before", "after"):
    for r in range(1, rounds + 1):
        for l in open(f"{tmp}/probe-{side}.{r}.txt"):
            m = line.match(l)
            if m:
                vals.setdefault((m[1], "tcp", m[3]), {}).setdefault(side, []).append(float(m[2]))
                vals.setdefault((m[1], "tls", m[3]), {}).setdefault(side, []).append(float(m[4]))
for (what, kind, unit), by in vals.items():
    b, a = statistics.median(by["before"]), statistics.median(by["after"])
    cell = lambda v: f"{statistics.median(v):8.1f} [{min(v):.1f}..{max(v):.1f}]"
    print(f"   {what:22s} {kind}  before {cell(by['before'])} {unit}  after {cell(by['after'])} {unit}"
          f"  after/before {a / b:.3f}")
PY
echo "== TLS dcopy n=16, warm connection and fresh connection per call (numrpc-goodcalls, 1000 calls a round):"
python3 "$top/bench/warm_medians.py" "$tmp" "$rounds" warm-before warm-after
python3 "$top/bench/warm_medians.py" "$tmp" "$rounds" fresh-before fresh-after
