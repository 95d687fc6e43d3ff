#!/usr/bin/env bash
# sdpa_bench.sh -- SDPA standalone vs numrpc (remote file, whole-file shipping)
# vs CORBA on SDPLIB problems, on loopback and through a delay proxy (WAN).
# usage: bench/sdpa_bench.sh [--build DIR] [--out DIR] [--reps N] [--wan-ms D]
#                            [--quick] [--report-only] [PROBLEM ...]
# Writes OUT/sdpa.csv, OUT/sdpa.md (medians, ratios) and OUT/sdpa.png.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build
out=$top/bench/results-sdpa
reps=3
wan_ms=0
data=/work/shared/data/sdplib
problems=()
report_only=0
while [[ $# -gt 0 ]]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --wan-ms) wan_ms=$2; shift 2 ;;
    --quick) reps=1; problems=(truss1 control1 theta1); shift ;;
    --report-only) report_only=1; shift ;; # the table and plot of OUT/sdpa.csv again
    -*) echo "usage: $0 [--build DIR] [--out DIR] [--reps N] [--wan-ms D] [--quick] [PROBLEM ...]" >&2; exit 2 ;;
    *) problems+=("$1"); shift ;;
    esac
done
[[ ${#problems[@]} -gt 0 ]] || problems=(truss1 control1 theta1 control2 mcp100 arch0 theta3 gpp100 theta4 theta5 control8)
apps=$build/apps/sdpa
csv=$out/sdpa.csv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [[ $report_only == 0 ]]; then
for exe in "$apps/sdpa-local" "$apps/sdpa-remote" "$build/server/numrpc-server"; do
    [[ -x $exe ]] || { echo "sdpa_bench: $exe is not built" >&2; exit 1; }
done
have_corba=0
[[ -x $apps/sdpa-corba && -x $apps/sdpa-corba-server ]] && have_corba=1
mkdir -p "$out"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 # equal BLAS threads everywhere

wait_file() { for _ in $(seq 200); do [[ -s $1 ]] && return 0; sleep 0.05; done; return 1; }

# One numrpc server (one worker, one BLAS thread) and one CORBA server.
"$build/server/numrpc-server" --port 0 --bind 127.0.0.1 --port-file "$tmp/port" --quiet \
    --workers 1 --blas-threads 1 --stubs "$build/stubs/.libs" &
pids+=($!)
wait_file "$tmp/port"
port=$(cat "$tmp/port")
links=(loopback)
[[ $wan_ms != 0 ]] && links+=(wan)
if [[ $wan_ms != 0 ]]; then
    "$build/bench/numrpc-delay-proxy" --port-file "$tmp/wport" --to "$port" --delay-ms "$wan_ms" &
    pids+=($!)
    wait_file "$tmp/wport"
fi
# CORBA: one server on loopback, one published behind its own delay proxy.
if [[ $have_corba == 1 ]]; then
    "$apps/sdpa-corba-server" --ior-file "$tmp/ior.loopback" &
    pids+=($!)
    wait_file "$tmp/ior.loopback"
    if [[ $wan_ms != 0 ]]; then
        corba_port=$((20000 + RANDOM % 20000))
        "$build/bench/numrpc-delay-proxy" --port-file "$tmp/cport" --to "$corba_port" --delay-ms "$wan_ms" &
        pids+=($!)
        wait_file "$tmp/cport"
        NUMRPC_BENCH_CORBA_PORT=$corba_port NUMRPC_BENCH_PUBLISH=127.0.0.1:$(cat "$tmp/cport") \
            "$apps/sdpa-corba-server" --ior-file "$tmp/ior.wan" &
        pids+=($!)
        wait_file "$tmp/ior.wan"
    fi
fi

field() { awk -v k="$1" '$1 == k { print $3 }' "$2"; }
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "link,problem,file_bytes,system,reps,median_wall_s,ratio_standalone,median_compute_s,send_s,overhead_s,bytes_moved,bytes_ratio,throughput_MBps,phase,primal" > "$csv"
for p in "${problems[@]}"; do
    f=$data/$p.dat-s
    [[ -r $f ]] || { echo "sdpa_bench: no $f" >&2; continue; }
    size=$(stat -c %s "$f")
    # Standalone: the same solve (a child process) on the local file.
    for r in $(seq "$reps"); do
        "$apps/sdpa-local" "$f" > "$tmp/out"
        field wall_seconds "$tmp/out" >> "$tmp/local.$p"
    done
    local_wall=$(median < "$tmp/local.$p")
    phase=$(field phase.value "$tmp/out"); primal=$(field objValPrimal "$tmp/out")
    echo "loopback,$p,$size,standalone,$reps,$local_wall,1,$local_wall,0,0,0,0,0,$phase,$primal" >> "$csv"
    for link in "${links[@]}"; do
        rport=$port
        [[ $link == wan ]] && rport=$(cat "$tmp/wport")
        for mode in rfile ship; do
            : > "$tmp/w"; : > "$tmp/c"; : > "$tmp/s"; : > "$tmp/b"
            for r in $(seq "$reps"); do
                NUMRPC_SERVER=127.0.0.1:$rport "$apps/sdpa-remote" "$f" --mode "$mode" > "$tmp/out"
                field wall_seconds "$tmp/out" >> "$tmp/w"
                field compute_seconds "$tmp/out" >> "$tmp/c"
                field send_seconds "$tmp/out" >> "$tmp/s"
                field bytes_sent "$tmp/out" >> "$tmp/b"
            done
            w=$(median < "$tmp/w"); c=$(median < "$tmp/c"); s=$(median < "$tmp/s"); b=$(median < "$tmp/b")
            phase=$(field phase.value "$tmp/out"); primal=$(field objValPrimal "$tmp/out")
            awk -v l="$link" -v p="$p" -v n="$size" -v m="numrpc-$mode" -v r="$reps" -v w="$w" -v lw="$local_wall" \
                -v c="$c" -v s="$s" -v b="$b" -v ph="$phase" -v pr="$primal" 'BEGIN {
                o = w - lw; tp = o > 0 ? b / o / 1e6 : 0
                printf "%s,%s,%d,%s,%d,%.6f,%.4f,%.6f,%.6f,%.6f,%d,%.4f,%.2f,%s,%s\n", l, p, n, m, r, w, w / lw, c, s, o, b, b / n, tp, ph, pr }' >> "$csv"
        done
        if [[ $have_corba == 1 ]]; then
            : > "$tmp/w"
            for r in $(seq "$reps"); do
                "$apps/sdpa-corba" "$tmp/ior.$link" "$f" > "$tmp/out"
                field wall_seconds "$tmp/out" >> "$tmp/w"
            done
            w=$(median < "$tmp/w")
            phase=$(field phase.value "$tmp/out"); primal=$(field objValPrimal "$tmp/out")
            awk -v l="$link" -v p="$p" -v n="$size" -v r="$reps" -v w="$w" -v lw="$local_wall" -v ph="$phase" -v pr="$primal" 'BEGIN {
                o = w - lw; tp = o > 0 ? n / o / 1e6 : 0
                printf "%s,%s,%d,corba,%d,%.6f,%.4f,nan,nan,%.6f,%d,1,%.2f,%s,%s\n", l, p, n, r, w, w / lw, o, n, tp, ph, pr }' >> "$csv"
        fi
    done
    echo "sdpa_bench: $p done" >&2
done

for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
fi

# Markdown: per problem and link, wall time normalised by standalone, the
# targets (remote <= 1.10 x standalone + ship send time; rfile bytes <=
# 1.02 x file; rfile no later than ship).
md=$out/sdpa.md
awk -F, -v wan="$wan_ms" 'NR == 1 { next }
{ k = $1 "," $2; wall[k, $4] = $6; if (!(k in keys)) { keys[k] = 1; ks[++n] = k }; size[k] = $3; lw[$2] = ($4 == "standalone") ? $6 : lw[$2] }
$4 == "numrpc-ship" { send[k] = $9 }
$4 == "numrpc-rfile" { rb[k] = $12 }
END {
    print "| link | problem | bytes | standalone s | rfile x | ship x | corba x | rfile bytes/file | rfile <= 1.10 x standalone + send | rfile <= ship |"
    print "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"
    for (i = 1; i <= n; i++) {
        k = ks[i]; split(k, kk, ",")
        if (!((k, "numrpc-rfile") in wall)) continue
        s = lw[kk[2]]
        c = ((k, "corba") in wall) ? sprintf("%.3f", wall[k, "corba"] / s) : "-"
        t1 = wall[k, "numrpc-rfile"] <= 1.10 * s + send[k] ? "yes" : "no"
        t2 = wall[k, "numrpc-rfile"] <= wall[k, "numrpc-ship"] ? "yes" : "no"
        printf "| %s | %s | %d | %.3f | %.3f | %.3f | %s | %.4f | %s | %s |\n", kk[1], kk[2], size[k], s,
            wall[k, "numrpc-rfile"] / s, wall[k, "numrpc-ship"] / s, c, rb[k], t1, t2
    }
}' "$csv" > "$md"
cat "$md"

# PNG: wall time / standalone per problem (loopback), one bar per system.
if command -v gnuplot > /dev/null; then
    awk -F, 'NR > 1 && $1 == "loopback" { r[$2, $4] = $7; if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
    END { for (i = 1; i <= n; i++) { p = order[i]; printf "%s %s %s %s\n", p, r[p, "numrpc-rfile"], r[p, "numrpc-ship"], ((p, "corba") in r) ? r[p, "corba"] : "nan" } }' \
        "$csv" > "$tmp/gp.dat"
    gnuplot <<GP || true
set terminal png size 900,600
set output "$out/sdpa.png"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8
set ylabel "wall time / standalone (loopback, median of $reps)"
set xtics rotate by -30
set yrange [0:*]
plot "$tmp/gp.dat" using 2:xtic(1) title "numrpc remote file", "" using 3 title "numrpc shipped file", "" using 4 title "CORBA (omniORB)", 1 notitle lt -1
GP
fi
echo "sdpa_bench: $csv, $md${out:+, $out/sdpa.png}"
