# mpi_figures.py -- issue 19's figures: dgesv through the MPI path (pdgesv on 1, 2, 4 ranks) against the
# single-process LAPACK path and local LAPACK, the time split, a fresh mpirun's cost, and the model beside each.
"""Run by bench/mpi_figures.sh, which starts the servers and measures the MPI link; see its header."""
import argparse
import csv
import math
import os
import re
import statistics
import sys
import time
import urllib.request

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # local LAPACK on one core, before numpy loads it
import numpy as np  # noqa: E402
import scipy.linalg.lapack as lapack  # noqa: E402

import numrpc  # noqa: E402

CORES = os.cpu_count()


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--lapack", action="append", default=[], metavar="THREADS=HOST:PORT",
                   help="a server of the single-process path with that many BLAS threads")
    p.add_argument("--mpi", action="append", default=[], metavar="RANKS=HOST:PORT=METRICS_URL",
                   help="a server whose MPI job has RANKS ranks, and its /metrics")
    p.add_argument("--sizes", default="1000,2000,4000,6000,8000")
    p.add_argument("--rounds", type=int, default=3, choices=range(1, 20), metavar="1..19")
    p.add_argument("--calibrate", type=int, help="the size the model's constants are fitted at "
                                                 "(default: 2000 if measured, else the second size)")
    p.add_argument("--link", required=True, metavar="T_M,T_V", help="the MPI link: seconds a message, a byte")
    p.add_argument("--fresh", default="", metavar="RANKS=START,STOP;...",
                   help="a fresh mpirun's seconds to a ready job and to its end, per rank count")
    p.add_argument("--block", type=int, default=64)
    p.add_argument("--grids", default="1=1x1,2=1x2,4=2x2", help="each MPI job's process grid, RANKS=PxQ,...")
    p.add_argument("--from-csv", action="store_true", help="report the rows of --csv again instead of measuring")
    p.add_argument("--csv", required=True)
    p.add_argument("--plot", default="")
    return p.parse_args()


def phases(url):
    """pdgesv's summed phase seconds on a server: {"scatter": s, "compute": s, "gather": s}."""
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    out = {"scatter": 0.0, "compute": 0.0, "gather": 0.0}
    for m in re.finditer(r'^numrpc_mpi_phase_seconds_total\{([^}]*)\} (\S+)$', text, re.M):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        if labels.get("routine") == "pdgesv" and labels.get("phase") in out:
            out[labels["phase"]] += float(m.group(2))
    return out


def system(n, seed):
    rng = np.random.default_rng(seed)
    a = np.asfortranarray(rng.standard_normal((n, n)))
    b = np.asfortranarray(rng.standard_normal((n, 1)))
    return a, b


def check(name, n, x, reference):
    """The solution agrees with local LAPACK's (a benchmark checks what it times)."""
    err = np.linalg.norm(x - reference, 1) / max(np.linalg.norm(reference, 1), 1e-300)
    if not err < 1e-6:
        sys.exit(f"mpi_figures: {name} at n = {n} differs from local LAPACK by {err:.2e}")


def call_once(name, addr, url, ranks, n, a, b, x_ref):
    """One dgesv (pdgesv on an MPI job) on copies of a and b: its row of figures, the solution checked."""
    routine = f"numrpc://{addr}/{'pdgesv' if ranks else 'dgesv'}"
    ac, bc = a.copy(order="F"), b.copy(order="F")
    ipiv = np.zeros(n, dtype=np.int32)
    before = phases(url) if url else None
    t0 = time.perf_counter()
    info = numrpc.call(routine, n, 1, ac, n, ipiv, bc, n)
    seconds = time.perf_counter() - t0
    call = numrpc.last_call_info()
    if info != 0:
        sys.exit(f"mpi_figures: {name} info {info} at n = {n}")
    check(name, n, bc, x_ref)
    row = dict(n=n, path=name, ranks=ranks or 0, seconds=seconds, send=call.send_seconds,
               compute=call.compute_seconds, receive=call.receive_seconds, bytes=call.bytes_sent + call.bytes_received)
    if url:
        after = phases(url)
        row.update({f"mpi_{k}": after[k] - before[k] for k in after})
    return row


