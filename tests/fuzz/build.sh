#!/usr/bin/env bash
# build.sh -- builds the libFuzzer targets (and the seed generator) into
# OUTDIR with clang: tests/fuzz/build.sh OUTDIR [TARGET...] (default all).
# Exit 77 when clang is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${1:?usage: build.sh OUTDIR [TARGET...]}
shift
cc=${FUZZ_CC:-}
if [[ -z "$cc" ]]; then
    for c in clang clang-14; do command -v "$c" >/dev/null && { cc=$c; break; }; done
fi
if [[ -z "$cc" ]] || ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { (void)d; return (int)n * 0; }' |
    "$cc" -fsanitize=fuzzer -x c - -o /dev/null 2>/dev/null; then
    echo "fuzz build: no clang with libFuzzer (Debian: apt-get install clang-14 libclang-rt-14-dev)" >&2
    exit 77
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
goals=()
for t in "$@"; do goals+=("$out/$t"); done
make -s -f "$here/fuzz.mk" -j"${FUZZ_JOBS:-2}" TOP="$top" OUT="$out" CC="$cc" "${goals[@]}"
