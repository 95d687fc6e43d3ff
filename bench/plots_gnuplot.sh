#!/bin/sh
# plots_gnuplot.sh -- PNG plots with gnuplot for run_all.sh: per-round MB/s vs
# size (round trip and one-way), the buffer-size sweep, Linpack MFLOPS vs n.
out=$1
for sys in raw-tuned raw-naive numrpc-dcopy omniorb-dcopy grpc-dcopy raw-sink numrpc-sink \
           omniorb-sink grpc-sink; do
    awk -F, -v s="$sys" 'NR > 1 && $6 == s && $5 == 0 && $1 ~ /^different|^unpinned/ { print $1, $4, $10 }' \
        "$out/transfer.csv" > "$out/.gp_$sys.dat"
done
gnuplot <<GP || exit 1
set terminal png size 900,600
set output "$out/throughput.png"
set logscale xy
set key left top
set xlabel "bytes each way"; set ylabel "MB/s, round trip (one point per round, different vCPUs)"
plot "$out/.gp_raw-tuned.dat" using 2:3 title "raw tuned", \
     "$out/.gp_raw-naive.dat" using 2:3 title "raw naive", \
     "$out/.gp_numrpc-dcopy.dat" using 2:3 title "numrpc dcopy", \
     "$out/.gp_omniorb-dcopy.dat" using 2:3 title "omniORB dcopy", \
     "$out/.gp_grpc-dcopy.dat" using 2:3 title "gRPC dcopy"
set output "$out/oneway.png"
set ylabel "MB/s, one-way bulk (one point per round, different vCPUs)"
plot "$out/.gp_raw-sink.dat" using 2:3 title "raw TCP", \
     "$out/.gp_numrpc-sink.dat" using 2:3 title "numrpc sink", \
     "$out/.gp_omniorb-sink.dat" using 2:3 title "omniORB sink", \
     "$out/.gp_grpc-sink.dat" using 2:3 title "gRPC sink"
GP
# The buffer-size figure (the Ninf paper's): numrpc MB/s by packet size, one
# line per socket buffer x TCP_NODELAY, median over rounds, per link.
for link in loopback wan; do
    f=$out/sweep_$link.csv
    [ -s "$f" ] || continue
    awk -F, 'NR > 1 && $7 == "numrpc-dcopy" { k = $5 " " $6 " " $4; v[k] = v[k] " " $11 }
    END {
        for (k in v) {
            n = split(v[k], a, " ")
            for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
            print k, (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2)
        }
    }' "$f" | sort -k1,1n -k2,2nr -k3,3n > "$out/.gp_sweep.dat"
    plot=
    for combo in $(awk '{ print $1 ":" $2 }' "$out/.gp_sweep.dat" | uniq); do
        buf=${combo%:*}; nd=${combo#*:}
        [ "$buf" = 0 ] && name=default || name="$((buf / 1024)) KiB"
        [ "$nd" = 1 ] && name="$name, NODELAY" || name="$name, Nagle"
        plot="$plot${plot:+, }\"< awk '\$1 == $buf && \$2 == $nd' $out/.gp_sweep.dat\" using 3:4 with linespoints title \"buffer $name\""
    done
    gnuplot <<GP || exit 1
set terminal png size 900,600
set output "$out/buffer_sweep_$link.png"
set termoption noenhanced
set logscale x 2
set format x "%.0b %BB"
set key left top
set xlabel "numrpc packet size (bytes)"; set ylabel "MB/s, numrpc dcopy round trip (median)"
set title "Packet size x socket buffer x TCP_NODELAY ($link)"
plot $plot
GP
done
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