def measure(args):
    sizes = [int(s) for s in args.sizes.split(",")]
    lapack_paths = [(f"LAPACK path, {t} thread{'s' if t != '1' else ''}", addr, None, None)
                    for t, addr in (x.split("=", 1) for x in args.lapack)]
    mpi_paths = [(f"MPI path, {r} rank{'s' if r != '1' else ''}", addr, url, int(r))
                 for r, addr, url in (x.split("=", 2) for x in args.mpi)]
    rows = []
    for rnd in range(args.rounds + 1):  # round 0 warms every path up (connections, interfaces, pages)
        for n in sizes if rnd else [min(sizes)]:
            a, b = system(n, 1000 * rnd + n)
            reps = 5 if n <= 2000 else 1  # small sizes: 5 calls a round (their noise is milliseconds)
            for _ in range(reps):
                t0 = time.perf_counter()
                _, _, x_ref, info = lapack.dgesv(a, b)
                local = time.perf_counter() - t0
                if info != 0:
                    sys.exit(f"mpi_figures: local dgesv info {info}")
                if rnd:
                    rows.append(dict(round=rnd, n=n, path="local LAPACK, 1 thread", ranks=0, seconds=local))
            for name, addr, url, ranks in lapack_paths + mpi_paths:
                for _ in range(reps):
                    row = call_once(name, addr, url, ranks, n, a, b, x_ref)
                    row["round"] = rnd
                    if rnd:
                        rows.append(row)
            print(f"   round {rnd} n = {n} done", file=sys.stderr, flush=True)
    return rows


def med(rows, key, **where):
    v = [r[key] for r in rows if all(r.get(k) == w for k, w in where.items())]
    return statistics.median(v) if v else math.nan


def spread(rows, key, **where):
    v = [r[key] for r in rows if all(r.get(k) == w for k, w in where.items())]
    return (min(v), max(v)) if v else (math.nan, math.nan)


class Model:
    """The MPI path's seconds for order n on P = P_r x P_c ranks (docs/deploy.md, "Scaling model"):
    T = transfer + scatter + compute + gather, with
      transfer = tau bytes                       (client <-> server <-> rank 0, both ways)
      scatter  = gather = 8 n^2 (c + (P-1)/P t_v) + P t_m   (rank 0 packs each part and sends it)
      compute  = a n^3 / min(P, cores)           (the trailing updates: dgemm, spread over the grid)
               + b n^2 / P_r                     (the panels: one process column at a time)
               + (1 - 1/P) [(3 + log2(P)/4) 8 n^2 / sqrt(P) t_v + (6 + log2 P) n t_m]
                                                 (the ScaLAPACK Users' Guide's LU communication)
               + s n / nb  when P > cores        (a panel step's wait while ranks share a core)
    t_m, t_v: the ping-pong.  Fitted, on the fewest rows: a and b on one rank at the two smallest
    sizes, tau and c on one rank at the calibration size, s on the oversubscribed job at the
    smallest size.  Every other row is a prediction."""

    def __init__(self, rows, n_c, t_m, t_v, nb, grids):
        self.t_m, self.t_v, self.nb, self.grids = t_m, t_v, nb, grids
        self.fitted = set()
        name = {r["ranks"]: r["path"] for r in rows if r["ranks"]}
        sizes = sorted({r["n"] for r in rows})
        n1, n2 = sizes[0], sizes[1]
        c1, c2 = (med(rows, "mpi_compute", path=name[1], n=n) for n in (n1, n2))
        # c(n) = a n^3 + b n^2 at n1 and n2
        self.a = (c2 / n2 ** 2 - c1 / n1 ** 2) / (n2 - n1)
        self.b = c1 / n1 ** 2 - self.a * n1
        one = dict(path=name[1], n=n_c)
        outside = med(rows, "seconds", **one) - sum(med(rows, f"mpi_{k}", **one) for k in ("scatter", "compute", "gather"))
        self.tau = outside / med(rows, "bytes", **one)
        self.c = (med(rows, "mpi_scatter", **one) + med(rows, "mpi_gather", **one)) / 2 / (8 * n_c * n_c)
        self.fitted |= {(1, n1), (1, n2), (1, n_c)}
        self.s = 0.0
        over = [p for p in name if p > CORES]
        if over:
            p = min(over)
            self.s = (med(rows, "mpi_compute", path=name[p], n=n1) - self.compute(n1, p, with_s=False)) / (n1 / nb)
            self.fitted.add((p, n1))

    def compute(self, n, p, with_s=True):
        prow = self.grids.get(p, (1, p))[0]
        lu_comm = (1 - 1 / p) * ((3 + math.log2(p) / 4) * 8 * n * n / math.sqrt(p) * self.t_v
                                 + (6 + math.log2(p)) * n * self.t_m)
        over = self.s * n / self.nb if with_s and p > CORES else 0.0
        return self.a * n ** 3 / min(p, CORES) + self.b * n * n / prow + lu_comm + over

    def parts(self, n, p, nbytes):
        move = 8 * n * n * (self.c + (p - 1) / p * self.t_v) + p * self.t_m
        return dict(transfer=self.tau * nbytes, scatter=move, compute=self.compute(n, p), gather=move)

    def seconds(self, n, p, nbytes):
        return sum(self.parts(n, p, nbytes).values())


