/* transfer_report.c -- numrpc-bench-transfer's results: medians and ratios over
 * rounds with their spreads, the tables (stdout, Markdown) and the CSV files. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fit.h"
#include "stats.h"
#include "transfer_opt.h"
#include "transfer_place.h"
#include "transfer_measure.h"
#include "transfer_report.h"

/* The peer systems reported against numrpc: bulk and ping ids, and names. */
static const struct baseline {
    int bulk, ping, sink;
    const char *name;
} baselines[] = {{SYS_CORBA, SYS_CORBA_PING, SYS_CORBA_SINK, "omniORB"},
                 {SYS_GRPC, SYS_GRPC_PING, SYS_GRPC_SINK, "gRPC"}};
#define NBASELINES (sizeof baselines / sizeof baselines[0])

/* ---- medians and ratios over rounds ---- */

/* Per-round medians of (placement, bytes, packet, system), in round order. */
static size_t collect(int pi, size_t bytes, size_t packet, int sys, double *out)
{
    size_t nsamples;
    const struct sample *samples = measure_samples(&nsamples);
    size_t k = 0;
    for (size_t i = 0; i < nsamples; i++) {
        const struct sample *s = &samples[i];
        if (s->placement == pi && s->bytes == bytes && s->packet == packet && s->system == sys)
            out[k++] = s->median_s;
    }
    return k;
}

struct ratio_stats {
    double median, min, max, lo, hi;
    size_t n;
};

/* Ratio sys / base from rounds that ran both; median, range, bootstrap CI. */
static struct ratio_stats ratio_of(int pi, size_t bytes, size_t packet_sys, size_t packet_base,
                                   int sys, int base)
{
    double a[MAX_ROUNDS], b[MAX_ROUNDS], r[MAX_ROUNDS];
    size_t na = collect(pi, bytes, packet_sys, sys, a);
    size_t nb = collect(pi, bytes, packet_base, base, b);
    size_t n = na < nb ? na : nb;
    struct ratio_stats st = {0, 0, 0, 0, 0, n};
    for (size_t i = 0; i < n; i++) r[i] = a[i] / b[i];
    if (n == 0) return st;
    st.min = bench_min(r, n);
    st.max = bench_max(r, n);
    bench_bootstrap_median_ci(r, n, BOOTSTRAP_RESAMPLES, CI_LEVEL, &st.lo, &st.hi);
    st.median = bench_median(r, n);
    return st;
}

static double median_of(int pi, size_t bytes, size_t packet, int sys)
{
    double v[MAX_ROUNDS];
    size_t n = collect(pi, bytes, packet, sys, v);
    return bench_median(v, n);
}

const char *report_size_label(size_t b, char *buf, size_t len)
{
    if (b >= (1u << 20) && b % (1u << 20) == 0)
        snprintf(buf, len, "%zu MiB", b >> 20);
    else if (b >= 1024 && b % 1024 == 0)
        snprintf(buf, len, "%zu KiB", b >> 10);
    else
        snprintf(buf, len, "%zu B", b);
    return buf;
}

double report_mbps(size_t bytes, double s)
{
    return s > 0 ? (double)bytes / s / 1e6 : 0.0;
}

static void verdict(char *buf, size_t len, double value, double target)
{
    if (target <= 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "<= %.2f %s", target, value <= target ? "met" : "MISSED");
}

static double ping_target(const struct placement *pl, int ncpu)
{
    if (ncpu < 2 || (pl->client_cpu >= 0 && pl->client_cpu == pl->server_cpu)) return 2.0;
    return 1.3;
}

/* One-way bulk (TTCP style): every system's MB/s per size, ratios to raw. */
/* ---- the round trips, per placement ---- */

