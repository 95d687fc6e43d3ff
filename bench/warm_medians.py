#!/usr/bin/env python3
"""warm_medians.py -- the warm dcopy-16 figure of numrpc-goodcalls runs, for
two kinds of server compared in interleaved rounds (tokens_ping.sh, tls_figures.sh).

usage: warm_medians.py DIR ROUNDS BASE OTHER
  reads DIR/BASE.R.csv and DIR/OTHER.R.csv for R = 1..ROUNDS; per run the
  median of its dcopy-16 latencies, then the median and spread (min..max)
  of those run medians, the difference and the ratio OTHER/BASE."""
import csv
import statistics
import sys


def run_medians(tmp, name, rounds):
    meds = []
    for r in range(1, rounds + 1):
        with open(f"{tmp}/{name}.{r}.csv") as f:
            rows = [float(x[7]) for x in csv.reader(f)
                    if x[2] == "dcopy" and x[3] == "16" and x[5] == "OK" and x[6] == "0"]
        meds.append(statistics.median(rows) * 1e6)
    return meds


def main():
    tmp, rounds, base, other = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    meds = {name: run_medians(tmp, name, rounds) for name in (base, other)}
    for name, m in meds.items():
        print(f"   {name:7s} dcopy n=16 warm: median {statistics.median(m):7.1f} us  "
              f"run medians {min(m):.1f}..{max(m):.1f} us ({len(m)} runs)")
    b, o = statistics.median(meds[base]), statistics.median(meds[other])
    print(f"   {other} - {base}: {o - b:+.1f} us  ratio {other}/{base}: {o / b:.3f}")


if __name__ == "__main__":
    main()
