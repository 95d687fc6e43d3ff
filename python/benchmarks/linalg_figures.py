# linalg_figures.py -- issue 30's numrpc.linalg figures, rounds interleaved: solve's own cost over the raw dgesv
# call (n = 4), lu_factor + 10 lu_solve against 10 solve (n = 2000), and the same workload as Dask futures.
#   python3 linalg_figures.py --server HOST:PORT [--rounds 5] [--pin CLIENT,SERVER] [--no-dask] [--tiny]
# bench/linalg_figures.sh runs it against one pinned server, with Dask from PyPI; without Dask, (c) is skipped.
import argparse
import contextlib
import dataclasses
import os
import platform
import signal
import statistics
import sys
import time
from collections import defaultdict

import numpy as np
import scipy
import scipy.linalg as sl

import numrpc
import numrpc.linalg as la

CALL_TIMEOUT = 120  # seconds, every numrpc call
MB = 1e6


@dataclasses.dataclass(frozen=True)
class Sizes:
    """What a round measures."""
    small_n: int = 4
    small_calls: int = 2000  # each of raw dgesv and la.solve, interleaved call by call
    async_calls: int = 500
    big_n: int = 2000
    rhs: int = 10  # right-hand sides, each its own lu_solve / solve


FULL = Sizes()
TINY = Sizes(small_calls=50, async_calls=20, big_n=200)


def expect(ok, what):
    """Raises AssertionError (also under python -O) when a result is wrong."""
    if not ok:
        raise AssertionError(what)


@contextlib.contextmanager
def pinned(cpu):
    """The calling thread on CPU cpu meanwhile (None: as it is)."""
    before = os.sched_getaffinity(0)
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def system(n, seed):
    """A well-conditioned n x n matrix (Fortran order) and a right-hand side."""
    rng = np.random.default_rng(seed)
    return np.asfortranarray(rng.standard_normal((n, n)) + n * np.eye(n)), rng.standard_normal(n)


# ---- (a) solve's own cost: la.solve against numrpc.call("dgesv") on the same system ----

def overhead_round(samples, sizes, where=""):
    """(a) once: per-call medians into the figures named with where (the client's placement)."""
    n = sizes.small_n
    a0, b0 = system(n, 1)
    c_ordered = np.ascontiguousarray(a0)
    want = np.linalg.solve(a0, b0)
    a, x = a0.copy(order="F"), b0.copy()
    clock = time.perf_counter
    raw, mine, mine_c = [], [], []
    for _ in range(sizes.small_calls):
        a[...], x[...] = a0, b0  # dgesv overwrites both: fresh copies, untimed
        t = clock()
        numrpc.call("dgesv", n, 1, a, n, None, x, n)
        raw.append(clock() - t)
        t = clock()
        got = la.solve(a0, b0)
        mine.append(clock() - t)
        t = clock()
        got_c = la.solve(c_ordered, b0)
        mine_c.append(clock() - t)
    expect(np.allclose(x, want) and np.allclose(got, want) and np.allclose(got_c, want), "n = 4: a solve differs")
    samples["raw dgesv" + where].append(statistics.median(raw))
    samples["la.solve" + where].append(statistics.median(mine))
    samples["la.solve C-ordered" + where].append(statistics.median(mine_c))
    if where:
        return
    raw, mine = [], []
    for _ in range(sizes.async_calls):
        a[...], x[...] = a0, b0
        t = clock()
        numrpc.call_async("dgesv", n, 1, a, n, None, x, n).result(timeout=CALL_TIMEOUT)
        raw.append(clock() - t)
        t = clock()
        got = la.solve(a0, b0, block=False).result(timeout=CALL_TIMEOUT)
        mine.append(clock() - t)
    expect(np.allclose(x, want) and np.allclose(got, want), "n = 4: an asynchronous solve differs")
    samples["raw dgesv future"].append(statistics.median(raw))
    samples["la.solve future"].append(statistics.median(mine))


# ---- (b) factors kept on the server against a solve per right-hand side; (c) the same through Dask ----

