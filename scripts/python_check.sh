#!/usr/bin/env bash
# python_check.sh BUILD_DIR -- installs ./python as a user would (pip builds libnumrpc into the package; Debian's
# numpy, scipy, pytest, setuptools through system site-packages; no network) and runs its pytest suite on it.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
python=${PYTHON:-/usr/bin/python3} # Debian's: the one python3-numpy and python3-scipy install into
venv="$build/python-venv"

# The test-only stub module the error and GIL tests call (crash, spin, hold).
make -C "$build/tests" -s server/faults.la >/dev/null

rm -rf "$venv"
"$python" -m venv --system-site-packages "$venv"
# The one install: nothing set, the library compiled from the sources into the package (python/setup.py).
env -u NUMRPC_LIB -u LD_LIBRARY_PATH "$venv/bin/python" -m pip install -q --no-index --no-deps --no-build-isolation "$top/python"

# From the build directory, so that `import numrpc` is the installed package, with its own
# libnumrpc: the suite fails at once if another one would be loaded.
cd "$build"
loaded=$(env -u NUMRPC_LIB -u LD_LIBRARY_PATH "$venv/bin/python" -c 'import numrpc; print(numrpc.library_path)')
[[ $loaded == "$venv"/lib/*/site-packages/numrpc/_libs/libnumrpc.so ]] ||
  { echo "python_check.sh: the installed numrpc loads $loaded, not its own library" >&2; exit 1; }
env -u NUMRPC_LIB -u LD_LIBRARY_PATH NUMRPC_BUILD_DIR="$build" \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider "$top/python/tests" "${@:2}"
