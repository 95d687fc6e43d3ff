/* bench_codec.c -- numrpc-bench-codec: throughput of the bulk XDR codec for
 * doubles in 4 KiB packets, against libtirpc's per-element xdr_vector and memcpy. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/types.h>
#include <rpc/xdr.h>

#include "codec.h"
#include "stats.h"

#define PACKET 4096u
#define HEADER 16u
#define PAYLOAD (PACKET - HEADER) /* 4080 bytes = 510 doubles */
#define PER_PACKET (PAYLOAD / 8)

enum method { M_MEMCPY, M_CODEC, M_CODEC_HOT, M_XDR, M_COUNT };
static const char *const method_name[M_COUNT] = {"memcpy", "codec", "codec-1pkt", "xdr_vector"};
static const char *const method_help[M_COUNT] = {
    "memcpy of each 4080-byte payload (the ceiling)",
    "codec_encode/decode into/from a packet-framed buffer of the whole array",
    "codec_encode/decode into/from one reused 4 KiB packet (what a sender loop does)",
    "libtirpc xdr_vector(..., xdr_double) per packet over xdrmem (per-element calls)"};

static volatile uint64_t sink;

/* One pass over the array: encode (dir 0) or decode (dir 1).  Returns 0 or
 * -1 on an XDR failure. */
static int pass(int m, int dir, double *arr, size_t n, unsigned char *wire)
{
    size_t npk = (n + PER_PACKET - 1) / PER_PACKET;
    for (size_t p = 0; p < npk; p++) {
        size_t k = n - p * PER_PACKET < PER_PACKET ? n - p * PER_PACKET : PER_PACKET;
        double *a = arr + p * PER_PACKET;
        unsigned char *w = (m == M_CODEC_HOT ? wire : wire + p * PACKET) + HEADER;
        switch (m) {
        case M_MEMCPY:
            if (dir == 0) memcpy(w, a, k * 8);
            else memcpy(a, w, k * 8);
            break;
        case M_CODEC:
        case M_CODEC_HOT:
            if (dir == 0) codec_encode(w, a, k, 8, 8, 1);
            else codec_decode(a, w, k, 8, 8, 1);
            break;
        case M_XDR: {
            XDR x;
            xdrmem_create(&x, (char *)w, PAYLOAD, dir == 0 ? XDR_ENCODE : XDR_DECODE);
            bool_t ok = xdr_vector(&x, (char *)a, (u_int)k, sizeof(double),
                                   (xdrproc_t)xdr_double);
            xdr_destroy(&x);
            if (!ok) return -1;
            break;
        }
        }
        if (m == M_CODEC_HOT) sink += w[0];
    }
    return 0;
}