def report(args, rows):
    sizes = sorted({r["n"] for r in rows})
    paths = list(dict.fromkeys(r["path"] for r in rows))
    t_m, t_v = (float(x) for x in args.link.split(","))
    if args.calibrate not in sizes:
        args.calibrate = 2000 if 2000 in sizes else sizes[min(1, len(sizes) - 1)]
    grids = {int(r): tuple(int(x) for x in g.split("x")) for r, g in (i.split("=") for i in args.grids.split(","))}
    model = Model(rows, args.calibrate, t_m, t_v, args.block, grids)
    fresh = {int(r): tuple(float(x) for x in v.split(",")) for r, v in
             (item.split("=") for item in args.fresh.split(";") if item)}

    print(f"\n### Seconds and MFLOPS of dgesv (nrhs 1): median [min..max] of {args.rounds} rounds\n")
    print("| n | " + " | ".join(paths) + " |")
    print("|---" * (len(paths) + 1) + "|")
    for n in sizes:
        flops = 2 / 3 * n ** 3 + 2 * n * n
        cells = []
        for p in paths:
            s, (lo, hi) = med(rows, "seconds", path=p, n=n), spread(rows, "seconds", path=p, n=n)
            cells.append(f"{s:.3f} s [{lo:.3f}..{hi:.3f}], {flops / s / 1e6:,.0f} MFLOPS".replace(",", " "))
        print(f"| {n} | " + " | ".join(cells) + " |")

    print("\n### The MPI path's time split, and the model beside it (seconds, medians)\n")
    print(f"Model constants: t_m = {t_m * 1e6:.2f} µs, t_v = {t_v * 1e9:.3f} ns/byte (ping-pong between two ranks); "
          f"fitted: a = {model.a * 1e12:.3f} ps (1 / {1 / model.a / 1.5e9:.1f} GFLOPS of 2/3 n³), "
          f"b = {model.b * 1e9:.3f} ns (one rank at n = {', '.join(str(n) for p, n in sorted(model.fitted) if p == 1)}), "
          f"tau = {model.tau * 1e9:.3f} ns/byte, c = {model.c * 1e9:.3f} ns/byte (one rank at n = {args.calibrate}), "
          f"s = {model.s * 1e3:.3f} ms a panel step when ranks share a core. {CORES} cores: 4 ranks are oversubscribed "
          f"(2 per core). Grids: {args.grids}; block {args.block}.\n")
    print("| n | ranks | transfer | scatter | compute | gather | measured | predicted | error |")
    print("|---|---|---|---|---|---|---|---|---|")
    errors = []
    for p in sorted({r["ranks"] for r in rows if r["ranks"]}):
        name = next(r["path"] for r in rows if r["ranks"] == p)
        for n in sizes:
            w = dict(path=name, n=n)
            total = med(rows, "seconds", **w)
            split = {k: med(rows, f"mpi_{k}", **w) for k in ("scatter", "compute", "gather")}
            transfer = total - sum(split.values())
            predicted = model.seconds(n, p, med(rows, "bytes", **w))
            err = predicted / total - 1
            fitted = (p, n) in model.fitted
            if not fitted:
                errors.append(abs(err))
            print(f"| {n} | {p}{' (oversubscribed)' if p > CORES else ''} | {transfer:.3f} | {split['scatter']:.3f} | "
                  f"{split['compute']:.3f} | {split['gather']:.3f} | {total:.3f} | {predicted:.3f} | "
                  f"{err * 100:+.1f} %{' (fitted here)' if fitted else ''} |")
    if errors:
        worst = max(errors)
        print(f"\nModel against measurement, every row but the fitted ones: median |error| "
              f"{statistics.median(errors) * 100:.1f} %, worst {worst * 100:.1f} % "
              f"(target within 15 %: {'met' if worst <= 0.15 else 'MISSED'})")

    if fresh:
        print("\n### The resident job against a fresh mpirun per call\n")
        print("| ranks | fresh mpirun: start to ready, s | its end, s | resident: pdgesv n = "
              f"{sizes[0]} outside the routine's phases, s | a fresh mpirun per call would add |")
        print("|---|---|---|---|---|")
        for p, (start, stop) in sorted(fresh.items()):
            name = next((r["path"] for r in rows if r["ranks"] == p), None)
            if name is None:
                continue
            w = dict(path=name, n=sizes[0])
            outside = med(rows, "seconds", **w) - sum(med(rows, f"mpi_{k}", **w) for k in ("scatter", "compute", "gather"))
            print(f"| {p} | {start:.3f} | {stop:.3f} | {outside:.4f} | {start + stop:.3f} s "
                  f"({(start + stop) / med(rows, 'seconds', **w):.1f}× the whole resident call at n = {sizes[0]}) |")
    return model