def factor_round(samples, a, bs, want):
    clock = time.perf_counter
    t = clock()
    lu, piv = la.lu_factor(a)
    factor_bytes = sum(c.bytes_sent for c in la.last_calls())
    xs, solve_bytes = [], []
    for b in bs:
        xs.append(la.lu_solve((lu, piv), b))
        solve_bytes.append(la.last_calls()[0].bytes_sent)
    samples["lu_factor + lu_solves"].append(clock() - t)
    lu.free()
    expect(all(np.allclose(x, w, rtol=1e-8, atol=1e-12) for x, w in zip(xs, want)), "lu_solve differs from scipy")
    samples["lu_factor bytes sent"].append(factor_bytes)
    samples["lu_solve bytes sent"].append(statistics.median(solve_bytes))

    t = clock()
    xs, bytes_each = [], []
    for b in bs:
        xs.append(la.solve(a, b))
        bytes_each.append(la.last_calls()[0].bytes_sent)
    samples["solves"].append(clock() - t)
    expect(all(np.allclose(x, w, rtol=1e-8, atol=1e-12) for x, w in zip(xs, want)), "solve differs from scipy")
    samples["solve bytes sent"].append(statistics.median(bytes_each))

    t = clock()  # the same as futures: the factorisation, then every solve at once
    factoring = la.lu_factor(a, block=False)
    lu, piv = factoring.result(timeout=CALL_TIMEOUT)
    t_factor = clock()
    futures = [la.lu_solve((lu, piv), b, block=False) for b in bs]
    xs = [f.result(timeout=CALL_TIMEOUT) for f in futures]
    samples["numrpc futures"].append(clock() - t)
    samples["numrpc futures factor"].append(t_factor - t)
    samples["numrpc put"].append(factoring.calls[0].total_seconds)  # the put, then getrf
    lu.free()
    expect(all(np.allclose(x, w, rtol=1e-8, atol=1e-12) for x, w in zip(xs, want)), "lu_solve future differs")


def dask_round(samples, client, a, bs, want):
    """scipy's lu_factor on a Dask worker, A scattered to it, then one lu_solve task per right-hand side."""
    import distributed
    clock = time.perf_counter
    t = clock()
    matrix = client.scatter(a)
    t_scatter = clock()
    factors = client.submit(sl.lu_factor, matrix, pure=False)
    distributed.wait(factors, timeout=CALL_TIMEOUT)  # as numrpc's futures wait for lu_factor's
    t_factor = clock()
    futures = [client.submit(sl.lu_solve, factors, b, pure=False) for b in bs]
    xs = client.gather(futures)
    samples["Dask futures"].append(clock() - t)
    samples["Dask futures factor"].append(t_factor - t)
    samples["Dask scatter"].append(t_scatter - t)
    client.cancel(futures + [factors, matrix])
    expect(all(np.allclose(x, w, rtol=1e-8, atol=1e-12) for x, w in zip(xs, want)), "Dask's lu_solve differs")


SHARED = " shared vCPU"  # (a) with the client pinned where the server is


def run(sizes, rounds, pin, dask_client):
    """rounds rounds after a warm-up round (discarded); pin: (client CPU, server CPU) or (None, None).
    Returns {figure: [per round]}."""
    samples = defaultdict(list)
    a, _ = system(sizes.big_n, 2)
    rng = np.random.default_rng(3)
    bs = [rng.standard_normal(sizes.big_n) for _ in range(sizes.rhs)]
    factors = sl.lu_factor(a)
    want = [sl.lu_solve(factors, b) for b in bs]
    for r in range(rounds + 1):
        into = samples if r else defaultdict(list)
        with pinned(pin[0]):
            overhead_round(into, sizes)
            factor_round(into, a, bs, want)
        if pin[1] is not None:
            with pinned(pin[1]):
                overhead_round(into, sizes, SHARED)
        if dask_client is not None:
            dask_round(into, dask_client, a, bs, want)
    return samples


# ---- The report ----

def cell(values, scale=1.0, digits=1):
    """'median [min..max]' of values * scale."""
    v = [x * scale for x in values]
    return f"{statistics.median(v):,.{digits}f} [{min(v):,.{digits}f}..{max(v):,.{digits}f}]".replace(",", " ")


def verdict(ok):
    return "met" if ok else "MISSED"


