/* linpack_multisolve.c -- numrpc-linpack --mode multisolve: one factorization
 * kept on the server and K solves, against K one-call linpacks and local LAPACK. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <numrpc.h>

#include "linpack_multisolve.h"

/* One round's figures; calls gathers the handle calls' bytes and split. */
struct round {
    double handles_s, solve_s, linpacks_s, local_s, transfer_s;
    struct row calls;
};

/* The worst residual of the rhs solutions xs of A x = bs (rhs x n each). */
static double worst_residual(const struct problem *p, int rhs, const double *bs, const double *xs)
{
    double worst = 0.0;
    for (int k = 0; k < rhs; k++) {
        const size_t at = (size_t)k * (size_t)p->n;
        worst = fmax(worst, problem_residual_of(p, xs + at, bs + at));
    }
    return worst;
}

/* Put + dgetrf, then rhs dgetrs on the handle (b and the pivots travel),
 * free: the local round's LAPACK routines, on the server. */
static int handles_round(struct problem *p, int rhs, const double *bs, double *xs, struct round *out)
{
    const int n = p->n;
    const size_t vec = (size_t)n * sizeof *xs;
    numrpc_data *h = NULL;
    int info = 0;
    double t0 = problem_now();
    int rc = numrpc_data_put(&h, NULL, NUMRPC_T_DOUBLE, p->a0, (size_t)n, (size_t)n, (size_t)n);
    if (remote_call_done("numrpc_data_put", n, rc, 0, &out->calls) != 0) return -1;
    rc = numrpc_call("dgetrf", n, n, h, n, p->ipvt, &info); /* the factors stay there */
    if (remote_call_done("dgetrf", n, rc, info, &out->calls) != 0) {
        numrpc_data_free(h);
        return -1;
    }
    double t1 = problem_now();
    for (int k = 0; k < rhs; k++) {
        double *x = xs + (size_t)k * (size_t)n;
        memcpy(x, bs + (size_t)k * (size_t)n, vec);
        rc = numrpc_call("dgetrs", 'N', n, 1, h, n, p->ipvt, x, n, &info);
        if (remote_call_done("dgetrs", n, rc, info, &out->calls) != 0) {
            numrpc_data_free(h);
            return -1;
        }
    }
    out->solve_s = (problem_now() - t1) / rhs;
    rc = numrpc_data_free(h);
    out->handles_s = problem_now() - t0;
    return remote_call_done("numrpc_data_free", n, rc, 0, &out->calls);
}

/* rhs one-call linpacks, each on a fresh copy of A (the copy is not timed). */
static int linpacks_round(struct problem *p, int rhs, const double *bs, double *xs, struct round *out)
{
    const int n = p->n;
    struct row calls = {0};
    out->linpacks_s = 0.0;
    for (int k = 0; k < rhs; k++) {
        double *x = xs + (size_t)k * (size_t)n;
        memcpy(p->a, p->a0, (size_t)n * (size_t)n * sizeof *p->a);
        memcpy(x, bs + (size_t)k * (size_t)n, (size_t)n * sizeof *x);
        int info = 0;
        double t0 = problem_now();
        int rc = numrpc_call("linpack", p->a, n, n, p->ipvt, x, &info);
        out->linpacks_s += problem_now() - t0;
        if (remote_call_done("linpack", n, rc, info, &calls) != 0) return -1;
    }
    return 0;
}

/* Local LAPACK: dgetrf once, then rhs dgetrs. */
static int local_round(struct problem *p, int rhs, const double *bs, double *xs, struct round *out)
{
    const int n = p->n, one = 1;
    int info = 0;
    memcpy(p->a, p->a0, (size_t)n * (size_t)n * sizeof *p->a);
    double t0 = problem_now();
    dgetrf_(&n, &n, p->a, &n, p->ipvt, &info);
    for (int k = 0; k < rhs && info == 0; k++) {
        double *x = xs + (size_t)k * (size_t)n;
        memcpy(x, bs + (size_t)k * (size_t)n, (size_t)n * sizeof *x);
        dgetrs_("N", &n, &one, p->a, &n, p->ipvt, x, &n, &info, 1);
    }
    out->local_s = problem_now() - t0;
    if (info != 0) fprintf(stderr, "numrpc-linpack: local LAPACK n=%d: info=%d\n", n, info);
    return info == 0 ? 0 : -1;
}

