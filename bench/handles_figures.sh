#!/usr/bin/env bash
# handles_figures.sh -- issue 16's figures in one run: Linpack through a handle,
# 10 solves after one factorization, and put/get throughput, on one server.
# usage: bench/handles_figures.sh [BUILD_DIR=build] [ROUNDS=5]   (about 20 s a round)
#   One numrpc-server on 127.0.0.1 (--blas-threads 1), OPENBLAS_NUM_THREADS=1;
#   every figure is measured round after round (interleaved); each line gives
#   the median, the spread (min..max) and the ratio of medians.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
rounds=${2:-5}
[[ $rounds =~ ^[1-9][0-9]?$ ]] || { sed -n 4,7p "$0" >&2; exit 2; }
. "$top/bench/servers.sh"
bench_setup handles-figures
export OPENBLAS_NUM_THREADS=1

bench_machine
bench_server server --workers 2 --blas-threads 1
export NUMRPC_SERVER="127.0.0.1:$(cat "$tmp/server.port")"
linpack="$build/apps/linpack/numrpc-linpack"

# Per round: n = 1000 (best of 3 after a warm-up), n = 4000 (one solve, no
# warm-up: the first call's connection and interface fetch are a few ms of
# seconds), the multi-solve at n = 2000 (best of 1 after a one-solve warm-up),
# then put/get (the median of three rounds of numrpc-bench-handles after its
# warm-up: a worker maps a spare file the first time it takes one).
for r in $(seq "$rounds"); do
    modes=linpack,dgefa+dgesl,handles
    timeout 300 "$linpack" --sizes 1000 --repeat 3 --mode $modes --csv "$tmp/l1000.$r.csv" >/dev/null
    timeout 300 "$linpack" --sizes 4000 --repeat 1 --warmup 0 --mode $modes --csv "$tmp/l4000.$r.csv" >/dev/null
    timeout 300 "$linpack" --sizes 2000 --repeat 1 --mode multisolve --rhs 10 --csv "$tmp/ms.$r.csv" >/dev/null
    timeout 300 "$build/bench/numrpc-bench-handles" "$NUMRPC_SERVER" 64 3 >"$tmp/pg.$r.txt"
done

python3 - "$tmp" "$rounds" <<'PY'
import csv, re, statistics, sys
tmp, rounds = sys.argv[1], int(sys.argv[2])

def rows(pattern):
    out = []
    for r in range(1, rounds + 1):
        out += [x for x in csv.DictReader(open(f"{tmp}/{pattern}.{r}.csv"))]
    return out

def spread(v, fmt="%.1f"):
    return f"median {fmt % statistics.median(v)}  spread {fmt % min(v)}..{fmt % max(v)}"

def verdict(ok):
    return "met" if ok else "MISSED"

print(f"== Linpack, remote MFLOPS ({rounds} rounds; n = 1000 best of 3 per round, n = 4000 one solve)")
for n, name in ((1000, "l1000"), (4000, "l4000")):
    med = {}
    for mode in ("linpack", "dgefa+dgesl", "handles"):
        v = [float(x["remote_mflops"]) for x in rows(name) if x["mode"] == mode]
        byt = statistics.median([int(x["bytes"]) for x in rows(name) if x["mode"] == mode])
        med[mode] = statistics.median(v)
        print(f"   n={n:5d} {mode:12s} {spread(v)}  ({byt / 1e6:.1f} MB on the wire)")
    loc = statistics.median([float(x["local_mflops"]) for x in rows(name) if x["mode"] == "linpack"])
    hl = med["handles"] / med["linpack"]
    print(f"   n={n:5d} local LAPACK {loc:.1f}; of local: linpack {med['linpack'] / loc:.3f}, "
          f"dgefa+dgesl {med['dgefa+dgesl'] / loc:.3f}, handles {med['handles'] / loc:.3f}")
    print(f"   n={n:5d} handles / linpack {hl:.3f} (target >= 0.97: {verdict(hl >= 0.97)}); "
          f"handles / dgefa+dgesl {med['handles'] / med['dgefa+dgesl']:.3f}")

print(f"\n== 10 solves after one factorization, n = 2000 ({rounds} rounds, seconds)")
ms = rows("ms")
fig = {k: [float(x[k]) for x in ms] for k in ("remote_s", "linpacks_s", "local_s", "transfer_s", "solve_s")}
lx = [float(x["local_s"]) + float(x["transfer_s"]) for x in ms]
print(f"   handles: put + dgetrf + 10 dgetrs + free {spread(fig['remote_s'], '%.3f')}")
print(f"   one dgetrs on the handle (ms)            {spread([s * 1e3 for s in fig['solve_s']], '%.2f')}")
print(f"   10 one-call linpacks                      {spread(fig['linpacks_s'], '%.3f')}")
print(f"   local dgetrf + 10 dgetrs                  {spread(fig['local_s'], '%.3f')}")
print(f"   one transfer of A (a put, alone)          {spread(fig['transfer_s'], '%.3f')}")
print(f"   local + one transfer                      {spread(lx, '%.3f')}")
h = statistics.median(fig["remote_s"])
faster = statistics.median(fig["linpacks_s"]) / h
vs = h / statistics.median(lx)
print(f"   10 linpacks / handles {faster:.2f}x (target >= 5: {verdict(faster >= 5)})")
print(f"   handles / (local + transfer) {vs:.3f} (target <= 1.10: {verdict(vs <= 1.10)})")

print(f"\n== put and get, 64 MiB ({rounds} rounds, MB/s)")
val = {}
for r in range(1, rounds + 1):
    for line in open(f"{tmp}/pg.{r}.txt"):
        m = re.match(r"\s+(.+?)\s+median\s+([0-9.]+) MB/s", line)
        if m:
            val.setdefault(m.group(1), []).append(float(m.group(2)))
for k, v in val.items():
    print(f"   {k:32s} {spread(v)}")
med = {k: statistics.median(v) for k, v in val.items()}
put, get = med["numrpc_data_put (wall)"], med["numrpc_data_get (wall)"]
for what, a, b in (("put / dcopy x out", put, med["dcopy: x out (send_seconds)"]),
                   ("put / dnrm2 x out", put, med["dnrm2: x out (wall - compute)"]),
                   ("get / dcopy y back", get, med["dcopy: y back (receive_seconds)"]),
                   ("put / half a dcopy", put, med["dcopy: half the round trip"]),
                   ("get / half a dcopy", get, med["dcopy: half the round trip"])):
    print(f"   {what:20s} {a / b:.3f} (target >= 0.95: {verdict(a / b >= 0.95)})")
PY
