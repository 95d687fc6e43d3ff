#!/bin/sh
# headline.sh -- the headline table from one run's output folder:
# 8 B, 64 KiB, 1 MiB and 8 MiB round trips and Linpack n = 500 ... 4000, each system
# beside the raw socket (or local Linpack), for loopback, veth LAN and WAN.
# usage: headline.sh OUT_DIR   (transfer.csv, lan.csv, wan.csv, linpack_*t1.csv)
set -u
out=${1:?usage: headline.sh OUT_DIR}

# Round trips of one CSV (placement different-cpus, or the only one there):
# per system, the median over rounds of the time, and the median over rounds
# of the time / raw-tuned time of the same round.
transfer_rows() { # csv label
    [ -s "$1" ] || { echo "| $2 | (not run) | | | | |"; return; }
    awk -F, -v label="$2" '
    function median(a, n,   i, j, t) {
        for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function fmt(s) { return s >= 1 ? sprintf("%.2f s", s) : s >= 1e-3 ? sprintf("%.2f ms", s * 1e3) : sprintf("%.1f µs", s * 1e6) }
    NR == 1 { next }
    { places[$1] = 1 }
    $5 == 0 { t[$1, $4, $6, $7] = $9; seen[$1, $4, $6] = 1; if ($7 + 1 > rounds) rounds = $7 + 1 }
    END {
        pl = ("different-cpus" in places) ? "different-cpus" : ""
        if (pl == "") for (p in places) pl = p
        split("8 65536 1048576 8388608", sizes, " ")
        split("8 B|64 KiB|1 MiB|8 MiB", names, "|")
        split("numrpc-dcopy omniorb-dcopy grpc-dcopy", sys, " ")
        for (i = 1; i <= 4; i++) {
            b = sizes[i]
            if (!((pl, b, "raw-tuned") in seen)) continue # a size this run did not measure (--quick)
            rows++
            n = 0; for (r = 0; r < rounds; r++) if ((pl, b, "raw-tuned", r) in t) v[++n] = t[pl, b, "raw-tuned", r]
            line = sprintf("| %s | %s | %s", label, names[i], fmt(median(v, n)))
            for (k = 1; k <= 3; k++) {
                if (!((pl, b, sys[k]) in seen)) { line = line " | –"; continue }
                n = 0; m = 0
                for (r = 0; r < rounds; r++) if ((pl, b, sys[k], r) in t && (pl, b, "raw-tuned", r) in t) {
                    v[++n] = t[pl, b, sys[k], r]; q[++m] = t[pl, b, sys[k], r] / t[pl, b, "raw-tuned", r]
                }
                line = line sprintf(" | %s (**%.2f×**)", fmt(median(v, n)), median(q, m))
            }
            print line " |"
        }
        if (rows == 0) printf "| %s | (no size of the table measured) | | | | |\n", label
    }' "$1"
}

linpack_rows() { # csv label
    [ -s "$1" ] || { echo "| $2 | (not run) | | | | |"; return; }
    awk -F, -v label="$2" '
    NR > 1 && $2 == "linpack" && ($1 == 500 || $1 == 1000 || $1 == 2000 || $1 == 4000) {
        c = ($16 != "" && $16 > 0) ? sprintf("%.0f (**%.3f**)", $16, $16 / $4) : "–"
        nc = ($16 != "" && $16 > 0) ? sprintf("%.3f", $6 / $16) : "–"
        printf "| %s | %d | %.0f | %.0f (**%.3f**) | %s | %s |\n", label, $1, $4, $6, $7, c, nc
    }' "$1"
}

echo "Round trips (N bytes out, N bytes back; median of interleaved rounds, client and"
echo "servers on different vCPUs). In brackets: time / raw tuned TCP time in the same round."
echo
echo "| link | size | raw TCP (tuned) | numrpc | omniORB | gRPC |"
echo "|---|---|---|---|---|---|"
transfer_rows "$out/transfer.csv" loopback
transfer_rows "$out/lan.csv" "veth LAN"
transfer_rows "$out/wan.csv" "WAN 3 Mbit/s"
echo
echo "Linpack (one remote call; 1 BLAS thread on every side; MFLOPS including"
echo "communication). In brackets: remote MFLOPS / local MFLOPS."
echo
echo "| link | n | local | numrpc | omniORB | numrpc / omniORB |"
echo "|---|---|---|---|---|---|"
linpack_rows "$out/linpack_t1.csv" loopback
linpack_rows "$out/linpack_lan_t1.csv" "veth LAN"
linpack_rows "$out/linpack_wan_t1.csv" "WAN 3 Mbit/s"
