# test_figures.py -- the numrpc-only round of python/benchmarks/figures.py (bench/python_figures.sh), once,
# at tiny sizes: every result it measures agrees with numpy and the table prints; no timing is asserted.
import math
import sys
from pathlib import Path

from conftest import BUILD

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import figures  # noqa: E402  (python/benchmarks is no package)

C_CLIENT = BUILD / "bench" / "numrpc-bench-c-client"


def test_numrpc_round_runs_and_agrees_with_numpy(servers, capsys):
    sizes = figures.TINY
    samples = figures.run(servers[0], C_CLIENT, rounds=1, sizes=sizes)  # raises if any result differs from numpy

    size = sizes.peer_bytes[0]
    timed = ["python null call", "C null call", "python dcopy", "C dcopy", f"raw one way {size}",
             f"raw round trip {size}", f"numrpc round trip {size}", f"numrpc x out {size}", "numpy solve", "numrpc solve"]
    for key in timed:
        assert len(samples[key]) == 1 and math.isfinite(samples[key][0]) and samples[key][0] > 0, key

    # Memory, not time: a C-ordered c is copied whole (numpy reports the copy to tracemalloc), an F-ordered one not.
    copy = samples["memory bytes"][0]
    assert copy >= sizes.memory_bytes * 0.99
    assert samples["memory C traced"][0] >= copy
    assert samples["memory F traced"][0] < copy / 10

    figures.report(samples, sizes, peer_names=[])
    table = capsys.readouterr().out
    assert "| null call (ddot, n = 1) from Python" in table and "| solve n = 40, numrpc dgesv" in table
    assert "Dask" not in table