static void oneway_table(int pi, FILE *md)
{
    char lab[32];
    double tmp[MAX_ROUNDS];
    if (collect(pi, bench_opt.sizes[0] / 8 ? bench_opt.sizes[0] / 8 * 8 : 8, 0, SYS_RAW_SINK,
                tmp) == 0)
        return;
    printf("-- one-way bulk (array out, 8-byte ack back): MB/s; ratio = time / raw-sink time, "
           "same round (90%% CI)\n");
    printf("%-9s %-13s %12s %10s %8s %15s\n", "size", "system", "median_s", "MB/s", "ratio",
           "90% CI median");
    if (md) {
        fprintf(md, "\nOne-way bulk (TTCP style: the array out, an 8-byte acknowledgement back), "
                    "MB/s of payload; in brackets time / raw time in the same round (90 %% CI):\n\n"
                    "| size | raw TCP | numrpc | omniORB | gRPC | numrpc / omniORB |\n"
                    "|---|---|---|---|---|---|\n");
    }
    for (int i = 0; i < bench_opt.nsizes; i++) {
        size_t b = bench_opt.sizes[i] / 8 ? bench_opt.sizes[i] / 8 * 8 : 8;
        report_size_label(b, lab, sizeof lab);
        double raw = median_of(pi, b, 0, SYS_RAW_SINK);
        if (md) fprintf(md, "| %s | %.2f |", lab, report_mbps(b, raw));
        for (int sys = SYS_RAW_SINK; sys <= SYS_GRPC_SINK; sys++) {
            int have = collect(pi, b, 0, sys, tmp) > 0;
            if (sys == SYS_RAW_SINK) {
                printf("%-9s %-13s %12.3e %10.2f %8s\n", lab, measure_sys_name[sys], raw,
                       report_mbps(b, raw), "1");
                continue;
            }
            if (!have) {
                if (md) fprintf(md, " – |");
                continue;
            }
            double m = median_of(pi, b, 0, sys);
            struct ratio_stats r = ratio_of(pi, b, 0, 0, sys, SYS_RAW_SINK);
            printf("%-9s %-13s %12.3e %10.2f %8.3f %7.3f..%-7.3f\n", lab, measure_sys_name[sys], m,
                   report_mbps(b, m), r.median, r.lo, r.hi);
            if (md)
                fprintf(md, " %.2f (%.3f; %.3f..%.3f) |", report_mbps(b, m), r.median, r.lo, r.hi);
        }
        if (md) {
            if (collect(pi, b, 0, SYS_CORBA_SINK, tmp) > 0) {
                struct ratio_stats r = ratio_of(pi, b, 0, 0, SYS_NUMRPC_SINK, SYS_CORBA_SINK);
                fprintf(md, " **%.3f** (%.3f..%.3f) |\n", r.median, r.lo, r.hi);
            } else {
                fprintf(md, " – |\n");
            }
        }
    }
}

/* The linear model T = b0 + b1*m of each system over every (size, round)
 * median of one placement, and the jitter of its largest size. */