def project(model):
    """On paper: P nodes of 32 cores, one rank each with a node's BLAS threads, on 10 GbE (docs/deploy.md)."""
    cores, t_m, t_v, tau = 32, 25e-6, 1 / 1.1e9, 1 / 1.1e9  # a node's cores; 10 GbE; the client link the same
    rate = 2 / 3 / model.a  # ScaLAPACK's trailing-update flops a second on one core here
    print(f"\n### Projected on paper: P nodes of {cores} cores (one rank each, {cores} BLAS threads at this "
          f"machine's {rate / 1e9:.1f} GFLOPS a core for the updates; the panels on one core), 10 GbE between "
          f"them and to the client (t_m = 25 µs, t_v = 0.91 ns/byte), square grids\n")
    print("| n | memory of A | P | transfer | scatter + gather | compute | total | GFLOPS |")
    print("|---|---|---|---|---|---|---|---|")
    for n in (20000, 50000, 100000):
        for p in (1, 4, 16):
            if 8 * n * n / p > 64e9:
                continue  # does not fit a 64 GB node
            move = 8 * n * n * (model.c + (p - 1) / p * t_v) + p * t_m
            lu = (1 - 1 / p) * ((3 + math.log2(p) / 4) * 8 * n * n / math.sqrt(p) * t_v + (6 + math.log2(p)) * n * t_m)
            compute = model.a * n ** 3 / (cores * p) + model.b * n * n / math.isqrt(p) + lu
            transfer = tau * 8 * (2 * n * n + 2 * n)
            total = transfer + 2 * move + compute
            print(f"| {n} | {8 * n * n / 1e9:.0f} GB | {p} | {transfer:.1f} s | {2 * move:.1f} s | {compute:.1f} s | "
                  f"{total:.1f} s | {2 / 3 * n ** 3 / total / 1e9:.0f} |")


def plot(args, rows, model):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    sizes = sorted({r["n"] for r in rows})
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for p in dict.fromkeys(r["path"] for r in rows):
        ax.plot(sizes, [2 / 3 * n ** 3 / med(rows, "seconds", path=p, n=n) / 1e6 for n in sizes], marker="o", label=p)
    for p in sorted({r["ranks"] for r in rows if r["ranks"]}):
        name = next(r["path"] for r in rows if r["ranks"] == p)
        ax.plot(sizes, [2 / 3 * n ** 3 / model.seconds(n, p, med(rows, "bytes", path=name, n=n)) / 1e6 for n in sizes],
                linestyle=":", color="grey")
    ax.set_xlabel("n (dgesv, nrhs 1)")
    ax.set_ylabel("MFLOPS (2/3 n³ / seconds)")
    ax.set_title(f"numrpc dgesv, {CORES} cores: MPI path, LAPACK path, local\n(dotted: the model for the MPI path)", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.plot, dpi=110)
    print(f"\n(plot: {args.plot})")


def main():
    args = parse_args()
    if args.from_csv:
        with open(args.csv, newline="") as f:
            rows = [{k: (v if k == "path" else int(v) if k in ("round", "n", "ranks", "bytes") else float(v))
                     for k, v in r.items() if v != ""} for r in csv.DictReader(f)]
    else:
        rows = measure(args)
        with open(args.csv, "w", newline="") as f:
            keys = list(dict.fromkeys(k for r in rows for k in r))
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)
    model = report(args, rows)
    project(model)
    if args.plot:
        plot(args, rows, model)


if __name__ == "__main__":
    main()
