/* netns_dgesv.c -- a client's remote solve (dgesv, or a routine with its arguments such
 * as pdgesv) checked against local LAPACK on the same inputs; names the server. */
#include <math.h>
#include <numrpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv, double *b,
            const int *ldb, int *info);

enum { NRHS = 2 };

int main(int argc, char **argv)
{
    char *end = NULL;
    long n_arg = argc == 3 ? strtol(argv[2], &end, 10) : 0;
    if (argc != 3 || *end != '\0' || n_arg < 1 || n_arg > 4000) {
        fprintf(stderr, "usage: netns_dgesv ROUTINE N (1..4000); the server from NUMRPC_SERVER or "
                        "NUMRPC_METASERVER\n");
        return 2;
    }
    const char *routine = argv[1];
    int n = (int)n_arg, lda = n + 3, ldb = n + 1, nrhs = NRHS, info = -1, local_info = -1;
    size_t a_len = (size_t)lda * (size_t)n, b_len = (size_t)ldb * NRHS;
    double *a = malloc(a_len * sizeof *a), *a_local = malloc(a_len * sizeof *a);
    double *b = malloc(b_len * sizeof *b), *b_local = malloc(b_len * sizeof *b);
    int *ipiv = malloc((size_t)n * sizeof *ipiv), *ipiv_local = malloc((size_t)n * sizeof *ipiv);
    int status = 1;
    if (!a || !a_local || !b || !b_local || !ipiv || !ipiv_local) {
        fprintf(stderr, "netns_dgesv: out of memory\n");
        goto done;
    }
    /* Well conditioned (diagonally dominant); the rows past n are padding. */
    for (int j = 0; j < n; j++)
        for (int i = 0; i < lda; i++) a[(size_t)j * lda + i] = (i == j ? 2.0 * n : 0) + sin(1.0 + i + 7.0 * j);
    for (int k = 0; k < NRHS; k++)
        for (int i = 0; i < ldb; i++) b[(size_t)k * ldb + i] = cos(i + 0.5 * k);
    memcpy(a_local, a, a_len * sizeof *a);
    memcpy(b_local, b, b_len * sizeof *b);

    int rc = numrpc_call(routine, n, nrhs, a, lda, ipiv, b, ldb, &info);
    if (rc != NUMRPC_OK) {
        fprintf(stderr, "netns_dgesv: %s: %s: %s (%s)\n", routine, numrpc_strerror(rc),
                numrpc_last_error_detail(), numrpc_errname(rc));
        goto done;
    }
    numrpc_call_info call;
    numrpc_last_call_info(&call);
    dgesv_(&n, &nrhs, a_local, &lda, ipiv_local, b_local, &ldb, &local_info);

    double worst = 0, scale = 0;
    for (int k = 0; k < NRHS; k++)
        for (int i = 0; i < n; i++) {
            double x = b_local[(size_t)k * ldb + i];
            worst = fmax(worst, fabs(b[(size_t)k * ldb + i] - x));
            scale = fmax(scale, fabs(x));
        }
    int ok = info == 0 && local_info == 0 && worst <= 1e-12 * fmax(scale, 1.0);
    printf("%s n=%d on %s: info %d, max |x - x_lapack| = %.3g, %llu bytes sent, %llu received: %s\n",
           routine, n, call.server, info, worst, (unsigned long long)call.bytes_sent,
           (unsigned long long)call.bytes_received, ok ? "ok" : "WRONG");
    status = ok ? 0 : 1;
done:
    free(a);
    free(a_local);
    free(b);
    free(b_local);
    free(ipiv);
    free(ipiv_local);
    return status;
}