static void fit_table(int pi, FILE *md)
{
    size_t nsamples;
    const struct sample *samples = measure_samples(&nsamples);
    static double x[MAX_ROUNDS * MAX_SIZES], y[MAX_ROUNDS * MAX_SIZES];
    printf("-- linear model T = b0 + b1*m (m = bytes each way), 90%% CIs; jitter = std dev "
           "of one round's calls at the largest size, all / without the first\n");
    printf("%-14s %22s %26s %12s %12s %22s\n", "system", "t0 = b0 (us)", "b1 (ns/byte)",
           "r_max MB/s", "n_half B", "jitter all/rest (us)");
    if (md)
        fprintf(md, "\nLinear model T = b0 + b1·m over all sizes and rounds (90 %% CI); jitter "
                    "at the largest size, all calls / without the first:\n\n| system | t0 = b0 "
                    "| b1 | r_max | n½ | jitter all / rest |\n|---|---|---|---|---|---|\n");
    static const int fitted[] = {SYS_RAW_TUNED, SYS_RAW_NAIVE, SYS_NUMRPC, SYS_CORBA, SYS_GRPC,
                                 SYS_RAW_SINK, SYS_NUMRPC_SINK, SYS_CORBA_SINK, SYS_GRPC_SINK};
    for (size_t fi = 0; fi < sizeof fitted / sizeof *fitted; fi++) {
        int sys = fitted[fi];
        size_t n = 0;
        double jit_all = 0, jit_rest = 0;
        size_t largest = 0;
        for (size_t i = 0; i < nsamples; i++) {
            const struct sample *s = &samples[i];
            if (s->placement != pi || s->system != sys || s->packet != 0) continue;
            x[n] = (double)s->bytes;
            y[n] = s->median_s;
            n++;
            if (s->bytes >= largest) {
                largest = s->bytes;
                jit_all = s->jitter_all;
                jit_rest = s->jitter_rest;
            }
        }
        fit_result f;
        if (n < 3 || fit_linear(x, y, n, CI_LEVEL, &f) != 0) continue;
        printf("%-14s %10.1f +- %-9.1f %12.4f +- %-9.4f %12.3f %12.0f %10.1f / %-9.1f\n",
               measure_sys_name[sys], f.b0 * 1e6, f.b0_half * 1e6, f.b1 * 1e9, f.b1_half * 1e9,
               f.r_max / 1e6, f.n_half, jit_all * 1e6, jit_rest * 1e6);
        if (md)
            fprintf(md, "| %s | %.1f ± %.1f µs | %.4f ± %.4f ns/B | %.3f MB/s | %.0f B | %.1f / "
                        "%.1f µs |\n",
                    measure_sys_name[sys], f.b0 * 1e6, f.b0_half * 1e6, f.b1 * 1e9, f.b1_half * 1e9,
                    f.r_max / 1e6, f.n_half, jit_all * 1e6, jit_rest * 1e6);
    }
}

