#!/bin/sh
# linpack_model.sh -- the Linpack model of the Ninf paper fitted to a run:
# T_comm = T_comm0 + (8n^2 + 20n)/B and T_comp = T_comp0 + (2/3 n^3 + 2n^2)/P_calc(n),
# with P_calc(n) = P_local(n) / s (the server's speed relative to the local
# run, fitted); prints how well the model predicts the remote MFLOPS.
# usage: linpack_model.sh LINPACK_CSV [LOCAL_CSV]   (numrpc-linpack --csv, mode
# linpack rows); with LOCAL_CSV it also predicts the sizes LINPACK_CSV lacks
# from their local times there (rows marked "model only").
set -eu
csv=${1:?usage: linpack_model.sh LINPACK_CSV [LOCAL_CSV]}
extra=${2:-/dev/null}
[ "$extra" = "$csv" ] && extra=/dev/null
awk -F, '
# Weighted least squares of y = A + S x with weights 1 / y^2; sets A and S.
function wls(x, y, k,    i, w, sw, sx, sy, sxx, sxy) {
    for (i = 1; i <= k; i++) {
        w = 1 / (y[i] * y[i]); sw += w; sx += w * x[i]; sy += w * y[i]
        sxx += w * x[i] * x[i]; sxy += w * x[i] * y[i]
    }
    S = (sw * sxy - sx * sy) / (sw * sxx - sx * sx); A = (sy - S * sx) / sw
}
FNR == 1 { file++ }
file == 2 && FNR > 1 && $2 == "linpack" { xloc[$1] = $3; next }
file == 1 && FNR > 1 && $2 == "linpack" {
    k++; n[k] = $1; rem[k] = $5; loc[k] = $3
    comm[k] = $8 + $10; comp[k] = $9
    bytes[k] = 8 * $1 * $1 + 20 * $1
    flops[k] = 2.0 / 3.0 * $1 * $1 * $1 + 2.0 * $1 * $1
}
END {
    if (k < 3) { print "(Linpack model: fewer than 3 sizes, no fit)"; exit }
    # Both fits are least squares weighted by 1/y^2 (relative errors): the
    # sizes span four decades and plain least squares would fit only n = 4000.
    wls(bytes, comm, k); t_comm0 = A; slope = S
    wls(loc, comp, k); t_comp0 = A; s = S
    printf "Linpack model fitted to this run: T_comm0 = %.1f us, B = %.3g MB/s, T_comp0 = %.1f us, P_calc(n) = P_local(n) / %.3f.\n\n", t_comm0 * 1e6, 1e-6 / slope, t_comp0 * 1e6, s
    print "| n | measured remote MFLOPS | predicted | error |"
    print "|---|---|---|---|"
    for (i = 1; i <= k; i++) {
        pred = t_comm0 + bytes[i] * slope + t_comp0 + s * loc[i]
        m = flops[i] / rem[i] / 1e6; p = flops[i] / pred / 1e6
        printf "| %d | %.0f | %.0f | %+.1f %% |\n", n[i], m, p, 100 * (p - m) / m
        have[n[i]] = 1
    }
    for (x in xloc) if (!(x in have)) {
        fl = 2.0 / 3.0 * x * x * x + 2.0 * x * x
        pred = t_comm0 + (8 * x * x + 20 * x) * slope + t_comp0 + s * xloc[x]
        printf "| %d | (not run: model only) | %.0f | – |\n", x, fl / pred / 1e6
    }
}' "$csv" "$extra"
