/* seeds_report.c -- numrpc-bench-seeds' markdown tables (LSB's null latency and
 * throughput, the PVM ring's r_max, n-half, t0) with the papers' figures, CSV. */
#include "seeds_report.h"

#include <string.h>

#include "fit.h"
#include "seeds_lsb.h"
#include "stats.h"

static const char *const sys_name[SEEDS_NSYS] = {"numrpc", "raw-tcp"};
static const char *const mode_name[LSB_NMODES] = {"paced-oneway", "twoway", "stream"};

/* ---- a series' median and spread ---- */

static double med(const seeds_series *s)
{
    double v[SEEDS_MAX_ROUNDS];
    memcpy(v, s->v, sizeof(double) * (size_t)s->n);
    return bench_median(v, (size_t)s->n);
}

/* a[i] / b[i] round by round (inverted: b[i] / a[i]). */
static void per_round_ratio(const seeds_series *a, const seeds_series *b, int inverted, seeds_series *out)
{
    out->n = 0;
    for (int i = 0; i < a->n && i < b->n; i++)
        if (a->v[i] > 0 && b->v[i] > 0) out->v[out->n++] = inverted ? b->v[i] / a->v[i] : a->v[i] / b->v[i];
}

static const char *usec(double s, char *buf, size_t cap)
{
    if (s >= 1e-3) snprintf(buf, cap, "%.3f ms", s * 1e3);
    else snprintf(buf, cap, "%.1f µs", s * 1e6);
    return buf;
}

/* "median [min–max]" of a time series, in µs or ms. */
static void time_cell(FILE *f, const seeds_series *s)
{
    char a[32], b[32], c[32];
    if (s->n == 0) {
        fprintf(f, " (not run) |");
        return;
    }
    fprintf(f, " %s [%s–%s] |", usec(med(s), a, sizeof a), usec(bench_min(s->v, (size_t)s->n), b, sizeof b),
            usec(bench_max(s->v, (size_t)s->n), c, sizeof c));
}

/* Mbit/s of bytes per s-long operation: median [min–max]. */
static void rate_cell(FILE *f, const seeds_series *s, size_t bytes)
{
    if (s->n == 0) {
        fprintf(f, " (not run) |");
        return;
    }
    double k = (double)bytes * 8 / 1e6;
    fprintf(f, " %.0f [%.0f–%.0f] |", k / med(s), k / bench_max(s->v, (size_t)s->n),
            k / bench_min(s->v, (size_t)s->n));
}

static void ratio_cell(FILE *f, const seeds_series *a, const seeds_series *b, int inverted)
{
    seeds_series q;
    per_round_ratio(a, b, inverted, &q);
    if (q.n == 0) {
        fprintf(f, " (not run) |\n");
        return;
    }
    fprintf(f, " **%.2f** [%.2f–%.2f] |\n", med(&q), bench_min(q.v, (size_t)q.n), bench_max(q.v, (size_t)q.n));
}

/* ---- LSB ---- */

/* What TR-97-06 states in its text (section 4.4.1; Figures 5 and 6 are not
 * reproduced), Mbit/s on 155 Mbit/s ATM, AIX 4.2, RS6000. */
static const char *lsb_paper(int mode, size_t bytes)
{
    size_t kib = bytes / 1024;
    if (mode == LSB_PACED1) {
        if (kib == 1) return "LSB 16.4; TTCP 23; SOM 8";
        if (kib == 4) return "SOM 21.3 (its peak)";
        if (kib == 8) return "SOM 17.65";
        if (kib == 256) return "LSB 80.5; TTCP up to 113";
    } else if (mode == LSB_TWOWAY) {
        if (kib == 1) return "LSB 3.1; TTCP 6.5; SOM 2.85";
        if (kib == 256) return "LSB 78; TTCP 95";
    } else {
        if (kib == 1) return "LSB ~20 % of TTCP";
        if (kib == 4 || kib == 8) return "TTCP 118 (its peak)";
        if (kib == 16 || kib == 32) return "LSB ~92";
        if (kib == 64) return "LSB 77.6";
    }
    return "";
}

