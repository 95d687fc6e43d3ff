# local_remote_plot.py -- docs/python.md's last notebook example run for real: scipy's solve
# against numrpc's dgesv on one server of this machine, plotted to docs/python_local_remote.png.
# Run from the repository after ./scripts/build.sh build:  python3 python/benchmarks/local_remote_plot.py
import statistics
import sys
import tempfile
import time
from pathlib import Path

import matplotlib
import numpy as np
import scipy.linalg as sl

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

top = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(top / "python"), str(top / "python" / "tests")]
from conftest import MODULES, Server  # noqa: E402  (the tests' server fixture, reused)

SIZES, ROUNDS = [200, 400, 800, 1200, 1600, 2000], 5


def main():
    stubs = tempfile.mkdtemp(prefix="numrpc-plot-stubs-")
    for module in MODULES:
        (Path(stubs) / module.name).symlink_to(module)
    server = Server(stubs)
    import numrpc
    rng = np.random.default_rng(5)
    try:
        numrpc.Client(servers=server.address)
        local, remote = {n: [] for n in SIZES}, {n: [] for n in SIZES}
        for _ in range(ROUNDS):  # interleaved: every size, local then remote, round after round
            for n in SIZES:
                A = np.asfortranarray(rng.standard_normal((n, n)))
                b = rng.standard_normal(n)
                t = time.perf_counter()
                want = sl.solve(A, b)
                local[n].append(time.perf_counter() - t)
                a, x = A.copy(order="F"), b.copy()
                t = time.perf_counter()
                info = numrpc.call("dgesv", n, 1, a, n, None, x, n)[0]
                remote[n].append(time.perf_counter() - t)
                assert info == 0 and np.allclose(x, want, rtol=1e-8, atol=1e-8 * np.abs(want).max())
        med = lambda d: [statistics.median(d[n]) for n in SIZES]  # noqa: E731
        for n, lo, re in zip(SIZES, med(local), med(remote)):
            print(f"n={n:5d}  local {lo * 1e3:8.2f} ms  remote {re * 1e3:8.2f} ms  remote/local {re / lo:5.2f}")
        plt.figure(figsize=(6, 4))
        plt.loglog(SIZES, med(local), "o-", label="scipy.linalg.solve (local)")
        plt.loglog(SIZES, med(remote), "s-", label="numrpc dgesv (remote, same machine)")
        plt.xlabel("n")
        plt.ylabel("seconds (median of %d)" % ROUNDS)
        plt.legend()
        plt.title("one solve: local against remote")
        out = top / "docs" / "python_local_remote.png"
        plt.savefig(out, dpi=100, bbox_inches="tight")
        print("wrote", out)
    finally:
        numrpc.finalize()
        server.stop()


if __name__ == "__main__":
    main()