void report_tables(const struct placement *pls, int npl, int ncpu, FILE *md)
{
    char lab[32], vd[48];
    for (int pi = 0; pi < npl; pi++) {
        if (bench_opt.placement_only >= 0 && pi != bench_opt.placement_only) continue;
        const struct placement *pl = &pls[pi];
        printf("\n== placement: %s (client cpu %d, server cpu %d; -1 = unpinned) ==\n",
               pl->name, pl->client_cpu, pl->server_cpu);
        printf("%-9s %-13s %12s %10s %8s %15s %15s  %s\n", "size", "system", "median_s",
               "MB/s", "ratio", "round min..max", "90% CI median", "target (numrpc/tuned)");
        if (md) {
            fprintf(md, "\n### Placement: %s (client cpu %d, server cpu %d)\n\n", pl->name,
                    pl->client_cpu, pl->server_cpu);
            fprintf(md, "| size (each way) | raw tuned | raw naive | numrpc | numrpc / tuned "
                        "(round min..max; 90%% CI) | target |\n");
            fprintf(md, "|---|---|---|---|---|---|\n");
        }
        /* Latency. */
        double praw = median_of(pi, 8, 0, SYS_RAW_PING);
        double pnum = median_of(pi, 8, 0, SYS_NUMRPC_PING);
        struct ratio_stats pr = ratio_of(pi, 8, 0, 0, SYS_NUMRPC_PING, SYS_RAW_PING);
        double pt = ping_target(pl, ncpu);
        verdict(vd, sizeof vd, pr.median, pt);
        printf("%-9s %-13s %12.3e %10s %8s %15s %15s\n", "ping", measure_sys_name[SYS_RAW_PING],
               praw, "-", "1", "", "");
        printf("%-9s %-13s %12.3e %10s %8.3f %7.3f..%-7.3f %7.3f..%-7.3f %s\n", "ping",
               measure_sys_name[SYS_NUMRPC_PING], pnum, "-", pr.median, pr.min, pr.max, pr.lo,
               pr.hi, vd);
        if (md)
            fprintf(md,
                    "| ping (8 B round trip) | %.1f µs | – | %.1f µs | **%.2f** (%.2f..%.2f; "
                    "%.2f..%.2f) | %s |\n",
                    praw * 1e6, pnum * 1e6, pr.median, pr.min, pr.max, pr.lo, pr.hi, vd);
        {
            double rc = median_of(pi, 8, 0, SYS_RAW_COLD),
                   nc = median_of(pi, 8, 0, SYS_NUMRPC_COLD);
            struct ratio_stats cr = ratio_of(pi, 8, 0, 0, SYS_NUMRPC_COLD, SYS_RAW_COLD);
            double rtts = praw > 0 ? nc / praw : 0;
            printf("%-9s %-13s %12.3e\n%-9s %-13s %12.3e %10s %8.3f %7.3f..%-7.3f %7.3f..%-7.3f "
                   "= %.2f warm round trips\n",
                   "cold", measure_sys_name[SYS_RAW_COLD], rc, "cold",
                   measure_sys_name[SYS_NUMRPC_COLD], nc, "-", cr.median, cr.min, cr.max, cr.lo,
                   cr.hi, rtts);
            if (md)
                fprintf(md,
                        "| cold call (connect + first call) | %.1f µs | – | %.1f µs (%.2f warm "
                        "round trips) | **%.2f** (%.2f..%.2f; %.2f..%.2f) | – |\n",
                        rc * 1e6, nc * 1e6, rtts, cr.median, cr.min, cr.max, cr.lo, cr.hi);
        }
        int have[NBASELINES];
        for (size_t k = 0; k < NBASELINES; k++) {
            double tmp[MAX_ROUNDS];
            have[k] = collect(pi, 8, 0, baselines[k].ping, tmp) > 0;
            if (!have[k]) continue;
            double pc = median_of(pi, 8, 0, baselines[k].ping);
            struct ratio_stats cr = ratio_of(pi, 8, 0, 0, baselines[k].ping, SYS_RAW_PING);
            printf("%-9s %-13s %12.3e %10s %8.3f %7.3f..%-7.3f %7.3f..%-7.3f\n", "ping",
                   measure_sys_name[baselines[k].ping], pc, "-", cr.median, cr.min, cr.max, cr.lo,
                   cr.hi);
        }
        for (int i = 0; i < bench_opt.nsizes; i++) {
            size_t b = bench_opt.sizes[i] / 8 ? bench_opt.sizes[i] / 8 * 8 : 8;
            report_size_label(b, lab, sizeof lab);
            double mt = median_of(pi, b, 0, SYS_RAW_TUNED);
            double mn = median_of(pi, b, 0, SYS_RAW_NAIVE);
            double mr = median_of(pi, b, 0, SYS_NUMRPC);
            struct ratio_stats rn = ratio_of(pi, b, 0, 0, SYS_RAW_NAIVE, SYS_RAW_TUNED);
            struct ratio_stats rr = ratio_of(pi, b, 0, 0, SYS_NUMRPC, SYS_RAW_TUNED);
            double target = b >= (8u << 20) ? 1.15 : 0;
            printf("%-9s %-13s %12.3e %10.1f %8s\n", lab, measure_sys_name[SYS_RAW_TUNED], mt,
                   report_mbps(b, mt), "1");
            printf("%-9s %-13s %12.3e %10.1f %8.3f %7.3f..%-7.3f %7.3f..%-7.3f\n", lab,
                   measure_sys_name[SYS_RAW_NAIVE], mn, report_mbps(b, mn), rn.median, rn.min,
                   rn.max, rn.lo, rn.hi);
            verdict(vd, sizeof vd, rr.median, target);
            printf("%-9s %-13s %12.3e %10.1f %8.3f %7.3f..%-7.3f %7.3f..%-7.3f %s\n", lab,
                   measure_sys_name[SYS_NUMRPC], mr, report_mbps(b, mr), rr.median, rr.min, rr.max,
                   rr.lo, rr.hi, vd);
            for (size_t k = 0; k < NBASELINES; k++) {
                if (!have[k]) continue;
                int sys = baselines[k].bulk;
                double mc = median_of(pi, b, 0, sys);
                struct ratio_stats rc = ratio_of(pi, b, 0, 0, sys, SYS_RAW_TUNED);
                struct ratio_stats nc = ratio_of(pi, b, 0, 0, SYS_NUMRPC, sys);
                printf("%-9s %-13s %12.3e %10.1f %8.3f %7.3f..%-7.3f %7.3f..%-7.3f "
                       "numrpc/%s %.3f (%.3f..%.3f)\n",
                       lab, measure_sys_name[sys], mc, report_mbps(b, mc), rc.median, rc.min,
                       rc.max, rc.lo, rc.hi, baselines[k].name, nc.median, nc.lo, nc.hi);
            }
            if (md) {
                if (b < 1u << 20)
                    fprintf(md,
                            "| %s | %.1f µs (%.0f MB/s) | %.1f µs (%.0f MB/s) | %.1f µs "
                            "(%.0f MB/s) |",
                            lab, mt * 1e6, report_mbps(b, mt), mn * 1e6, report_mbps(b, mn),
                            mr * 1e6, report_mbps(b, mr));
                else
                    fprintf(md, "| %s | %.0f MB/s | %.0f MB/s | %.0f MB/s |", lab,
                            report_mbps(b, mt), report_mbps(b, mn), report_mbps(b, mr));
                fprintf(md, " **%.3f** (%.3f..%.3f; %.3f..%.3f) | %s |\n", rr.median, rr.min,
                        rr.max, rr.lo, rr.hi, vd);
            }
        }
        for (size_t k = 0; md && k < NBASELINES; k++) {
            if (!have[k]) continue;
            const struct baseline *bl = &baselines[k];
            fprintf(md, "\nThe %s baseline, same rounds%s:\n\n"
                        "| size (each way) | %s | %s / tuned | numrpc / %s (90%% CI) "
                        "|\n|---|---|---|---|\n",
                    bl->name,
                    bl->bulk == SYS_CORBA ? " (target for numrpc: <= 1.25x omniORB at every "
                                            "size, and faster at 64 MiB)"
                                          : "",
                    bl->name, bl->name, bl->name);
            double pc = median_of(pi, 8, 0, bl->ping);
            struct ratio_stats cr = ratio_of(pi, 8, 0, 0, bl->ping, SYS_RAW_PING);
            struct ratio_stats nc = ratio_of(pi, 8, 0, 0, SYS_NUMRPC_PING, bl->ping);
            fprintf(md, "| ping | %.1f µs | %.3f | **%.3f** (%.3f..%.3f) |\n", pc * 1e6, cr.median,
                    nc.median, nc.lo, nc.hi);
            for (int i = 0; i < bench_opt.nsizes; i++) {
                size_t b = bench_opt.sizes[i] / 8 ? bench_opt.sizes[i] / 8 * 8 : 8;
                double mc = median_of(pi, b, 0, bl->bulk);
                struct ratio_stats rc = ratio_of(pi, b, 0, 0, bl->bulk, SYS_RAW_TUNED);
                struct ratio_stats ncb = ratio_of(pi, b, 0, 0, SYS_NUMRPC, bl->bulk);
                fprintf(md, "| %s | %.0f MB/s | %.3f | **%.3f** (%.3f..%.3f) |\n",
                        report_size_label(b, lab, sizeof lab), report_mbps(b, mc), rc.median,
                        ncb.median, ncb.lo, ncb.hi);
            }
        }
        oneway_table(pi, md);
        fit_table(pi, md);
        if (bench_opt.packet_sweep) {
            size_t b = 8u << 20;
            static const size_t packets[] = {1024, 4096, 65536, 1048576};
            double base = median_of(pi, b, 1, SYS_RAW_TUNED);
            printf("-- packet sweep, numrpc dcopy 8 MiB each way (raw tuned %.1f MB/s in the "
                   "same rounds)\n",
                   report_mbps(b, base));
            printf("%-9s %12s %10s %8s %15s %15s %14s\n", "packet", "median_s", "MB/s",
                   "ratio", "round min..max", "90% CI median", "wire bytes out");
            if (md) {
                fprintf(md, "\nPacket sweep, numrpc dcopy 8 MiB each way (raw tuned %.0f MB/s "
                            "in the same rounds):\n\n",
                        report_mbps(b, base));
                fprintf(md, "| packet | numrpc MB/s | numrpc / tuned (min..max; 90%% CI) | "
                            "request bytes on the wire |\n|---|---|---|---|\n");
            }
            for (size_t k = 0; k < sizeof packets / sizeof *packets; k++) {
                double m = median_of(pi, b, packets[k], SYS_NUMRPC);
                struct ratio_stats rr = ratio_of(pi, b, packets[k], 1, SYS_NUMRPC, SYS_RAW_TUNED);
                uint64_t wire = 0;
                size_t nsamples;
                const struct sample *samples = measure_samples(&nsamples);
                for (size_t i = 0; i < nsamples; i++)
                    if (samples[i].placement == pi && samples[i].packet == packets[k] &&
                        samples[i].bytes == b)
                        wire = samples[i].wire_sent;
                report_size_label(packets[k], lab, sizeof lab);
                printf("%-9s %12.3e %10.1f %8.3f %7.3f..%-7.3f %7.3f..%-7.3f %14llu\n", lab, m,
                       report_mbps(b, m), rr.median, rr.min, rr.max, rr.lo, rr.hi,
                       (unsigned long long)wire);
                if (md)
                    fprintf(md, "| %s | %.0f | %.3f (%.3f..%.3f; %.3f..%.3f) | %llu |\n", lab,
                            report_mbps(b, m), rr.median, rr.min, rr.max, rr.lo, rr.hi,
                            (unsigned long long)wire);
            }
        }
    }
}

