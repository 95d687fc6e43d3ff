#!/usr/bin/env bash
# python_check.sh BUILD_DIR -- installs ./python into a fresh virtual environment
# (Debian's numpy, scipy, pytest through system site-packages; no network) and runs its pytest suite.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
python=${PYTHON:-/usr/bin/python3} # Debian's: the one python3-numpy and python3-scipy install into
venv="$build/python-venv"

# The test-only stub module the error and GIL tests call (crash, spin, hold).
make -C "$build/tests" -s server/faults.la >/dev/null

rm -rf "$venv"
"$python" -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install -q --no-index --no-deps --no-build-isolation "$top/python"

# From the build directory, so that `import numrpc` is the installed package.
cd "$build"
NUMRPC_LIB="$build/client/.libs/libnumrpc.so" NUMRPC_BUILD_DIR="$build" \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider "$top/python/tests" "${@:2}"
