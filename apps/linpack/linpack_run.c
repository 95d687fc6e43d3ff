/* linpack_run.c -- numrpc-linpack's runners: one problem solved R times locally
 * (LAPACK), by numrpc (linpack; dgefa + dgesl shipping A or on a handle), omniORB. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <numrpc.h>

#include "linpack_problem.h"
#include "linpack_run.h"
#ifdef HAVE_CORBA
#include "corba_client.h"
#endif

int run_local(struct problem *p, int warmup, int repeat, double *best_s, double *resid)
{
    const int n = p->n, one = 1;
    *best_s = INFINITY;
    for (int r = -warmup; r < repeat; r++) {
        problem_reset(p);
        int info = 0;
        double t0 = problem_now();
        dgetrf_(&n, &n, p->a, &n, p->ipvt, &info);
        if (info == 0)
            dgetrs_("N", &n, &one, p->a, &n, p->ipvt, p->x, &n, &info, 1);
        double t = problem_now() - t0;
        if (info != 0) {
            fprintf(stderr, "numrpc-linpack: local LAPACK n=%d: info=%d\n",
                    n, info);
            return -1;
        }
        if (r >= 0 && t < *best_s)
            *best_s = t;
    }
    *resid = problem_residual(p);
    return 0;
}

int remote_call_done(const char *routine, int n, int rc, int info, struct row *out)
{
    if (rc != NUMRPC_OK) {
        fprintf(stderr, "numrpc-linpack: remote %s n=%d failed: %s (%s)", routine, n,
                numrpc_strerror(rc), numrpc_errname(rc));
        const char *detail = numrpc_last_error_detail();
        if (detail && *detail)
            fprintf(stderr, ": %s", detail);
        fputc('\n', stderr);
        return -1;
    }
    numrpc_call_info ci;
    numrpc_last_call_info(&ci);
    out->send_s += ci.send_seconds;
    out->compute_s += ci.compute_seconds;
    out->receive_s += ci.receive_seconds;
    out->bytes += ci.bytes_sent + ci.bytes_received;
    if (info != 0) {
        fprintf(stderr, "numrpc-linpack: remote %s n=%d: info=%d\n", routine, n, info);
        return -1;
    }
    return 0;
}

int remote_put_and_factor(struct problem *p, numrpc_data **h, struct row *out)
{
    const int n = p->n, lda = p->n;
    int info = 0;
    double t0 = problem_now();
    int rc = numrpc_data_put(h, NULL, NUMRPC_T_DOUBLE, p->a0, (size_t)n, (size_t)n, (size_t)lda);
    out->send_s += problem_now() - t0; /* a put has no send/compute split */
    if (remote_call_done("numrpc_data_put", n, rc, 0, out) != 0) {
        *h = NULL;
        return -1;
    }
    rc = numrpc_call("dgefa", *h, lda, n, p->ipvt, &info); /* the factors stay there */
    if (remote_call_done("dgefa", n, rc, info, out) != 0) {
        numrpc_data_free(*h);
        *h = NULL;
        return -1;
    }
    return 0;
}

/* Put, dgefa, dgesl on the handle (only b and the pivots travel), free. */
static int handles_solve(struct problem *p, struct row *out)
{
    const int n = p->n, lda = p->n;
    numrpc_data *h;
    if (remote_put_and_factor(p, &h, out) != 0) return -1;
    int rc = numrpc_call("dgesl", h, lda, n, p->ipvt, p->x, 0);
    if (remote_call_done("dgesl", n, rc, 0, out) != 0) {
        numrpc_data_free(h);
        return -1;
    }
    rc = numrpc_data_free(h);
    return remote_call_done("numrpc_data_free", n, rc, 0, out);
}

/* One remote solve in the given mode; fills the time and call figures. */
static int remote_solve_once(struct problem *p, int mode, struct row *out)
{
    const int n = p->n, lda = p->n;
    int info = 0, rc;
    memset(out, 0, sizeof *out);
    problem_reset(p);

    double t0 = problem_now();
    if (mode == MODE_HANDLES) {
        rc = handles_solve(p, out);
        out->remote_s = problem_now() - t0;
        return rc;
    }
    if (mode == MODE_LINPACK) {
        /* The whole remote solve: one line. */
        rc = numrpc_call("linpack", p->a, lda, n, p->ipvt, p->x, &info);
        out->remote_s = problem_now() - t0;
        return remote_call_done("linpack", n, rc, info, out);
    }
    rc = numrpc_call("dgefa", p->a, lda, n, p->ipvt, &info);
    if (remote_call_done("dgefa", n, rc, info, out) != 0)
        return -1;
    rc = numrpc_call("dgesl", p->a, lda, n, p->ipvt, p->x, 0);
    out->remote_s = problem_now() - t0;
    return remote_call_done("dgesl", n, rc, 0, out);
}

int run_remote(struct problem *p, int mode, int warmup, int repeat, struct row *row)
{
    struct row best = {0}, one;
    best.remote_s = INFINITY;
    for (int r = -warmup; r < repeat; r++) {
        if (remote_solve_once(p, mode, &one) != 0)
            return -1;
        if (r >= 0 && one.remote_s < best.remote_s)
            best = one;
    }
    row->remote_s = best.remote_s;
    row->send_s = best.send_s;
    row->compute_s = best.compute_s;
    row->receive_s = best.receive_s;
    row->bytes = best.bytes;
    row->resid_remote = problem_residual(p);
    row->remote_ok = 1;
    return 0;
}

#ifdef HAVE_CORBA
/* One solve through the omniORB baseline, the same calls as numrpc makes. */
static int corba_solve_once(struct problem *p, int mode, double *seconds)
{
    const int n = p->n, lda = p->n;
    int info = 0, rc;
    problem_reset(p);
    double t0 = problem_now();
    if (mode == MODE_LINPACK) {
        rc = corba_linpack(p->a, lda, n, p->ipvt, p->x, &info);
    } else {
        rc = corba_dgefa(p->a, lda, n, p->ipvt, &info);
        if (rc == 0 && info == 0) rc = corba_dgesl(p->a, lda, n, p->ipvt, p->x, 0);
    }
    *seconds = problem_now() - t0;
    if (rc != 0 || info != 0) {
        fprintf(stderr, "numrpc-linpack: CORBA solve n=%d failed: %s (info %d)\n", n,
                rc ? corba_last_error() : "ok", info);
        return -1;
    }
    return 0;
}

int run_corba(struct problem *p, int mode, int warmup, int repeat, struct row *row)
{
    double best = INFINITY, one;
    for (int r = -warmup; r < repeat; r++) {
        if (corba_solve_once(p, mode, &one) != 0) return -1;
        if (r >= 0 && one < best) best = one;
    }
    row->corba_s = best;
    row->resid_corba = problem_residual(p);
    row->corba_ok = 1;
    return 0;
}
#endif
