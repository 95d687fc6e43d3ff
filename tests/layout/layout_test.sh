#!/usr/bin/env bash
# layout_test.sh -- the house's shape holds: no circle of calls among the
# files of any folder, and no source file outside tests/ over 700 lines.
set -uo pipefail
: "${TOP_SRCDIR:?}" "${TOP_BUILDDIR:?}"
cd "$TOP_SRCDIR" || exit 1
max_lines=700
passed=0; failed=0

# A folder's dependency graph, from the objects the build made: module a
# -> module b when a calls a function (or uses a variable) that b defines
# (a module is a source file; "libnumrpc_la-call.o" is module call).  One
# umbrella header hides circles from the includes; the linker's view does
# not.  tsort names a loop when the graph has one.
module_of() { local m=${1##*/}; m=${m%.o}; echo "${m##*-}"; }
for dir in common client cli server metaserver idlc mpi bench apps/linpack apps/sdpa apps/corba; do
    objs=$(find "$TOP_BUILDDIR/$dir" -maxdepth 1 -name '*.o' 2>/dev/null)
    [[ -n $objs ]] || continue
    defs=$(for o in $objs; do
        nm --defined-only "$o" 2>/dev/null | awk -v m="$(module_of "$o")" '$2 ~ /^[TDBR]$/ {print $3, m}'
    done | sort -u)
    edges=$(for o in $objs; do
        from=$(module_of "$o")
        nm --undefined-only "$o" 2>/dev/null | awk '{print $2}' | sort -u |
            join - <(echo "$defs") | awk -v f="$from" '$2 != f {print f, $2}'
    done | sort -u)
    loop=$( [[ -n $edges ]] && tsort <<<"$edges" 2>&1 >/dev/null | grep -v '^tsort: -: input contains a loop:$')
    if [[ -z $loop ]]; then
        passed=$((passed + 1))
    else
        echo "FAIL: a circle among the files of $dir/ (each calls the next):"
        sed 's/^tsort: /    /' <<<"$loop"
        failed=$((failed + 1))
    fi
done

# Every source file outside tests/ (and generated or vendored code) within
# the limit.
while read -r n f; do
    [[ $f == total ]] && continue
    if ((n > max_lines)); then
        echo "FAIL: $f has $n lines (at most $max_lines)"
        failed=$((failed + 1))
    else
        passed=$((passed + 1))
    fi
done < <(git ls-files -- '*.c' '*.h' '*.cc' '*.l' '*.y' '*.py' ':!tests/*' | xargs wc -l)

echo "layout_test: $passed passed, $failed failed"
((failed == 0))