void seeds_report_lsb(FILE *f, const struct seeds_options *o, const struct lsb_results *l)
{
    fprintf(f, "### LSB (TR-97-06): null latency\n\n"
               "One-way: %d null messages sent back to back, the replies counted at the end "
               "(numrpc: asynchronous `ping` calls, then `numrpc_wait_all`; raw TCP: 8-byte pings "
               "written back to back, the answers read after the last), time / %d. Two-way: a "
               "blocking call per message (numrpc `ping`; raw 8-byte ping-pong). Cells: median over "
               "%d interleaved rounds [min–max]; ratio: numrpc time / raw time in the same round. "
               "The paper: %s.\n\n",
            o->null_count, o->null_count, o->rounds,
            "10 000 messages, average delay, RS6000s on 155 Mbit/s ATM (section 4.2, table of 4.4.2)");
    fprintf(f, "| null message | LSB (paper) | SOM SII (paper) | SOM DII (paper) | numrpc | raw TCP | numrpc / raw |\n"
               "|---|---|---|---|---|---|---|\n");
    fprintf(f, "| one-way | 0.203 ms | 0.326 ms | 2.314 ms |");
    time_cell(f, &l->null1[SEEDS_NUMRPC]);
    time_cell(f, &l->null1[SEEDS_RAW]);
    ratio_cell(f, &l->null1[SEEDS_NUMRPC], &l->null1[SEEDS_RAW], 0);
    fprintf(f, "| two-way | 1.827 ms | 2.59 ms | 2.668 ms |");
    time_cell(f, &l->null2[SEEDS_NUMRPC]);
    time_cell(f, &l->null2[SEEDS_RAW]);
    ratio_cell(f, &l->null2[SEEDS_NUMRPC], &l->null2[SEEDS_RAW], 0);

    static const char *const title[LSB_NMODES] = {
        "paced one-way (stop-and-go; the receiver's clock)", "two-way (a blocking call per buffer)",
        "unpaced one-way stream (replies counted at the end)"};
    static const char *const how[LSB_NMODES] = {
        "Each buffer alone: its delay runs from the client's clock before the call to the "
        "receiver's clock when the whole buffer is there (numrpc: the `sink_at` routine reads "
        "CLOCK_MONOTONIC as it starts; raw TCP: the peer reads it after the last byte; one host, "
        "one clock); throughput = bytes / the sum of the delays (the paper's D_o, section 4.1.2).",
        "Buffers one after another, each waiting for its reply (numrpc: blocking `sink(n, x, "
        "&ack)`; raw TCP: 8-byte length + buffer, 8-byte ack back); throughput = bytes / total time "
        "(the paper's D_2).",
        "Buffers sent back to back (numrpc: asynchronous `sink` calls, then `numrpc_wait_all`; raw "
        "TCP: length + buffer written back to back, the 8-byte acks read after the last), time "
        "until the last reply; section 4.1.1's transmitter (the paper stops its clock when the last "
        "message is sent, not answered)."};
    for (int m = 0; m < LSB_NMODES; m++) {
        fprintf(f, "\n### LSB (TR-97-06): throughput, %s\n\n%s Mbit/s (10^6 bits/s of payload), "
                   "median over %d rounds [min–max]; ratio: numrpc throughput / raw TCP throughput in "
                   "the same round (LSB quotes its own as a share of TTCP's). Calls per size and round: "
                   "%zu KiB / size, within 4..4096.\n\n",
                title[m], how[m], o->rounds, o->lsb_bytes >> 10);
        fprintf(f, "| buffer | TR-97-06 (text of 4.4.1), Mbit/s | numrpc | raw TCP | numrpc / raw |\n"
                   "|---|---|---|---|---|\n");
        for (int s = 0; s < o->nlsb; s++) {
            size_t b = o->lsb_sizes[s];
            fprintf(f, "| %zu KiB | %s |", b >> 10, lsb_paper(m, b));
            rate_cell(f, &l->tput[s][m][SEEDS_NUMRPC], b);
            rate_cell(f, &l->tput[s][m][SEEDS_RAW], b);
            ratio_cell(f, &l->tput[s][m][SEEDS_NUMRPC], &l->tput[s][m][SEEDS_RAW], 1);
        }
    }
}

/* ---- the ring ---- */

