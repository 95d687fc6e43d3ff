/* routine_posv.c -- pdposv behind dposv's arguments: A X = B for symmetric
 * positive definite A by Cholesky (uplo's triangle); factor and X to rank 0. */
#include "args.h"
#include "dist.h"
#include "routine.h"

enum { UPLO, N, NRHS, A, LDA, B, LDB, INFO };

int routine_pdposv(const engine_grid *g, engine_call *c)
{
    static const char me[] = "pdposv";
    char uplo = args_char(c, UPLO);
    int n = args_int(c, N), nrhs = args_int(c, NRHS);
    int lda = args_int(c, LDA), ldb = args_int(c, LDB);
    if (args_check_char(c, me, "uplo", uplo, "UL") || args_check_count(c, me, "n", n) ||
        args_check_count(c, me, "nrhs", nrhs) || args_check_ld(c, me, "lda", lda, n) ||
        args_check_ld(c, me, "ldb", ldb, n))
        return -1;
    args_set_int(c, INFO, 0);
    if (n == 0)
        return 0;

    dist_matrix a, b;
    int ok = dist_matrix_init(g, &a, n, n) == 0;
    ok &= dist_matrix_init(g, &b, n, nrhs) == 0;
    int rc = -1, info = 0, one = 1;
    if (!dist_agree(g, ok)) {
        args_fail_memory(c, me, n, n);
        goto done;
    }
    double t = dist_clock(g);
    dist_scatter(g, args_doubles(c, A), lda, &a);
    dist_scatter(g, args_doubles(c, B), ldb, &b);
    dist_lap(g, &t, &c->scatter_s);
    pdposv_(&uplo, &n, &nrhs, a.local, &one, &one, a.desc, b.local, &one, &one, b.desc, &info, 1);
    dist_lap(g, &t, &c->compute_s);
    dist_gather(g, &a, args_doubles(c, A), lda);
    dist_gather(g, &b, args_doubles(c, B), ldb);
    dist_lap(g, &t, &c->gather_s);
    args_set_int(c, INFO, info);
    rc = args_check_info(c, me, info);
done:
    dist_matrix_free(&a);
    dist_matrix_free(&b);
    return rc;
}
