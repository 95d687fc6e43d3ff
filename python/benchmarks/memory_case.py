# memory_case.py -- one case of figures.py's memory figure, in a fresh process: the peak memory that
# numrpc.call("dgemm") adds when its c matrix (BYTES) is Fortran- or C-ordered. Prints one JSON line.
#   python3 memory_case.py HOST:PORT F|C BYTES     (the numrpc package and NUMRPC_LIB from the environment)
import json
import math
import sys
import tracemalloc
import warnings

import numpy as np

import numrpc


def status_bytes(field):
    """A field of /proc/self/status in bytes: VmRSS (resident now), VmHWM (its high-water mark)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024  # kB
    raise RuntimeError(f"no {field} in /proc/self/status")


def reset_high_water():
    """Sets VmHWM to the resident set now (clear_refs 5). VmHWM, not getrusage's ru_maxrss: the latter
    keeps the parent's mark across fork and exec, so a child of a big process would never see its own."""
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")


def dgemm_rank_one(a, b, c):
    """c := a b + c with a rows x 1, b 1 x cols: c crosses both ways, the product costs 2 rows cols flops."""
    rows, cols = c.shape
    numrpc.call("dgemm", "N", "N", rows, cols, 1, 1.0, a, rows, b, 1, 1.0, c, rows)


def measure(server, order, nbytes):
    """What one dgemm adds to the process's memory with c in the given order (a dict)."""
    numrpc.Client(servers=server)
    numrpc.set_timeout(60)
    cols = max(1, math.isqrt(nbytes // 8 // 2))
    rows = nbytes // 8 // cols
    rng = np.random.default_rng(17)
    a, b = rng.standard_normal(rows), rng.standard_normal((1, cols))
    small = np.ones((4, 4), order="F")
    dgemm_rank_one(a[:4], b[:, :4].copy(), small)  # connection and interface, before anything is measured
    c = np.full((rows, cols), 1.0, order=order)  # every page touched: the high-water mark is here now
    tracemalloc.start()
    reset_high_water()
    before, high_before = status_bytes("VmRSS"), status_bytes("VmHWM")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", numrpc.CopyWarning)
        dgemm_rank_one(a, b, c)
    traced_peak = tracemalloc.get_traced_memory()[1]
    high_after = status_bytes("VmHWM")
    tracemalloc.stop()
    agrees = bool(np.allclose(c, np.outer(a, b[0]) + 1.0, rtol=1e-13, atol=0))
    return {"order": order, "bytes": rows * cols * 8, "shape": [rows, cols], "traced_peak": traced_peak,
            "rss_before": before, "high_water_before": high_before, "high_water_after": high_after,
            "copy_warnings": [str(w.message) for w in seen if issubclass(w.category, numrpc.CopyWarning)],
            "agrees": agrees}


def main(argv):
    if len(argv) != 4 or argv[2] not in ("F", "C") or not argv[3].isdigit() or not 64 <= int(argv[3]) <= 1 << 31:
        print("usage: memory_case.py HOST:PORT F|C BYTES (64 .. 2 GiB)", file=sys.stderr)
        return 2
    try:
        print(json.dumps(measure(argv[1], argv[2], int(argv[3]))))
    finally:
        numrpc.finalize()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
