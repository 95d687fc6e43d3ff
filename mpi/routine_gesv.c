/* routine_gesv.c -- pdgesv behind dgesv's arguments: A X = B by LU with
 * partial pivoting; LU factors, X and LAPACK's pivots gathered to rank 0. */
#include "args.h"
#include "dist.h"
#include "routine.h"

enum { N, NRHS, A, LDA, IPIV, B, LDB, INFO };

int routine_pdgesv(const engine_grid *g, engine_call *c)
{
    static const char me[] = "pdgesv";
    int n = args_int(c, N), nrhs = args_int(c, NRHS);
    int lda = args_int(c, LDA), ldb = args_int(c, LDB);
    if (args_check_count(c, me, "n", n) || args_check_count(c, me, "nrhs", nrhs) ||
        args_check_ld(c, me, "lda", lda, n) || args_check_ld(c, me, "ldb", ldb, n))
        return -1;
    args_set_int(c, INFO, 0);
    if (n == 0)
        return 0;

    dist_matrix a, b;
    dist_pivots ipiv;
    int ok = dist_matrix_init(g, &a, n, n) == 0;
    ok &= dist_matrix_init(g, &b, n, nrhs) == 0;
    ok &= dist_pivots_init(g, &ipiv, n) == 0;
    int rc = -1, info = 0, one = 1;
    if (!dist_agree(g, ok)) {
        args_fail_memory(c, me, n, n);
        goto done;
    }
    double t = dist_clock(g);
    dist_scatter(g, args_doubles(c, A), lda, &a);
    dist_scatter(g, args_doubles(c, B), ldb, &b);
    dist_lap(g, &t, &c->scatter_s);
    pdgesv_(&n, &nrhs, a.local, &one, &one, a.desc, ipiv.local, b.local, &one, &one, b.desc,
            &info);
    dist_lap(g, &t, &c->compute_s);
    dist_gather(g, &a, args_doubles(c, A), lda);
    dist_gather(g, &b, args_doubles(c, B), ldb);
    dist_pivots_gather(g, &ipiv, args_ints(c, IPIV), n);
    dist_lap(g, &t, &c->gather_s);
    args_set_int(c, INFO, info);
    rc = args_check_info(c, me, info);
done:
    dist_matrix_free(&a);
    dist_matrix_free(&b);
    dist_pivots_free(&ipiv);
    return rc;
}
