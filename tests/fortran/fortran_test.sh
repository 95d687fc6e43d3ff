#!/usr/bin/env bash
# fortran_test.sh -- builds tests/fortran/solve.f90, handles.f90, async.f90 and progress.f90 against
# include/numrpc.f90 with gfortran, runs them and a typed-header C program
# against a live server.
set -uo pipefail
: "${TOP_BUILDDIR:?}" "${TOP_SRCDIR:?}"
GFORTRAN=${GFORTRAN:-gfortran}
here="$TOP_SRCDIR/tests/fortran"
lib="$TOP_BUILDDIR/client/.libs"
tmp=$(mktemp -d)
server=
trap '[[ -n "$server" ]] && kill "$server" 2>/dev/null; rm -rf "$tmp"' EXIT
passed=0
failed=0
pass() { passed=$((passed + 1)); echo "PASS $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; }
finish() {
    echo "fortran_test: $passed passed, $failed failed"
    [[ $failed -eq 0 ]]
    exit
}

# The tree's stub modules plus ftest (string, char, long, float, complex).
mkdir -p "$tmp/stubs" "$tmp/mod"
for m in linpack lapack blas; do ln -s "$TOP_BUILDDIR/stubs/.libs/$m.so" "$tmp/stubs/$m.so"; done
if "$TOP_BUILDDIR/idlc/numrpc-idlc" --module -o "$tmp/stubs/ftest.so" "$here/ftest.idl" \
        -- "$here/ftest.c" 2> "$tmp/idlc.err"; then
    pass "ftest stub module built"
else
    cat "$tmp/idlc.err"; fail "ftest stub module built"
fi

# The module the way a user compiles it, then the test program.
fflags="-std=f2018 -Wall -fcheck=all -g"
if "$GFORTRAN" ${CFLAGS:-} $fflags -J "$tmp/mod" -c "$TOP_SRCDIR/include/numrpc.f90" \
        -o "$tmp/numrpc.o" 2> "$tmp/f.err" &&
    "$GFORTRAN" ${CFLAGS:-} $fflags -I "$tmp/mod" "$here/solve.f90" "$tmp/numrpc.o" \
        -o "$tmp/solve" -L"$lib" -lnumrpc -Wl,-rpath,"$lib" ${LDFLAGS:-} 2>> "$tmp/f.err"; then
    pass "numrpc.f90 and solve.f90 compile"
else
    cat "$tmp/f.err"; fail "numrpc.f90 and solve.f90 compile"; finish
fi

# async.f90 (the asynchronous family) also compares with the local LAPACK.
if "$GFORTRAN" ${CFLAGS:-} $fflags -I "$tmp/mod" "$here/async.f90" "$tmp/numrpc.o" \
        -o "$tmp/async" -L"$lib" -lnumrpc -Wl,-rpath,"$lib" -llapack -lblas ${LDFLAGS:-} \
        2> "$tmp/fa.err"; then
    pass "async.f90 compiles"
else
    cat "$tmp/fa.err"; fail "async.f90 compiles"
fi

# handles.f90 also links the local LAPACK/BLAS it compares with.
if "$GFORTRAN" ${CFLAGS:-} $fflags -I "$tmp/mod" "$here/handles.f90" "$tmp/numrpc.o" \
        -o "$tmp/handles" -L"$lib" -lnumrpc -Wl,-rpath,"$lib" -llapack -lblas ${LDFLAGS:-} \
        2> "$tmp/fh.err"; then
    pass "handles.f90 compiles"
else
    cat "$tmp/fh.err"; fail "handles.f90 compiles"
fi

# progress.f90: a Fortran progress handler.
if "$GFORTRAN" ${CFLAGS:-} $fflags -I "$tmp/mod" "$here/progress.f90" "$tmp/numrpc.o" \
        -o "$tmp/progress" -L"$lib" -lnumrpc -Wl,-rpath,"$lib" ${LDFLAGS:-} 2> "$tmp/fp.err"; then
    pass "progress.f90 compiles"
else
    cat "$tmp/fp.err"; fail "progress.f90 compiles"
fi

"$TOP_BUILDDIR/server/numrpc-server" --bind 127.0.0.1 --port 0 --port-file "$tmp/port" \
    --stubs "$tmp/stubs" --quiet --workers 2 &
server=$!
for _ in $(seq 200); do [[ -s "$tmp/port" ]] && break; sleep 0.05; done
[[ -s "$tmp/port" ]] || { fail "server started"; finish; }
export NUMRPC_SERVER="127.0.0.1:$(cat "$tmp/port")"

# (a) and (c): remote solves and argument checks, one PASS/FAIL line each.
"$tmp/solve" > "$tmp/solve.out" 2>&1
rc=$?
cat "$tmp/solve.out"
passed=$((passed + $(grep -c '^PASS' "$tmp/solve.out")))
failed=$((failed + $(grep -c '^FAIL' "$tmp/solve.out")))
grep -q '^PASS fecho status' "$tmp/solve.out" || fail "fecho (ftest module) was served"
[[ $rc -eq 0 ]] || fail "solve exit status $rc"

# Handles: the matrix stays on the server between dgefa and dgesl.
if [[ -x "$tmp/handles" ]]; then
    "$tmp/handles" > "$tmp/handles.out" 2>&1
    rc=$?
    cat "$tmp/handles.out"
    passed=$((passed + $(grep -c '^PASS' "$tmp/handles.out")))
    failed=$((failed + $(grep -c '^FAIL' "$tmp/handles.out")))
    [[ $rc -eq 0 ]] || fail "handles exit status $rc"
fi

# The asynchronous family.
if [[ -x "$tmp/async" ]]; then
    "$tmp/async" > "$tmp/async.out" 2>&1
    rc=$?
    cat "$tmp/async.out"
    passed=$((passed + $(grep -c '^PASS' "$tmp/async.out")))
    failed=$((failed + $(grep -c '^FAIL' "$tmp/async.out")))
    [[ $rc -eq 0 ]] || fail "async exit status $rc"
fi

# Progress frames reach a Fortran handler.
if [[ -x "$tmp/progress" ]]; then
    "$tmp/progress" > "$tmp/progress.out" 2>&1
    rc=$?
    cat "$tmp/progress.out"
    passed=$((passed + $(grep -c '^PASS' "$tmp/progress.out")))
    failed=$((failed + $(grep -c '^FAIL' "$tmp/progress.out")))
    [[ $rc -eq 0 ]] || fail "progress exit status $rc"
fi

# Without status=, a failure stops the program with the reason.
for mode in nostatus:"unknown routine" positional:"status="; do
    "$tmp/solve" "${mode%%:*}" > "$tmp/stop.out" 2>&1
    rc=$?
    if [[ $rc -ne 0 ]] && grep -qF "${mode#*:}" "$tmp/stop.out" &&
        ! grep -q 'returned after a failure' "$tmp/stop.out"; then
        pass "numrpc_call without status= stops ($(head -1 "$tmp/stop.out"))"
    else
        cat "$tmp/stop.out"; fail "numrpc_call without status= stops (${mode%%:*}, rc $rc)"
    fi
done

# (b) the typed header of module lapack: a program compiles and solves; a
# float array passed for a double one fails to compile.
if "$TOP_BUILDDIR/cli/numrpc" describe --c-header lapack "$NUMRPC_SERVER" \
        > "$tmp/numrpc_lapack.h" 2> "$tmp/h.err"; then
    pass "describe --c-header lapack"
else
    cat "$tmp/h.err"; fail "describe --c-header lapack"
fi
cflags="-std=c11 -Wall -Werror -I$TOP_SRCDIR/include -I$tmp"
if cc ${CFLAGS:-} $cflags "$here/typed_lapack.c" -o "$tmp/typed" -L"$lib" -lnumrpc \
        -Wl,-rpath,"$lib" -lm ${LDFLAGS:-} && "$tmp/typed"; then
    pass "typed lapack header: compiles and solves"
else
    fail "typed lapack header: compiles and solves"
fi
sed 's/double a0\[LDA \* N\], a\[LDA \* N\]/double a0[LDA * N]; float a[LDA * N]/' \
    "$here/typed_lapack.c" > "$tmp/bad.c"
if ! grep -q 'float a\[' "$tmp/bad.c"; then
    fail "compile-fail case prepared"
elif cc ${CFLAGS:-} $cflags -Werror=incompatible-pointer-types -c "$tmp/bad.c" \
        -o "$tmp/bad.o" 2> "$tmp/bad.err"; then
    fail "a float* passed for double *a compiled"
elif grep -q "incompatible pointer type" "$tmp/bad.err"; then
    pass "a float* passed for double *a fails to compile"
else
    cat "$tmp/bad.err"; fail "compile-fail for the right reason"
fi
finish
