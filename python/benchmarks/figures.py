# figures.py -- issue 17's figures in one run, round after round: numrpc from Python against the C client
# (null call, dcopy), the memory an F- or C-ordered array adds to a call, and the peers on the same bytes.
#   python3 figures.py --server HOST:PORT --c-client BUILD/bench/numrpc-bench-c-client [--rounds 5] [--no-peers]
# bench/python_figures.sh runs it with Dask and Ray installed; without them the peers are skipped with a note.
import argparse
import contextlib
import dataclasses
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

import numrpc
import peers

MiB = 1 << 20
HERE = Path(__file__).resolve().parent
SUBPROCESS_TIMEOUT = 120  # seconds, for the C client and each memory case
CALL_TIMEOUT = 60  # seconds, every numrpc call
SHARED = " shared vCPU"  # the null calls' figures with the client pinned where the server is


@dataclasses.dataclass(frozen=True)
class Sizes:
    """How much each round measures: per-round figures are the medians of these many repeats."""
    null_calls: int = 2000
    dcopy_bytes: int = 8 * MiB  # against the C client
    dcopy_calls: int = 20
    memory_bytes: int = 64 * MiB
    peer_bytes: tuple = (8 * MiB, 64 * MiB)
    peer_repeats: int = 5
    trivial_tasks: int = 50
    solve_n: int = 1000
    solve_repeats: int = 3


FULL = Sizes()
TINY = Sizes(null_calls=20, dcopy_bytes=64 * 1024, dcopy_calls=3, memory_bytes=MiB, peer_bytes=(64 * 1024,),
             peer_repeats=2, trivial_tasks=3, solve_n=40, solve_repeats=1)


def expect(ok, what):
    """Raises AssertionError (also under python -O) when a result is wrong."""
    if not ok:
        raise AssertionError(what)


def median_seconds(call, repeats, check=None, prepare=None):
    """Median wall seconds of repeats calls of call(); prepare() before and check(result) after each, untimed."""
    seconds = []
    for _ in range(repeats):
        if prepare:
            prepare()
        start = time.perf_counter()
        result = call()
        seconds.append(time.perf_counter() - start)
        if check:
            check(result)
    return statistics.median(seconds)