FILE *report_open_csv(const char *path, const char *header)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return NULL;
    }
    fputs(header, f);
    return f;
}

int report_write_csv(const char *path, const struct placement *pls)
{
    FILE *f = report_open_csv(path, "placement,client_cpu,server_cpu,bytes_each_way,packet,"
                                    "system,round,reps,median_s,mb_per_s,send_s,compute_s,"
                                    "receive_s,wire_bytes_sent,wire_bytes_received\n");
    if (!f) return -1;
    size_t nsamples;
    const struct sample *samples = measure_samples(&nsamples);
    for (size_t i = 0; i < nsamples; i++) {
        const struct sample *s = &samples[i];
        const struct placement *pl = &pls[s->placement];
        int num = s->system == SYS_NUMRPC || s->system == SYS_NUMRPC_PING ||
                  s->system == SYS_NUMRPC_SINK;
        fprintf(f, "%s,%d,%d,%zu,%zu,%s,%d,%d,%.9g,%.6g,", pl->name, pl->client_cpu,
                pl->server_cpu, s->bytes, s->packet == 1 ? 0 : s->packet,
                s->system == SYS_RAW_TUNED && s->packet == 1 ? "raw-tuned-sweep"
                                                             : measure_sys_name[s->system],
                s->round, s->reps, s->median_s,
                measure_is_ping(s->system) ? 0.0 : report_mbps(s->bytes, s->median_s));
        if (num)
            fprintf(f, "%.9g,%.9g,%.9g,%llu,%llu\n", s->send_s, s->compute_s, s->receive_s,
                    (unsigned long long)s->wire_sent, (unsigned long long)s->wire_received);
        else
            fprintf(f, ",,,,\n");
    }
    fclose(f);
    return 0;
}