int seeds_ring_fit(const struct seeds_options *o, const struct ring_results *g, int sys, struct ring_fit *f)
{
    double x[SEEDS_MAX_SIZES * SEEDS_MAX_ROUNDS], y[SEEDS_MAX_SIZES * SEEDS_MAX_ROUNDS];
    size_t n = 0;
    int smallest = 0;
    memset(f, 0, sizeof *f);
    for (int s = 0; s < o->nring; s++) {
        if (o->ring_sizes[s] < o->ring_sizes[smallest]) smallest = s;
        for (int r = 0; r < g->hop[s][sys].n; r++) {
            x[n] = (double)o->ring_sizes[s];
            y[n++] = g->hop[s][sys].v[r];
        }
    }
    fit_result fr;
    if (fit_linear(x, y, n, 0.90, &fr) != 0 || fr.b1 <= 0 || g->hop[smallest][sys].n == 0) return -1;
    double my = 0, sst = 0, sse = 0;
    for (size_t i = 0; i < n; i++) my += y[i] / (double)n;
    for (size_t i = 0; i < n; i++) {
        double e = y[i] - (fr.b0 + fr.b1 * x[i]);
        sse += e * e;
        sst += (y[i] - my) * (y[i] - my);
    }
    f->ok = 1;
    f->r_max = fr.r_max;
    f->r_lo = 1.0 / (fr.b1 + fr.b1_half);
    f->r_hi = fr.b1 > fr.b1_half ? 1.0 / (fr.b1 - fr.b1_half) : 0;
    f->r2 = sst > 0 ? 1.0 - sse / sst : 1.0;
    f->b0 = fr.b0;
    f->b0_half = fr.b0_half;
    f->t0 = med(&g->hop[smallest][sys]);
    f->n_half = f->t0 * f->r_max;
    return 0;
}

static void fit_row(FILE *f, const char *what, const struct ring_fit *r)
{
    if (!r->ok) {
        fprintf(f, "| %s | loopback | (no fit) | | | | |\n", what);
        return;
    }
    char hi[32];
    if (r->r_hi > 0) snprintf(hi, sizeof hi, "%.0f", r->r_hi * 8 / 1e6);
    else snprintf(hi, sizeof hi, "∞");
    fprintf(f, "| %s | loopback | %.0f (%.0f, %s) | %.3f | %.0f | %.1f | %.1f ± %.1f |\n", what,
            r->r_max * 8 / 1e6, r->r_lo * 8 / 1e6, hi, r->r2, r->n_half, r->t0 * 1e6, r->b0 * 1e6,
            r->b0_half * 1e6);
}

void seeds_report_ring(FILE *f, const struct seeds_options *o, const struct ring_results *g)
{
    struct ring_fit fit[SEEDS_NSYS];
    for (int k = 0; k < SEEDS_NSYS; k++) seeds_ring_fit(o, g, k, &fit[k]);
    fprintf(f, "\n### PVM's ring (NAS-96-006, section 8): a handle passed around %d numrpc-servers\n\n"
               "numrpc: a data handle of n bytes put on server 0, then %d hops, each a blocking "
               "`dcopy(n/8, h_prev, 1, h_next, 1)` whose output handle lives on the next server: "
               "that server pulls the previous one's handle server to server (a ticket from "
               "DATA_GRANT, then DATA_PULL; the copy freed after the call), back to server 0. Raw "
               "TCP: %d forked relays joined in a ring by tuned sockets, each receiving the whole "
               "message before it forwards it (the limit: bytes only, no calls). One message "
               "around the ring at a time, as in the paper; hop = trip time / %d; the data are "
               "checked after every trip. Fit over every size and round: hop(n) = b0 + n / r_max "
               "(least squares, 90 %% interval from Student's t). As in the paper's Table 1, t0 "
               "is measured (the median hop at the smallest size), not the intercept, whose interval "
               "is wide when sizes span six decades; n½ = t0 · r_max. The paper's n½ was read off "
               "its figures, its t0 (Table 4) from the ring's smallest message.\n\n",
            o->ring_k, o->ring_k, o->ring_k, o->ring_k);
    fprintf(f, "| system | network | r_max Mbit/s (90 %% CI) | R² | n½ bytes | t0 µs | fit b0 µs |\n"
               "|---|---|---|---|---|---|---|\n");
    static const struct {
        const char *sys, *net;
        double r, lo, hi, r2, nh, t0;
    } paper[] = {
        {"PVM 3.3.10 ring (Table 4)", "Ethernet", 8.4, 8.4, 8.4, 1.000, 544, 830},
        {"PVM 3.3.10 ring (Table 4)", "FDDI", 70.0, 66.5, 74.0, 0.997, 12098, 942},
        {"PVM 3.3.10 ring (Table 4)", "HiPPI", 102.7, 94.0, 113.1, 0.990, 9278, 854},
        {"PVM 3.3.10 ring (Table 4)", "ATM", 26.8, 25.6, 28.2, 0.987, 1419, 602},
        {"BSD sockets, ttcp/C (Table 1)", "Ethernet", 8.3, 8.3, 8.3, 1.000, 14, 550},
        {"BSD sockets, ttcp/C (Table 1)", "FDDI", 89.4, 88.5, 90.4, 1.000, 740, 561},
        {"BSD sockets, ttcp/C (Table 1)", "HiPPI", 716.5, 710.2, 722.8, 1.000, 9826, 593},
        {"BSD sockets, ttcp/C (Table 1)", "ATM", 70.0, 69.6, 70.4, 1.000, 364, 360},
    };
    for (size_t i = 0; i < sizeof paper / sizeof paper[0]; i++)
        fprintf(f, "| %s | %s | %.1f (%.1f, %.1f) | %.3f | %.0f | %.0f | – |\n", paper[i].sys, paper[i].net,
                paper[i].r, paper[i].lo, paper[i].hi, paper[i].r2, paper[i].nh, paper[i].t0);
    char what[96];
    snprintf(what, sizeof what, "numrpc handle ring, k = %d (this run)", o->ring_k);
    fit_row(f, what, &fit[SEEDS_NUMRPC]);
    snprintf(what, sizeof what, "raw TCP ring, k = %d (this run)", o->ring_k);
    fit_row(f, what, &fit[SEEDS_RAW]);
    if (fit[0].ok && fit[1].ok)
        fprintf(f, "| numrpc / raw TCP | | **%.2f** | | %.2f | **%.2f** | |\n", fit[0].r_max / fit[1].r_max,
                fit[0].n_half / fit[1].n_half, fit[0].t0 / fit[1].t0);
    fprintf(f, "\nHop times (median over %d rounds [min–max]); ratio: numrpc / raw in the same round. "
               "The last column: the same dcopy with both handles on server 0, timed after each "
               "trip (the call without the move).\n\n"
               "| message | numrpc hop | raw TCP hop | numrpc / raw | numrpc MB/s | numrpc dcopy, no move |\n"
               "|---|---|---|---|---|---|\n",
            o->rounds);
    for (int s = 0; s < o->nring; s++) {
        size_t b = o->ring_sizes[s];
        if (b >= 1024) fprintf(f, "| %zu KiB |", b >> 10);
        else fprintf(f, "| %zu B |", b);
        time_cell(f, &g->hop[s][SEEDS_NUMRPC]);
        time_cell(f, &g->hop[s][SEEDS_RAW]);
        seeds_series q;
        per_round_ratio(&g->hop[s][SEEDS_NUMRPC], &g->hop[s][SEEDS_RAW], 0, &q);
        double mb = g->hop[s][SEEDS_NUMRPC].n ? (double)b / med(&g->hop[s][SEEDS_NUMRPC]) / 1e6 : 0;
        if (q.n) fprintf(f, " **%.2f** [%.2f–%.2f] | %.1f |", med(&q), bench_min(q.v, (size_t)q.n),
                         bench_max(q.v, (size_t)q.n), mb);
        else fprintf(f, " (not run) | |");
        time_cell(f, &g->stay[s]);
        fputc('\n', f);
    }
}