def report(samples, sizes, out=print):
    med = {k: statistics.median(v) for k, v in samples.items()}
    out("| figure | median [spread] | against | difference or ratio | target |")
    out("| --- | --- | --- | --- | --- |")
    n, k, big = sizes.small_n, sizes.rhs, sizes.big_n
    for where in ("", SHARED) if "raw dgesv" + SHARED in samples else ("",):
        raw = samples["raw dgesv" + where]
        for key, what in (("la.solve", "F-ordered a"), ("la.solve C-ordered", "C-ordered a")):
            extra = [m - r for m, r in zip(samples[key + where], raw)]
            target = f"≤ 10 µs: {verdict(statistics.median(extra) <= 10e-6)}" if key == "la.solve" else ""
            out(f"| (a) `la.solve(a, b)`, n = {n}, {what}{',' + where if where else ''}, µs | "
                f"{cell(samples[key + where], 1e6)} | raw `numrpc.call(\"dgesv\")` {cell(raw, 1e6)} | "
                f"+{cell(extra, 1e6)} µs | {target} |")
    extra = [m - r for m, r in zip(samples["la.solve future"], samples["raw dgesv future"])]
    out(f"| (a) `la.solve(..., block=False).result()`, n = {n}, µs | {cell(samples['la.solve future'], 1e6)} | "
        f"`numrpc.call_async(\"dgesv\").result()` {cell(samples['raw dgesv future'], 1e6)} | +{cell(extra, 1e6)} µs | |")
    ratio = [s / f for s, f in zip(samples["solves"], samples["lu_factor + lu_solves"])]
    out(f"| (b) `lu_factor` + {k} `lu_solve`, n = {big}, ms | {cell(samples['lu_factor + lu_solves'], 1e3)} | {k} `la.solve` "
        f"{cell(samples['solves'], 1e3)} | {cell(ratio, digits=2)}× faster | ≥ 5×: {verdict(statistics.median(ratio) >= 5)} |")
    out(f"| (b) bytes sent: `lu_factor` (put + getrf), one `lu_solve`, MB | {med['lu_factor bytes sent'] / MB:.3f}, "
        f"{med['lu_solve bytes sent'] / MB:.4f} | one `la.solve` {med['solve bytes sent'] / MB:.3f} | "
        f"8 n² = {8 * big * big / MB:.1f} | |")
    out(f"| (c) `lu_factor` + {k} `lu_solve` as numrpc futures, ms | {cell(samples['numrpc futures'], 1e3)} | | | |")
    if "Dask futures" in samples:
        ratio = [d / f for d, f in zip(samples["Dask futures"], samples["numrpc futures"])]
        out(f"| (c) the same as Dask futures (scatter, `scipy.linalg.lu_factor`, {k} `lu_solve`), ms | "
            f"{cell(samples['Dask futures'], 1e3)} | numrpc futures {med['numrpc futures'] * 1e3:.1f} | "
            f"numrpc {cell(ratio, digits=2)}× faster | |")
        solves = {who: [t - f for t, f in zip(samples[f"{who} futures"], samples[f"{who} futures factor"])]
                  for who in ("numrpc", "Dask")}
        out(f"| (c) of which A there and factored / the {k} solves, Dask, ms | "
            f"{med['Dask futures factor'] * 1e3:.1f} (scatter {med['Dask scatter'] * 1e3:.1f}) / "
            f"{statistics.median(solves['Dask']) * 1e3:.1f} | numrpc {med['numrpc futures factor'] * 1e3:.1f} "
            f"(put {med['numrpc put'] * 1e3:.1f}) / {statistics.median(solves['numrpc']) * 1e3:.1f} | | |")


def main(argv=None):
    parser = argparse.ArgumentParser(description="issue 30's numrpc.linalg figures")
    parser.add_argument("--server", required=True, help="HOST:PORT of a numrpc-server with the lapack module")
    parser.add_argument("--rounds", type=int, default=5, choices=range(1, 100), metavar="1..99")
    parser.add_argument("--pin", metavar="CLIENT,SERVER", help="the numrpc client's CPU and the server's (pinned "
                        "there by the caller): (a) is measured from both")
    parser.add_argument("--no-dask", action="store_true", help="skip (c)'s Dask side")
    parser.add_argument("--tiny", action="store_true", help="small sizes and counts: a quick look, not figures")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a timeout's SIGTERM still closes Dask and numrpc
    sizes = TINY if args.tiny else FULL
    found = {"python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__}
    note = ""
    if not args.no_dask:
        try:
            import dask
            import distributed
            found.update({"dask": dask.__version__, "distributed": distributed.__version__})
        except ImportError:
            note = "distributed not installed: (c)'s Dask side skipped (bench/linalg_figures.sh installs it)"
    print(f"== versions: {', '.join(f'{k} {v}' for k, v in found.items())}; libnumrpc {numrpc.library_path}")
    if note:
        print(f"== note: {note}")
    numrpc.Client(servers=args.server)
    numrpc.set_timeout(CALL_TIMEOUT)
    with contextlib.ExitStack() as running:
        running.callback(numrpc.finalize)
        dask_client = None
        if "dask" in found:
            cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                               protocol="tcp", dashboard_address=None)
            running.callback(cluster.close)
            dask_client = distributed.Client(cluster, timeout=CALL_TIMEOUT)
            running.callback(dask_client.close)
        start = time.monotonic()
        pin = tuple(int(c) for c in args.pin.split(",")) if args.pin else (None, None)
        samples = run(sizes, args.rounds, pin, dask_client)
        print(f"== {args.rounds} rounds after a warm-up round, {time.monotonic() - start:.0f} s; each figure the median "
              f"[min..max] of its per-round values ((a): medians of {sizes.small_calls} calls, "
              f"{sizes.async_calls} futures); numrpc client on CPU {pin[0]}, server on CPU {pin[1]} (None: not pinned), "
              "Dask not pinned")
        report(samples, sizes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