def filled(nbytes, seed):
    """A float64 vector of nbytes, random, every page touched."""
    return np.random.default_rng(seed).standard_normal(nbytes // 8)


# ---- One round: numrpc, the C client, memory, the raw socket (no Dask or Ray needed) ----

def null_calls_round(samples, sizes, server, c_client, where=""):
    """Python's null call, then the C client's (it checks its own results) and, unless where names another
    placement, its dcopy: per-round medians into the figures named with where."""
    x = np.full(1, 1.5)
    samples["python null call" + where].append(median_seconds(
        lambda: numrpc.call("ddot", 1, x, 1, x, 1), sizes.null_calls, check=lambda r: expect(r == 2.25, f"ddot gave {r}")))
    dcopy = (sizes.dcopy_bytes, sizes.dcopy_calls) if not where else (8, 1)
    out = subprocess.run([str(c_client), server, str(sizes.null_calls), str(dcopy[0]), str(dcopy[1])],
                         capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT)
    expect(out.returncode == 0, f"{c_client} exited {out.returncode}: {out.stderr.strip()}")
    values = dict(line.split() for line in out.stdout.splitlines())
    samples["C null call" + where].append(float(values["null_call_seconds"]))
    if not where:
        samples["C dcopy"].append(float(values["dcopy_seconds"]))


def memory_round(samples, sizes, server):
    """Peak memory a dgemm adds with its c matrix F- then C-ordered, each in a fresh process."""
    env = dict(os.environ, NUMRPC_LIB=numrpc.library_path,  # the child imports the same numrpc, same library
               PYTHONPATH=os.pathsep.join([str(Path(numrpc.__file__).parents[1])] + os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    for order in ("F", "C"):
        out = subprocess.run([sys.executable, str(HERE / "memory_case.py"), server, order, str(sizes.memory_bytes)],
                             capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT, env=env)
        expect(out.returncode == 0, f"memory_case.py {order} exited {out.returncode}: {out.stderr.strip()}")
        case = json.loads(out.stdout)
        expect(case["agrees"], f"dgemm with {order}-ordered c differs from numpy")
        expect(bool(case["copy_warnings"]) == (order == "C"), f"{order}-ordered c: CopyWarnings {case['copy_warnings']}")
        samples[f"memory {order} traced"].append(case["traced_peak"])
        samples[f"memory {order} rss"].append(case["high_water_after"] - max(case["rss_before"], case["high_water_before"]))
        samples["memory bytes"].append(case["bytes"])


def numrpc_round(samples, sizes, server, c_client, raw):
    """Every figure that needs neither Dask nor Ray, once; each result compared with numpy."""
    null_calls_round(samples, sizes, server, c_client)
    samples["python dcopy"].append(dcopy_seconds(filled(sizes.dcopy_bytes, 1), sizes.dcopy_calls)[0])
    memory_round(samples, sizes, server)
    for nbytes in sizes.peer_bytes:
        data = filled(nbytes, 2)
        samples[f"raw one way {nbytes}"].append(median_seconds(lambda: raw.exchange(data, echo=False), sizes.peer_repeats))
        samples[f"raw round trip {nbytes}"].append(median_seconds(lambda: raw.exchange(data, echo=True), sizes.peer_repeats))
        trip, send = dcopy_seconds(data, sizes.peer_repeats)
        samples[f"numrpc round trip {nbytes}"].append(trip)
        samples[f"numrpc x out {nbytes}"].append(send)
    a, b = system(sizes.solve_n)
    reference = np.linalg.solve(a, b)
    samples["numpy solve"].append(median_seconds(lambda: np.linalg.solve(a, b), sizes.solve_repeats))
    samples["numrpc solve"].append(dgesv_seconds(a, b, reference, sizes.solve_repeats))


def dcopy_seconds(x, repeats):
    """Median seconds of numrpc dcopy calls of x (y cleared before, compared after each), and the
    median of the library's send_seconds (x out, one way)."""
    y, sends = np.zeros_like(x), []

    def check(_):
        expect(np.array_equal(x, y), "dcopy's y differs from x")
        sends.append(numrpc.last_call_info().send_seconds)
    seconds = median_seconds(lambda: numrpc.call("dcopy", x.size, x, 1, y, 1), repeats, check=check,
                             prepare=lambda: y.fill(0))
    return seconds, statistics.median(sends)


def system(n):
    """A well-conditioned n x n system (Fortran order) and its right-hand side."""
    rng = np.random.default_rng(3)
    return np.asfortranarray(rng.standard_normal((n, n)) + n * np.eye(n)), rng.standard_normal(n)


def dgesv_seconds(a, b, reference, repeats):
    """Median seconds of numrpc dgesv on copies of a and b (made untimed), the solution checked."""
    work = {}

    def prepare():
        work["a"], work["b"] = a.copy(order="F"), b.copy()

    def check(result):
        expect(result[0] == 0 and np.allclose(work["b"], reference, rtol=1e-9, atol=1e-12), "dgesv differs from numpy")
    n = b.size
    return median_seconds(lambda: numrpc.call("dgesv", n, 1, work["a"], n, None, work["b"], n), repeats,
                          check=check, prepare=prepare)


def peer_round(samples, sizes, peer):
    """The same bytes, a trivial task and the same solve through a peer, each result checked."""
    for nbytes in sizes.peer_bytes:
        data = filled(nbytes, 2)
        samples[f"{peer.name} round trip {nbytes}"].append(median_seconds(
            lambda: peer.run(peers.identity, data), sizes.peer_repeats,
            check=lambda r: expect(np.array_equal(r, data), f"{peer.name}: the echo of {nbytes} bytes differs")))
    samples[f"{peer.name} trivial task"].append(median_seconds(
        lambda: peer.run(peers.identity, 0), sizes.trivial_tasks, check=lambda r: expect(r == 0, f"{peer.name}: {r}")))
    a, b = system(sizes.solve_n)
    reference = np.linalg.solve(a, b)
    samples[f"{peer.name} solve"].append(median_seconds(
        lambda: peer.run(peers.solve, a, b), sizes.solve_repeats,
        check=lambda r: expect(np.allclose(r, reference, rtol=1e-9, atol=1e-12), f"{peer.name}: solve differs")))


@contextlib.contextmanager
def pinned(cpu):
    """The calling thread, and the processes it starts, on CPU cpu meanwhile (None: as they are)."""
    before = os.sched_getaffinity(0)
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def run(server, c_client, rounds, sizes=FULL, peer_list=(), pin=(None, None)):
    """rounds rounds after one warm-up round (discarded): every system once a round, in the same order.
    numrpc must already be configured (numrpc.Client). pin: (client CPU, server CPU) for the numrpc and
    raw-socket figures, so that Python, the C client and the raw socket all cross the same way (a null
    call between two vCPUs costs about three times one on a shared vCPU). Returns {figure: [per round]}."""
    samples = defaultdict(list)
    raw = peers.RawSocket(server_cpu=pin[1])
    try:
        for r in range(rounds + 1):
            into = samples if r else defaultdict(list)
            with pinned(pin[0]):
                numrpc_round(into, sizes, server, c_client, raw)
            if pin[1] is not None:  # the null calls again, the client on the server's vCPU
                with pinned(pin[1]):
                    null_calls_round(into, sizes, server, c_client, SHARED)
            for peer in peer_list:
                peer_round(into, sizes, peer)
    finally:
        raw.close()
    return samples


# ---- The report: median [min..max] of the per-round values, ratios of medians, targets ----

def cell(values, scale=1.0, digits=1):
    """'median [min..max]' of values * scale."""
    v = [x * scale for x in values]
    return f"{statistics.median(v):,.{digits}f} [{min(v):,.{digits}f}..{max(v):,.{digits}f}]".replace(",", " ")


def verdict(ok):
    return "met" if ok else "MISSED"


def megabytes_per_second(nbytes, seconds):
    """MB/s (10^6 bytes) of nbytes in each of seconds."""
    return [nbytes / s / 1e6 for s in seconds]


def size_name(nbytes):
    return f"{nbytes // MiB} MiB" if nbytes >= MiB else f"{nbytes // 1024} KiB"


def report(samples, sizes, peer_names, out=print):
    """Prints the table: figure | median [spread] | against | ratio | target."""
    med = {k: statistics.median(v) for k, v in samples.items()}
    out("| figure | median [spread] | against | ratio | target |")
    out("| --- | --- | --- | --- | --- |")
    for where in ("", SHARED) if "python null call" + SHARED in samples else ("",):
        py, c = med["python null call" + where], med["C null call" + where]
        out(f"| null call (ddot, n = 1) from Python{',' + where if where else ''}, µs | "
            f"{cell(samples['python null call' + where], 1e6)} | C client {cell(samples['C null call' + where], 1e6)} | "
            f"{(py - c) * 1e6:+.1f} µs | ≤ C + 15 µs: {verdict(py - c <= 15e-6)} |")
    ratio = med["python dcopy"] / med["C dcopy"]
    out(f"| dcopy {size_name(sizes.dcopy_bytes)} from numpy, ms | {cell(samples['python dcopy'], 1e3, 2)} | "
        f"C client {cell(samples['C dcopy'], 1e3, 2)} | {ratio:.3f} | ≤ 1.1×: {verdict(ratio <= 1.1)} |")
    copy = med["memory bytes"]
    for order, expected in (("F", 0), ("C", copy)):
        for key, how in (("traced", "tracemalloc peak"), ("rss", "RSS high-water growth")):
            values = samples[f"memory {order} {key}"]
            target = f"no copy: {verdict(med[f'memory F {key}'] < copy / 10)}" if order == "F" else "one copy expected"
            out(f"| dgemm, c {size_name(copy)} {order}-ordered: {how}, MiB | {cell(values, 1 / MiB, 2)} | "
                f"expected copy {expected / MiB:.2f} MiB | {statistics.median(values) / copy:.3f} of c | {target} |")
    for nbytes in sizes.peer_bytes:
        name = size_name(nbytes)
        rate = lambda key: megabytes_per_second(nbytes, [s / 2 for s in samples[key]])  # noqa: E731  (half the round trip)
        numrpc_rate = statistics.median(rate(f"numrpc round trip {nbytes}"))
        out(f"| {name} one way, raw socket, MB/s | {cell(megabytes_per_second(nbytes, samples[f'raw one way {nbytes}']), digits=0)} | "
            f"numrpc dcopy x out (send_seconds) {cell(megabytes_per_second(nbytes, samples[f'numrpc x out {nbytes}']), digits=0)} | | |")
        out(f"| {name} each way (half the round trip), numrpc dcopy, MB/s | {cell(rate(f'numrpc round trip {nbytes}'), digits=0)} | "
            f"raw socket {cell(rate(f'raw round trip {nbytes}'), digits=0)} | "
            f"{numrpc_rate / statistics.median(rate(f'raw round trip {nbytes}')):.3f} of raw | |")
        for peer in peer_names:
            slower = med[f"{peer} round trip {nbytes}"] / med[f"numrpc round trip {nbytes}"]
            target = f"≥ 2×: {verdict(slower >= 2)}" if peer == "Dask" and nbytes >= 64 * MiB else ""
            out(f"| {name} each way, {peer}, MB/s (round trip ms) | {cell(rate(f'{peer} round trip {nbytes}'), digits=0)} "
                f"({statistics.median(samples[f'{peer} round trip {nbytes}']) * 1e3:.1f}) | numrpc {numrpc_rate:.0f} "
                f"({med[f'numrpc round trip {nbytes}'] * 1e3:.1f}) | numrpc {slower:.2f}× faster | {target} |")
    for peer in peer_names:
        slower = med[f"{peer} trivial task"] / med["python null call"]
        target = f"≥ 10×: {verdict(slower >= 10)}" if peer == "Dask" else ""
        out(f"| trivial task, {peer}, µs | {cell(samples[f'{peer} trivial task'], 1e6, 0)} | "
            f"numrpc null call {med['python null call'] * 1e6:.1f} | numrpc {slower:.1f}× faster | {target} |")
    n = sizes.solve_n
    out(f"| solve n = {n}, numrpc dgesv, ms | {cell(samples['numrpc solve'], 1e3, 2)} | "
        f"numpy here {cell(samples['numpy solve'], 1e3, 2)} | {med['numrpc solve'] / med['numpy solve']:.2f} of local | |")
    for peer in peer_names:
        out(f"| solve n = {n}, {peer} np.linalg.solve, ms | {cell(samples[f'{peer} solve'], 1e3, 2)} | "
            f"numrpc {med['numrpc solve'] * 1e3:.2f} | numrpc {med[f'{peer} solve'] / med['numrpc solve']:.2f}× faster | |")


def versions(peer_classes):
    found = {"python": platform.python_version(), "numpy": np.__version__}
    for cls in peer_classes:
        found.update(cls.versions())
    return ", ".join(f"{k} {v}" for k, v in found.items())


def main(argv=None):
    parser = argparse.ArgumentParser(description="issue 17's figures: numrpc from Python against the C client, Dask and Ray")
    parser.add_argument("--server", required=True, help="HOST:PORT of a numrpc-server with the blas and lapack modules")
    parser.add_argument("--c-client", required=True, help="the build's bench/numrpc-bench-c-client")
    parser.add_argument("--rounds", type=int, default=5, choices=range(1, 100), metavar="1..99")
    parser.add_argument("--no-peers", action="store_true", help="numrpc and the raw socket only")
    parser.add_argument("--pin", metavar="CLIENT,SERVER", help="CPUs of the numrpc and raw-socket figures' client "
                        "and helper server (the numrpc server must be pinned to SERVER by the caller)")
    parser.add_argument("--tiny", action="store_true", help="small sizes and counts: a quick look, not figures")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a timeout's SIGTERM still closes Dask, Ray, numrpc
    sizes = TINY if args.tiny else FULL
    pin = tuple(int(c) for c in args.pin.split(",")) if args.pin else (None, None)
    peer_classes, note = ([], "peers skipped (--no-peers)") if args.no_peers else peers.available()
    print(f"== versions: {versions(peer_classes)}; libnumrpc {numrpc.library_path}")
    if note:
        print(f"== note: {note}")
    numrpc.Client(servers=args.server)
    numrpc.set_timeout(CALL_TIMEOUT)
    with contextlib.ExitStack() as running:
        running.callback(numrpc.finalize)
        started = []
        for cls in peer_classes:
            peer = cls()
            running.callback(peer.close)  # closed even when a round fails
            started.append(peer)
        start = time.monotonic()
        samples = run(args.server, args.c_client, args.rounds, sizes, started, pin)
        print(f"== {args.rounds} rounds after a warm-up round, {time.monotonic() - start:.0f} s; each figure the median "
              f"[min..max] of its per-round medians; MB = 10^6 bytes; numrpc and raw-socket client on CPU {pin[0]}, "
              f"their servers on CPU {pin[1]} (None: not pinned), Dask and Ray not pinned")
        report(samples, sizes, [p.name for p in started])
    return 0


if __name__ == "__main__":
    sys.exit(main())
