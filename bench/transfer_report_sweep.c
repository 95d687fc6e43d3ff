/* transfer_report_sweep.c -- the buffer sweep's results: MB/s by socket buffer,
 * TCP_NODELAY and packet size (stdout, Markdown) and its CSV file. */
#include <stdio.h>

#include "stats.h"
#include "transfer_opt.h"
#include "transfer_place.h"
#include "transfer_measure.h"
#include "transfer_report.h"

void report_sweep(FILE *md)
{
    size_t nsamples;
    const struct sample *samples = measure_samples(&nsamples);
    size_t bytes = bench_opt.sweep_bytes;
    char lab[32], blab[32];
    double v[MAX_ROUNDS];
    size_t k = 0;
    for (size_t i = 0; i < nsamples; i++)
        if (samples[i].system == SYS_RAW_TUNED && samples[i].packet == 1)
            v[k++] = samples[i].median_s;
    double raw = bench_median(v, k);
    printf("\n== buffer sweep on %s: numrpc dcopy %s each way, MB/s (median over %d rounds); raw "
           "tuned %.1f MB/s ==\n",
           bench_opt.link, report_size_label(bytes, lab, sizeof lab), bench_opt.rounds,
           report_mbps(bytes, raw));
    printf("%-18s", "sockbuf/nodelay");
    for (int j = 0; j < bench_opt.nsweep_packets; j++)
        printf(" %10s", report_size_label(bench_opt.sweep_packets[j], lab, sizeof lab));
    printf("\n");
    if (md) {
        fprintf(md,
                "Buffer sweep on %s: numrpc dcopy round trips of %s each way, MB/s (median of "
                "%d interleaved rounds); raw tuned TCP in the same rounds: %.2f MB/s.\n\n"
                "| socket buffer | TCP_NODELAY |",
                bench_opt.link, report_size_label(bytes, lab, sizeof lab), bench_opt.rounds,
                report_mbps(bytes, raw));
        for (int j = 0; j < bench_opt.nsweep_packets; j++)
            fprintf(md, " packet %s |",
                    report_size_label(bench_opt.sweep_packets[j], lab, sizeof lab));
        fprintf(md, "\n|---|---|");
        for (int j = 0; j < bench_opt.nsweep_packets; j++) fprintf(md, "---|");
        fprintf(md, "\n");
    }
    for (int b = 0; b < bench_opt.nsweep_bufs; b++)
        for (int nd = 1; nd >= 0; nd--) {
            if (bench_opt.sweep_bufs[b] > 0)
                report_size_label((size_t)bench_opt.sweep_bufs[b], blab, sizeof blab);
            else
                snprintf(blab, sizeof blab, "default");
            printf("%-10s %-7s", blab, nd ? "on" : "off");
            if (md) fprintf(md, "| %s | %s |", blab, nd ? "on" : "off");
            for (int j = 0; j < bench_opt.nsweep_packets; j++) {
                k = 0;
                for (size_t i = 0; i < nsamples; i++) {
                    const struct sample *x = &samples[i];
                    if (x->system == SYS_NUMRPC && x->packet == bench_opt.sweep_packets[j] &&
                        x->sockbuf == bench_opt.sweep_bufs[b] && x->nodelay == nd)
                        v[k++] = x->median_s;
                }
                double m = bench_median(v, k);
                printf(" %10.2f", report_mbps(bytes, m));
                if (md) fprintf(md, " %.2f |", report_mbps(bytes, m));
            }
            printf("\n");
            if (md) fprintf(md, "\n");
        }
}

int report_write_sweep_csv(const char *path, const struct placement *pls)
{
    FILE *f = report_open_csv(path, "link,placement,bytes_each_way,packet,sockbuf,nodelay,"
                                    "system,round,reps,median_s,mb_per_s\n");
    if (!f) return -1;
    size_t nsamples;
    const struct sample *samples = measure_samples(&nsamples);
    for (size_t i = 0; i < nsamples; i++) {
        const struct sample *x = &samples[i];
        int raw = x->system == SYS_RAW_TUNED;
        fprintf(f, "%s,%s,%zu,%zu,%d,%d,%s,%d,%d,%.9g,%.6g\n", bench_opt.link,
                pls[x->placement].name, x->bytes, raw ? 0 : x->packet, raw ? -1 : x->sockbuf,
                raw ? 1 : x->nodelay, measure_sys_name[x->system], x->round, x->reps, x->median_s,
                report_mbps(x->bytes, x->median_s));
    }
    fclose(f);
    return 0;
}
