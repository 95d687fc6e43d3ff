#!/usr/bin/env bash
# python_figures.sh -- issue 17's figures in one run: numrpc from Python against the C client, the memory
# of F- and C-ordered arrays, and Dask and Ray on the same bytes (python/benchmarks/figures.py).
# usage: bench/python_figures.sh [BUILD_DIR=build] [ROUNDS=5] [figures.py options, e.g. --no-peers]
#   (about 6 s a round, plus the first install)
#   Makes BUILD_DIR/python-bench-venv once (Debian's numpy and scipy, Dask and Ray from PyPI at the pins
#   below: a benchmark's, never CI's), installs ./python into it, starts one numrpc-server on 127.0.0.1
#   (--workers 2 --blas-threads 1, on CPU 1) with OPENBLAS_NUM_THREADS=1, and prints the figures' table.
#   The numrpc and raw-socket clients run on CPU 0, their servers on CPU 1; Dask and Ray are not pinned.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
rounds=${2:-5}
[[ $rounds =~ ^[1-9][0-9]?$ ]] || { sed -n 4,8p "$0" >&2; exit 2; }
python=${PYTHON:-/usr/bin/python3} # Debian's: the one python3-numpy and python3-scipy install into
pins=("dask[distributed]==2026.8.0" "ray==2.60.0")
venv="$build/python-bench-venv"
for f in "$build/client/.libs/libnumrpc.so" "$build/bench/numrpc-bench-c-client" "$build/server/numrpc-server"; do
    [[ -e $f ]] || { echo "$(basename "$0"): $f missing: build first (./scripts/build.sh $build)" >&2; exit 1; }
done

# The environment, made once per set of pins; Debian's numpy is kept (pip may not replace it).
if [[ "$(cat "$venv/pins" 2>/dev/null)" != "${pins[*]}" ]]; then
    rm -rf "$venv"
    "$python" -m venv --system-site-packages "$venv"
    "$python" -c 'import numpy; print("numpy==" + numpy.__version__)' >"$venv/constraints.txt"
    timeout 900 "$venv/bin/python" -m pip install -q -c "$venv/constraints.txt" "${pins[@]}"
    echo "${pins[*]}" >"$venv/pins"
fi
"$venv/bin/python" -m pip install -q --no-index --no-deps --no-build-isolation --force-reinstall "$top/python"

. "$top/bench/servers.sh"
bench_setup python-figures
export OPENBLAS_NUM_THREADS=1
bench_machine
bench_server_on 1 server --workers 2 --blas-threads 1

# From the scratch directory, so that `import numrpc` is the installed package; SIGTERM from timeout
# still shuts Dask and Ray down (figures.py turns it into an exit), SIGKILL a minute later.
cd "$tmp"
NUMRPC_LIB="$build/client/.libs/libnumrpc.so" timeout -k 60 1800 "$venv/bin/python" "$top/python/benchmarks/figures.py" \
    --server "127.0.0.1:$(cat "$tmp/server.port")" --c-client "$build/bench/numrpc-bench-c-client" --rounds "$rounds" --pin 0,1 "${@:3}"
