#!/usr/bin/env bash
# linalg_figures.sh -- issue 30's numrpc.linalg figures in one run (python/benchmarks/linalg_figures.py):
# solve's own cost over the raw dgesv call, lu_factor + 10 lu_solve against 10 solve, and Dask futures.
# usage: bench/linalg_figures.sh [BUILD_DIR=build] [ROUNDS=5] [linalg_figures.py options, e.g. --no-dask]
#   (about 10 s a round at n = 2000, plus the first install)
#   Makes BUILD_DIR/python-linalg-venv once (Debian's numpy and scipy, Dask from PyPI at the pin below: a
#   benchmark's, never CI's; without PyPI, run with --no-dask), installs ./python into it, starts one
#   numrpc-server on 127.0.0.1 (--workers 2 --blas-threads 1, on CPU 1) with OPENBLAS_NUM_THREADS=1 (the
#   Dask worker's BLAS too), and prints the table. The numrpc client runs on CPU 0 (and (a) again on CPU 1).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
rounds=${2:-5}
[[ $rounds =~ ^[1-9][0-9]?$ ]] || { sed -n 4,9p "$0" >&2; exit 2; }
python=${PYTHON:-/usr/bin/python3} # Debian's: the one python3-numpy and python3-scipy install into
pins=("dask[distributed]==2026.8.0")
venv="$build/python-linalg-venv"
for f in "$build/client/.libs/libnumrpc.so" "$build/server/numrpc-server" "$build/stubs/.libs/lapack.so"; do
    [[ -e $f ]] || { echo "$(basename "$0"): $f missing: build first (./scripts/build.sh $build)" >&2; exit 1; }
done

# The environment, made once per set of pins; Debian's numpy and scipy are kept (pip may not replace them).
if [[ "$(cat "$venv/pins" 2>/dev/null)" != "${pins[*]}" ]]; then
    rm -rf "$venv"
    "$python" -m venv --system-site-packages "$venv"
    "$python" -c 'import numpy, scipy; print("numpy==" + numpy.__version__); print("scipy==" + scipy.__version__)' \
        >"$venv/constraints.txt"
    if [[ " ${*:3} " != *" --no-dask "* ]]; then
        timeout 900 "$venv/bin/python" -m pip install -q -c "$venv/constraints.txt" "${pins[@]}"
        echo "${pins[*]}" >"$venv/pins"
    fi
fi
"$venv/bin/python" -m pip install -q --no-index --no-deps --no-build-isolation --force-reinstall "$top/python"

. "$top/bench/servers.sh"
bench_setup linalg-figures
export OPENBLAS_NUM_THREADS=1
bench_machine
bench_server_on 1 server --workers 2 --blas-threads 1

# From the scratch directory, so that `import numrpc` is the installed package; SIGTERM from timeout
# still shuts Dask down (linalg_figures.py turns it into an exit), SIGKILL a minute later.
cd "$tmp"
NUMRPC_LIB="$build/client/.libs/libnumrpc.so" timeout -k 60 1800 "$venv/bin/python" \
    "$top/python/benchmarks/linalg_figures.py" --server "127.0.0.1:$(cat "$tmp/server.port")" --rounds "$rounds" \
    --pin 0,1 "${@:3}"
