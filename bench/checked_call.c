/* checked_call.c -- dcopy and dgemm calls whose answers are compared with
 * local BLAS on the same inputs (the benchmarks' good calls). */
#include "checked_call.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "numrpc.h"

void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b, const int *ldb,
            const double *beta, double *c, const int *ldc);

/* A fixed pseudo-random sequence in [-0.5, 0.5): the same inputs on every run. */
static void fill(double *v, long len, unsigned seed)
{
    unsigned long s = seed * 2654435761ul + 12345u;
    for (long i = 0; i < len; i++) {
        s = s * 6364136223846793005ul + 1442695040888963407ul;
        v[i] = (double)(s >> 11) / 9007199254740992.0 - 0.5;
    }
}

int checked_case_init(checked_case *c, checked_kind kind, int n, unsigned seed)
{
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->n = n;
    long len = kind == CHECKED_DGEMM ? (long)n * n : n;
    c->out_len = len;
    c->a = malloc((size_t)len * sizeof(double));
    c->out = calloc((size_t)len, sizeof(double));
    if (kind == CHECKED_DGEMM) {
        c->b = malloc((size_t)len * sizeof(double));
        c->want = malloc((size_t)len * sizeof(double));
    }
    if (c->a == NULL || c->out == NULL ||
        (kind == CHECKED_DGEMM && (c->b == NULL || c->want == NULL))) {
        checked_case_free(c);
        return -1;
    }
    fill(c->a, len, seed);
    if (kind == CHECKED_DCOPY) {
        c->want = c->a;
        return 0;
    }
    fill(c->b, len, seed + 1);
    const double one = 1.0, zero = 0.0;
    dgemm_("N", "N", &n, &n, &n, &one, c->a, &n, c->b, &n, &zero, c->want, &n);
    return 0;
}

void checked_case_free(checked_case *c)
{
    if (c->want != c->a) free(c->want);
    free(c->a);
    free(c->b);
    free(c->out);
    memset(c, 0, sizeof *c);
}

int checked_case_call(checked_case *c, int *wrong)
{
    memset(c->out, 0, (size_t)c->out_len * sizeof(double));
    int n = c->n, rc;
    if (c->kind == CHECKED_DGEMM)
        rc = numrpc_call("dgemm", 'N', 'N', n, n, n, 1.0, c->a, n, c->b, n, 0.0, c->out, n);
    else
        rc = numrpc_call("dcopy", n, c->a, 1, c->out, 1);
    *wrong = rc == NUMRPC_OK && checked_case_wrong(c);
    return rc;
}

int checked_case_wrong(const checked_case *c)
{
    if (c->kind == CHECKED_DCOPY)
        return memcmp(c->out, c->want, (size_t)c->out_len * sizeof(double)) != 0;
    /* Another summation order (threads, kernels) moves the last bits only. */
    const double tol = 1e-12 * c->n;
    for (long i = 0; i < c->out_len; i++)
        if (!(fabs(c->out[i] - c->want[i]) <= tol)) return 1;
    return 0;
}

const char *checked_code_name(int code)
{
    const char *name = numrpc_errname(code);
    return strncmp(name, "NUMRPC_", 7) == 0 ? name + 7 : name;
}
