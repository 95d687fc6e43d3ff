/* routine_getrf.c -- pdgetrf and pdgetrs behind dgetrf's and dgetrs's
 * arguments: the LU factors and pivots in LAPACK's form on rank 0, and back. */
#include "args.h"
#include "dist.h"
#include "numrpc.h"
#include "routine.h"

enum { RF_M, RF_N, RF_A, RF_LDA, RF_IPIV, RF_INFO };

int routine_pdgetrf(const engine_grid *g, engine_call *c)
{
    static const char me[] = "pdgetrf";
    int m = args_int(c, RF_M), n = args_int(c, RF_N), lda = args_int(c, RF_LDA);
    if (args_check_count(c, me, "m", m) || args_check_count(c, me, "n", n) ||
        args_check_ld(c, me, "lda", lda, m))
        return -1;
    args_set_int(c, RF_INFO, 0);
    if (m == 0 || n == 0)
        return 0;

    dist_matrix a;
    dist_pivots ipiv;
    int ok = dist_matrix_init(g, &a, m, n) == 0;
    ok &= dist_pivots_init(g, &ipiv, m) == 0;
    int rc = -1, info = 0, one = 1;
    if (!dist_agree(g, ok)) {
        args_fail_memory(c, me, m, n);
        goto done;
    }
    double t = dist_clock(g);
    dist_scatter(g, args_doubles(c, RF_A), lda, &a);
    dist_lap(g, &t, &c->scatter_s);
    pdgetrf_(&m, &n, a.local, &one, &one, a.desc, ipiv.local, &info);
    dist_lap(g, &t, &c->compute_s);
    dist_gather(g, &a, args_doubles(c, RF_A), lda);
    dist_pivots_gather(g, &ipiv, args_ints(c, RF_IPIV), m < n ? m : n);
    dist_lap(g, &t, &c->gather_s);
    args_set_int(c, RF_INFO, info);
    rc = args_check_info(c, me, info);
done:
    dist_matrix_free(&a);
    dist_pivots_free(&ipiv);
    return rc;
}

enum { RS_TRANS, RS_N, RS_NRHS, RS_A, RS_LDA, RS_IPIV, RS_B, RS_LDB, RS_INFO };

int routine_pdgetrs(const engine_grid *g, engine_call *c)
{
    static const char me[] = "pdgetrs";
    char trans = args_char(c, RS_TRANS);
    int n = args_int(c, RS_N), nrhs = args_int(c, RS_NRHS);
    int lda = args_int(c, RS_LDA), ldb = args_int(c, RS_LDB);
    if (args_check_char(c, me, "trans", trans, "NTC") || args_check_count(c, me, "n", n) ||
        args_check_count(c, me, "nrhs", nrhs) || args_check_ld(c, me, "lda", lda, n) ||
        args_check_ld(c, me, "ldb", ldb, n))
        return -1;
    args_set_int(c, RS_INFO, 0);
    if (n == 0 || nrhs == 0)
        return 0;
    /* The pivots come from the caller: a row outside A would be a wild access. */
    int32_t bad_value;
    int bad = dist_pivots_check(g, args_ints(c, RS_IPIV), n, &bad_value);
    if (bad >= 0)
        return args_fail(c, NUMRPC_EINVAL, "%s: ipiv[%d] = %d is not a row of A (1 to n = %d)",
                         me, bad, (int)bad_value, n);

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
    dist_scatter(g, args_doubles(c, RS_A), lda, &a);
    dist_scatter(g, args_doubles(c, RS_B), ldb, &b);
    dist_pivots_scatter(g, args_ints(c, RS_IPIV), &ipiv);
    dist_lap(g, &t, &c->scatter_s);
    pdgetrs_(&trans, &n, &nrhs, a.local, &one, &one, a.desc, ipiv.local, b.local, &one, &one,
             b.desc, &info, 1);
    dist_lap(g, &t, &c->compute_s);
    dist_gather(g, &b, args_doubles(c, RS_B), ldb);
    dist_lap(g, &t, &c->gather_s);
    args_set_int(c, RS_INFO, info);
    rc = args_check_info(c, me, info);
done:
    dist_matrix_free(&a);
    dist_matrix_free(&b);
    dist_pivots_free(&ipiv);
    return rc;
}
