# call_overhead.py -- what Python adds to a blocking call: a null call (ddot, n = 1) and an
# 8 MiB dcopy, wall time of numrpc.call against the C library's own total_seconds, same calls.
# Run from the repository after ./scripts/build.sh build:  python3 python/benchmarks/call_overhead.py
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[1] / "tests")]
from conftest import MODULES, Server  # noqa: E402  (the tests' server fixture, reused)


def spread(values):
    return statistics.median(values), np.percentile(values, 10), np.percentile(values, 90)


def measure(call, repeat):
    """(wall, C total) seconds of each of repeat calls."""
    import numrpc
    pairs = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        wall = time.perf_counter() - start
        pairs.append((wall, numrpc.last_call_info().total_seconds))
    return pairs


def main():
    stubs = tempfile.mkdtemp(prefix="numrpc-bench-stubs-")
    for module in MODULES:
        (Path(stubs) / module.name).symlink_to(module)
    server = Server(stubs)
    import numrpc
    try:
        numrpc.Client(servers=server.address)
        x = np.ones(1)
        null = lambda: numrpc.call("ddot", 1, x, 1, x, 1)  # noqa: E731
        measure(null, 200)  # warm: connection, interface
        pairs = measure(null, 2000)
        for name, values in (("python call", [w for w, _ in pairs]), ("C total", [c for _, c in pairs]),
                             ("overhead", [w - c for w, c in pairs])):
            print("null call %-12s median %6.1f us (p10 %6.1f, p90 %6.1f)" % ((name,) + tuple(v * 1e6 for v in spread(values))))
        m = 1 << 20
        a, b = np.ones(m), np.zeros(m)
        pairs = measure(lambda: numrpc.call("dcopy", m, a, 1, b, 1), 30)
        wall, c = statistics.median(w for w, _ in pairs), statistics.median(c for _, c in pairs)
        print("8 MiB dcopy  python median %.2f ms, C total median %.2f ms, ratio %.3f" % (wall * 1e3, c * 1e3, wall / c))
    finally:
        numrpc.finalize()
        server.stop()


if __name__ == "__main__":
    main()