int main(int argc, char **argv)
{
    int runs = 7;
    const char *csv = NULL, *md_path = NULL;
    size_t sizes[8] = {8u << 20, 64u << 20};
    int nsizes = 2;
    static const struct option lo[] = {{"runs", required_argument, 0, 'r'},
                                       {"quick", no_argument, 0, 'q'},
                                       {"csv", required_argument, 0, 'c'},
                                       {"markdown", required_argument, 0, 'm'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (ch) {
        case 'r': runs = atoi(optarg); break;
        case 'q': runs = 5; break;
        case 'c': csv = optarg; break;
        case 'm': md_path = optarg; break;
        case 'h':
            printf("usage: numrpc-bench-codec [--runs R (>=5)] [--quick] [--csv FILE] "
                   "[--markdown FILE]\nEncode/decode GB/s (array bytes / s) of doubles in "
                   "4 KiB packets (4080-byte payloads), 8 MiB and 64 MiB arrays, median of R "
                   "runs.\n");
            for (int m = 0; m < M_COUNT; m++) printf("  %-11s %s\n", method_name[m], method_help[m]);
            return 0;
        default: return 2;
        }
    }
    if (runs < 5) runs = 5;
    FILE *cf = NULL, *md = NULL;
    if (csv && !(cf = fopen(csv, "w"))) {
        perror(csv);
        return 2;
    }
    if (md_path && !(md = fopen(md_path, "w"))) {
        perror(md_path);
        return 2;
    }
    if (cf) fprintf(cf, "bytes,method,direction,run,seconds,gb_per_s\n");
    if (md)
        fprintf(md, "| array | method | encode GB/s | decode GB/s | target |\n"
                    "|---|---|---|---|---|\n");
    printf("%-8s %-11s %12s %12s   %s\n", "array", "method", "encode GB/s", "decode GB/s",
           "target (codec >= 10 GB/s)");
    int bad = 0;
    for (int si = 0; si < nsizes; si++) {
        size_t bytes = sizes[si], n = bytes / 8;
        size_t npk = (n + PER_PACKET - 1) / PER_PACKET;
        double *src = malloc(bytes), *back = malloc(bytes);
        unsigned char *wire = malloc(npk * PACKET);
        if (!src || !back || !wire) {
            fprintf(stderr, "numrpc-bench-codec: out of memory\n");
            return 2;
        }
        for (size_t i = 0; i < n; i++) src[i] = (double)i * 1.25 - 7.0 / (double)(i + 1);
        memset(wire, 0, npk * PACKET);
        memset(back, 0, bytes);
        for (int m = 0; m < M_COUNT; m++) {
            double gbs[2];
            for (int dir = 0; dir < 2; dir++) {
                double t[64];
                int r_total = runs > 64 ? 64 : runs;
                if (pass(m, dir, dir == 0 ? src : back, n, wire) != 0) bad = 1; /* warm-up */
                for (int r = 0; r < r_total; r++) {
                    double t0 = bench_now();
                    if (pass(m, dir, dir == 0 ? src : back, n, wire) != 0) bad = 1;
                    t[r] = bench_now() - t0;
                    if (cf)
                        fprintf(cf, "%zu,%s,%s,%d,%.9g,%.6g\n", bytes, method_name[m],
                                dir ? "decode" : "encode", r, t[r], bytes / t[r] / 1e9);
                }
                gbs[dir] = bytes / bench_median(t, (size_t)r_total) / 1e9;
            }
            /* Round trip check (the one-packet variant only keeps the last packet). */
            if (m != M_CODEC_HOT && memcmp(src, back, bytes) != 0) {
                fprintf(stderr, "numrpc-bench-codec: %s: decode(encode(x)) != x\n",
                        method_name[m]);
                bad = 1;
            }
            if (m == M_CODEC || m == M_XDR) { /* both must give the same XDR bytes */
                static unsigned char ref[PAYLOAD];
                if (m == M_CODEC) memcpy(ref, wire + HEADER, PAYLOAD);
                else if (memcmp(ref, wire + HEADER, PAYLOAD) != 0) {
                    fprintf(stderr, "numrpc-bench-codec: codec and xdr_double disagree\n");
                    bad = 1;
                }
            }
            memset(back, 0, bytes);
            const char *tgt = "";
            char tb[48];
            if (m == M_CODEC || m == M_CODEC_HOT) {
                double worst = gbs[0] < gbs[1] ? gbs[0] : gbs[1];
                snprintf(tb, sizeof tb, ">= 10 %s", worst >= 10.0 ? "met" : "MISSED");
                tgt = tb;
            }
            char lab[24];
            snprintf(lab, sizeof lab, "%zu MiB", bytes >> 20);
            printf("%-8s %-11s %12.2f %12.2f   %s\n", lab, method_name[m], gbs[0], gbs[1], tgt);
            if (md)
                fprintf(md, "| %s | %s | %.2f | %.2f | %s |\n", lab, method_name[m], gbs[0],
                        gbs[1], *tgt ? tgt : "–");
        }
        free(src);
        free(back);
        free(wire);
    }
    printf("methods:\n");
    for (int m = 0; m < M_COUNT; m++) printf("  %-11s %s\n", method_name[m], method_help[m]);
    if (cf) fclose(cf);
    if (md) fclose(md);
    return bad;
}