/* One transfer of A: a numrpc_data_put timed alone (the free is not). */
static int transfer_round(struct problem *p, struct round *out)
{
    const int n = p->n;
    struct row calls = {0};
    numrpc_data *h = NULL;
    double t0 = problem_now();
    int rc = numrpc_data_put(&h, NULL, NUMRPC_T_DOUBLE, p->a0, (size_t)n, (size_t)n, (size_t)n);
    out->transfer_s = problem_now() - t0;
    if (remote_call_done("numrpc_data_put", n, rc, 0, &calls) != 0) return -1;
    rc = numrpc_data_free(h);
    return remote_call_done("numrpc_data_free", n, rc, 0, &calls);
}

/* One round of all four with rhs right-hand sides; the residuals checked
 * (outside the timings) raise *resid_remote and *resid_local. */
static int one_round(struct problem *p, int rhs, const double *bs, double *xs, struct round *out,
                     double *resid_remote, double *resid_local)
{
    memset(out, 0, sizeof *out);
    if (handles_round(p, rhs, bs, xs, out) != 0) return -1;
    *resid_remote = fmax(*resid_remote, worst_residual(p, rhs, bs, xs));
    if (linpacks_round(p, rhs, bs, xs, out) != 0) return -1;
    *resid_remote = fmax(*resid_remote, worst_residual(p, rhs, bs, xs));
    if (local_round(p, rhs, bs, xs, out) != 0) return -1;
    *resid_local = fmax(*resid_local, worst_residual(p, rhs, bs, xs));
    return transfer_round(p, out);
}

int run_multisolve(struct problem *p, int rhs, int warmup, int repeat, struct row *row)
{
    const size_t all = (size_t)rhs * (size_t)p->n;
    double *bs = malloc(all * sizeof *bs), *xs = malloc(all * sizeof *xs);
    if (bs == NULL || xs == NULL) {
        fprintf(stderr, "numrpc-linpack: out of memory for %d right-hand sides of n=%d\n", rhs, p->n);
        free(bs);
        free(xs);
        return -1;
    }
    for (int k = 0; k < rhs; k++) problem_rhs(p, k, bs + (size_t)k * (size_t)p->n);

    struct round best = {0}, one;
    best.handles_s = best.linpacks_s = best.local_s = best.transfer_s = INFINITY;
    double resid_remote = 0.0, resid_local = 0.0;
    int rc = 0;
    for (int r = -warmup; r < repeat && rc == 0; r++) {
        /* The warm-up (connection, interfaces, pages) solves one system. */
        rc = one_round(p, r < 0 ? 1 : rhs, bs, xs, &one, &resid_remote, &resid_local);
        if (rc != 0 || r < 0) continue;
        if (one.handles_s < best.handles_s) {
            best.handles_s = one.handles_s;
            best.solve_s = one.solve_s;
            best.calls = one.calls;
        }
        best.linpacks_s = fmin(best.linpacks_s, one.linpacks_s);
        best.local_s = fmin(best.local_s, one.local_s);
        best.transfer_s = fmin(best.transfer_s, one.transfer_s);
    }
    free(bs);
    free(xs);
    if (rc != 0) return -1;
    row->rhs = rhs;
    row->remote_s = best.handles_s;
    row->solve_s = best.solve_s;
    row->send_s = best.calls.send_s;
    row->compute_s = best.calls.compute_s;
    row->receive_s = best.calls.receive_s;
    row->bytes = best.calls.bytes;
    row->linpacks_s = best.linpacks_s;
    row->local_s = best.local_s;
    row->transfer_s = best.transfer_s;
    row->resid_remote = resid_remote;
    row->resid_local = resid_local;
    row->remote_ok = 1;
    return 0;
}

void report_multisolve_header(void)
{
    printf("%6s %4s %10s %9s %10s %7s %9s %10s %10s %8s %9s %9s %9s\n", "n", "K", "handles_s", "solve_ms",
           "linpacks_s", "faster", "local_s", "transfer_s", "loc+xfer_s", "vs_local", "MB_moved", "resid_rem",
           "resid_loc");
}

void report_multisolve_row(const struct row *r)
{
    double local_transfer = r->local_s + r->transfer_s;
    printf("%6d %4d %10.5f %9.3f %10.5f %7.2f %9.5f %10.5f %10.5f %8.3f %9.2f %9.3f %9.3f\n", r->n, r->rhs,
           r->remote_s, r->solve_s * 1e3, r->linpacks_s, r->remote_s > 0 ? r->linpacks_s / r->remote_s : 0.0,
           r->local_s, r->transfer_s, local_transfer, local_transfer > 0 ? r->remote_s / local_transfer : 0.0,
           (double)r->bytes / 1e6, r->resid_remote, r->resid_local);
}
