#!/bin/sh
# plots_gnuplot.sh -- PNG plots with gnuplot for run_all.sh when matplotlib is
# absent: per-round MB/s vs size (numrpc, raw tuned) and Linpack MFLOPS vs n.
out=$1
for sys in raw-tuned raw-naive numrpc-dcopy omniorb-dcopy; do
    awk -F, -v s="$sys" 'NR > 1 && $6 == s && $5 == 0 { print $1, $4, $10 }' \
        "$out/transfer.csv" > "$out/.gp_$sys.dat"
done
gnuplot <<GP || exit 1
set terminal png size 900,600
set output "$out/throughput.png"
set logscale xy
set xlabel "bytes each way"; set ylabel "MB/s (one point per round)"
plot "$out/.gp_raw-tuned.dat" using 2:3 title "raw tuned", \
     "$out/.gp_raw-naive.dat" using 2:3 title "raw naive", \
     "$out/.gp_numrpc-dcopy.dat" using 2:3 title "numrpc dcopy", \
     "$out/.gp_omniorb-dcopy.dat" using 2:3 title "omniORB dcopy"
GP
# The packet-size figure: numrpc 8 MiB round trips by packet size, per placement.
awk -F, 'NR > 1 && $6 == "numrpc-dcopy" && $5 > 0 { print $1, $5, $10 }' \
    "$out/transfer.csv" > "$out/.gp_packets.dat"
if [ -s "$out/.gp_packets.dat" ]; then
    gnuplot <<GP || exit 1
set terminal png size 900,600
set output "$out/packet_size.png"
set logscale x 2
set xlabel "packet size (bytes)"; set ylabel "MB/s, 8 MiB each way (one point per round)"
plot "< grep ^same $out/.gp_packets.dat" using 2:3 title "same vCPU", \
     "< grep ^different $out/.gp_packets.dat" using 2:3 title "different vCPUs"
GP
fi
for t in 1 2; do
    f=$out/linpack_t$t.csv
    [ -s "$f" ] || continue
    gnuplot <<GP || exit 1
set terminal png size 900,600
set output "$out/linpack_t$t.png"
set datafile separator ","
set logscale x
set xlabel "n"; set ylabel "MFLOPS"
set title "Linpack, $t BLAS thread(s)"
plot "< awk -F, 'NR>1 && \$2==\"linpack\"' $f" using 1:4 with linespoints title "local", \
     "< awk -F, 'NR>1 && \$2==\"linpack\"' $f" using 1:6 with linespoints title "remote linpack", \
     "< awk -F, 'NR>1 && \$2==\"dgefa+dgesl\"' $f" using 1:6 with linespoints title "remote dgefa+dgesl", \
     "< awk -F, 'NR>1 && \$2==\"linpack\" && \$16 != \"\"' $f" using 1:16 with linespoints title "omniORB linpack"
GP
done
rm -f "$out"/.gp_*.dat
