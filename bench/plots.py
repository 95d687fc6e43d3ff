# plots.py -- PNG plots for run_all.sh (only run when matplotlib is present):
# round-trip throughput vs size per placement, and Linpack MFLOPS vs n.
import csv
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

out = sys.argv[1]

rows = list(csv.DictReader(open(os.path.join(out, "transfer.csv"))))
data = {}
for r in rows:
    if r["system"] not in ("raw-tuned", "raw-naive", "numrpc-dcopy") or r["packet"] != "0":
        continue
    key = (r["placement"], r["system"])
    data.setdefault(key, {}).setdefault(int(r["bytes_each_way"]), []).append(float(r["mb_per_s"]))
placements = sorted({k[0] for k in data})
fig, axes = plt.subplots(1, len(placements), figsize=(6 * len(placements), 4.5), squeeze=False)
for ax, pl in zip(axes[0], placements):
    for system in ("raw-tuned", "raw-naive", "numrpc-dcopy"):
        series = data.get((pl, system), {})
        xs = sorted(series)
        ax.plot(xs, [statistics.median(series[x]) for x in xs], marker="o", label=system)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("bytes each way")
    ax.set_ylabel("MB/s (median of rounds)")
    ax.set_title(pl)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
fig.tight_layout()
fig.savefig(os.path.join(out, "throughput.png"), dpi=110)

for t in (1, 2):
    path = os.path.join(out, "linpack_t%d.csv" % t)
    if not os.path.exists(path):
        continue
    lr = list(csv.DictReader(open(path)))
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for mode in ("linpack", "dgefa+dgesl"):
        sel = [r for r in lr if r["mode"] == mode]
        ax.plot([int(r["n"]) for r in sel], [float(r["remote_mflops"]) for r in sel],
                marker="o", label="remote " + mode)
    local = [r for r in lr if r["mode"] == "linpack"]
    ax.plot([int(r["n"]) for r in local], [float(r["local_mflops"]) for r in local],
            marker="s", label="local LAPACK")
    ax.set_xscale("log")
    ax.set_xlabel("n")
    ax.set_ylabel("MFLOPS")
    ax.set_title("Linpack, %d BLAS thread(s)" % t)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "linpack_t%d.png" % t), dpi=110)