int seeds_write_csv(const char *path, const struct seeds_options *o, const struct lsb_results *l,
                    const struct ring_results *g)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    fprintf(f, "experiment,system,mode,bytes,round,seconds_per_op,ops_per_round\n");
    for (int k = 0; k < SEEDS_NSYS; k++) {
        for (int r = 0; r < l->null1[k].n; r++)
            fprintf(f, "lsb-null,%s,oneway,0,%d,%.9g,%d\n", sys_name[k], r, l->null1[k].v[r], o->null_count);
        for (int r = 0; r < l->null2[k].n; r++)
            fprintf(f, "lsb-null,%s,twoway,0,%d,%.9g,%d\n", sys_name[k], r, l->null2[k].v[r], o->null_count);
        for (int s = 0; s < o->nlsb; s++)
            for (int m = 0; m < LSB_NMODES; m++)
                for (int r = 0; r < l->tput[s][m][k].n; r++)
                    fprintf(f, "lsb-throughput,%s,%s,%zu,%d,%.9g,%d\n", sys_name[k], mode_name[m],
                            o->lsb_sizes[s], r, l->tput[s][m][k].v[r], seeds_lsb_calls(o, o->lsb_sizes[s]));
        for (int s = 0; s < o->nring; s++)
            for (int r = 0; r < g->hop[s][k].n; r++)
                fprintf(f, "ring-hop,%s,k%d,%zu,%d,%.9g,%d\n", sys_name[k], o->ring_k, o->ring_sizes[s], r,
                        g->hop[s][k].v[r], o->ring_k);
    }
    for (int s = 0; s < o->nring; s++)
        for (int r = 0; r < g->stay[s].n; r++)
            fprintf(f, "ring-stay,numrpc,dcopy-one-server,%zu,%d,%.9g,1\n", o->ring_sizes[s], r, g->stay[s].v[r]);
    int rc = ferror(f) ? -1 : 0;
    if (fclose(f) != 0) rc = -1;
    return rc;
}
