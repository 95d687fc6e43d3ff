#!/usr/bin/env bash
# tlsfuzzer.sh -- numrpc-server's TLS 1.3 record layer against every probe of
# tests/server/tlsfuzzer_checks.py (tlslite-ng; named after tlsfuzzer's
# scripts, which are not on PyPI), printing a line per probe and the count.
# usage: bench/tlsfuzzer.sh [BUILD_DIR=build] [probe names...]
#   Makes BUILD_DIR/tlsfuzzer-venv (scripts/tlslite_venv.sh) when it is
#   missing; the suite's short set (tlsfuzzer_test.sh) uses the same venv.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
shift || true
venv=$build/tlsfuzzer-venv
"$top/scripts/tlslite_venv.sh" "$build"
echo "== $("$venv/bin/python" -c 'import tlslite; print("tlslite-ng", tlslite.__version__)'), server $build/server/numrpc-server"
TOP_SRCDIR=$top TOP_BUILDDIR=$build exec "$top/tests/server/tlsfuzzer_test.sh" --full "$@"
