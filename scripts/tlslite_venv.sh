#!/usr/bin/env bash
# tlslite_venv.sh BUILD_DIR -- makes BUILD_DIR/tlsfuzzer-venv with tlslite-ng from
# PyPI (pinned) for the TLS record-layer probes, once; without PyPI it says so and the probes SKIP.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
venv=$build/tlsfuzzer-venv
"$venv/bin/python" -c 'import tlslite' 2>/dev/null && exit 0
rm -rf "$venv"
if python3 -m venv "$venv" && "$venv/bin/pip" install --quiet --disable-pip-version-check \
    tlslite-ng==0.8.2 ecdsa==0.19.2; then
  echo "installing: $venv (tlslite-ng 0.8.2 from PyPI)"
else
  rm -rf "$venv"
  echo "installing: tlslite-ng could not be installed from PyPI: the TLS probes (tlsfuzzer_test.sh) will SKIP" >&2
fi
exit 0
