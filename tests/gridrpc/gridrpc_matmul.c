/* gridrpc_matmul.c -- a GridRPC program written to GFD.52 only: matrix
 * multiply (dmmul) blocking and asynchronous, checked against local BLAS. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "numrpc_gridrpc.h"

#define NCALLS 6

/* The reference: C = A * B, column-major, by the local BLAS. */
extern void dgemm_(const char *transa, const char *transb, const int *m, const int *n,
                   const int *k, const double *alpha, const double *a, const int *lda,
                   const double *b, const int *ldb, const double *beta, double *c,
                   const int *ldc, size_t transa_len, size_t transb_len);

static int passed, failed;

static void check(int ok, const char *what)
{
    if (ok) passed++;
    else failed++;
    printf("%s: %s\n", ok ? "ok" : "FAILED", what);
}

static void fill(double *m, int n, unsigned seed)
{
    for (int i = 0; i < n * n; i++) {
        seed = seed * 1103515245u + 12345u;
        m[i] = (double)(seed >> 16 & 0x7fff) / 32768.0 - 0.5;
    }
}

/* The remote product equals the local one (same BLAS, same order: up to
 * rounding of a different blocking). */
static int same_product(const double *a, const double *b, const double *c, int n)
{
    double *ref = malloc(sizeof(double) * (size_t)n * (size_t)n);
    const double one = 1.0, zero = 0.0;
    int ok = ref != NULL;
    if (ok) dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, ref, &n, 1, 1);
    for (int i = 0; ok && i < n * n; i++)
        if (fabs(ref[i] - c[i]) > 1e-12 * n) ok = 0;
    free(ref);
    return ok;
}

int main(int argc, char **argv)
{
    grpc_function_handle_t handle;
    grpc_sessionid_t ids[NCALLS];
    double *a[NCALLS], *b[NCALLS], *c[NCALLS];
    int n = argc > 2 ? atoi(argv[2]) : 120;
    int i;

    if (argc < 2) {
        fprintf(stderr, "usage: %s CONFIG_FILE [n]\n", argv[0]);
        return 2;
    }
    if (grpc_initialize(argv[1]) != GRPC_NO_ERROR) {
        grpc_perror("grpc_initialize");
        return 1;
    }
    if (grpc_function_handle_default(&handle, "dmmul") != GRPC_NO_ERROR) {
        grpc_perror("grpc_function_handle_default");
        grpc_finalize();
        return 1;
    }
    for (i = 0; i < NCALLS; i++) {
        a[i] = malloc(sizeof(double) * (size_t)n * (size_t)n);
        b[i] = malloc(sizeof(double) * (size_t)n * (size_t)n);
        c[i] = calloc((size_t)n * (size_t)n, sizeof(double));
        if (!a[i] || !b[i] || !c[i]) return 1;
        fill(a[i], n, 2u * (unsigned)i + 1u);
        fill(b[i], n, 2u * (unsigned)i + 2u);
    }

    /* Blocking: one product. */
    if (grpc_call(&handle, n, a[0], b[0], c[0]) != GRPC_NO_ERROR) grpc_perror("grpc_call");
    check(grpc_get_last_error() == GRPC_NO_ERROR && same_product(a[0], b[0], c[0], n),
          "grpc_call dmmul equals the local dgemm");

    /* Asynchronous: NCALLS products at once, then all of them waited for. */
    for (i = 0; i < NCALLS; i++) {
        c[i][0] = 12345.0;
        if (grpc_call_async(&handle, &ids[i], n, a[i], b[i], c[i]) != GRPC_NO_ERROR) {
            grpc_perror("grpc_call_async");
            ids[i] = GRPC_SESSIONID_VOID;
        }
    }
    if (grpc_wait_and(ids, NCALLS) != GRPC_NO_ERROR) grpc_perror("grpc_wait_and"); /* says which session, and why */
    check(grpc_get_last_error() == GRPC_NO_ERROR, "grpc_wait_and returns every session");
    for (i = 0; i < NCALLS; i++) {
        char what[80];
        snprintf(what, sizeof what, "asynchronous product %d equals the local dgemm", i);
        check(same_product(a[i], b[i], c[i], n), what);
    }

    /* Asynchronous again, taken as they complete. */
    for (i = 0; i < NCALLS; i++) {
        c[i][0] = 12345.0;
        if (grpc_call_async(&handle, &ids[i], n, b[i], a[i], c[i]) != GRPC_NO_ERROR)
            grpc_perror("grpc_call_async");
    }
    {
        int seen = 0, ok = 1;
        grpc_sessionid_t id;
        while (grpc_wait_any(&id) == GRPC_NO_ERROR) {
            for (i = 0; i < NCALLS; i++)
                if (ids[i] == id) break;
            ok = ok && i < NCALLS && same_product(b[i], a[i], c[i], n);
            seen++;
        }
        check(ok && seen == NCALLS, "grpc_wait_any returns each product once, each right");
        check(grpc_get_last_error() == GRPC_INVALID_SESSION_ID,
              "grpc_wait_any with nothing left: GRPC_INVALID_SESSION_ID");
    }

    check(grpc_function_handle_destruct(&handle) == GRPC_NO_ERROR, "grpc_function_handle_destruct");
    check(grpc_finalize() == GRPC_NO_ERROR, "grpc_finalize");
    for (i = 0; i < NCALLS; i++) {
        free(a[i]);
        free(b[i]);
        free(c[i]);
    }
    printf("gridrpc_matmul: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
