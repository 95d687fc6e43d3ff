#!/bin/sh
# idl_files_test.sh -- numrpc-idlc on file parameters: every misuse of
# filename and rfile is an error at its exact position; a good use compiles
# and its descriptor names the types.
idlc=$TOP_BUILDDIR/idlc/numrpc-idlc
src=$TOP_SRCDIR/tests/sdpa/err_files.idl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { # description, command status
    if [ "$2" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi
}
"$idlc" -o "$tmp/never.c" "$src" 2> "$tmp/err"
st=$?
check "status 1 on errors" "$([ $st = 1 ] && echo 0 || echo 1)"
check "no output on errors" "$([ ! -e "$tmp/never.c" ] && echo 0 || echo 1)"
for want in \
    "1:30: error: rfile 'r' must be IN (the server reads the client's file)" \
    "1:48: error: filename 'f' must be IN (sent to the server) or OUT (sent back)" \
    "3:32: error: filename 'p' is a path, not a pointer: remove the '*'" \
    "3:48: error: filename 'q' cannot have dimensions (one file per parameter)" \
    "3:62: error: only strings have a bound; 's' is a rfile" \
    "6:11: error: Calls result 'g' must be an OUT scalar of a numeric or char type (e.g. OUT double *g)"; do
    grep -qF "$src:$want" "$tmp/err"
    check "$want" $?
done
cat > "$tmp/good.idl" <<'IDL'
Define g(IN rfile r, IN filename f, OUT filename o)
Calls "C" g(r, f, o);
IDL
"$idlc" -o "$tmp/good.c" "$tmp/good.idl" 2> "$tmp/err2"
check "a good use compiles" $?
grep -q "extern void g(numrpc_rfile \*, char \*, char \*);" "$tmp/good.c"
check "the prototype takes numrpc_rfile * and paths" $?
[ $fail = 0 ] || cat "$tmp/err"
echo "idl_files: $pass passed, $fail failed"
[ $fail = 0 ]
