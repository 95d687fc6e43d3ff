/* routine_gemm.c -- pdgemm behind dgemm's arguments: C := alpha op(A) op(B)
 * + beta C with op N or T ('C' is T for real matrices); C gathered to rank 0. */
#include "args.h"
#include "dist.h"
#include "routine.h"

enum { TRANSA, TRANSB, M, N, K, ALPHA, A, LDA, B, LDB, BETA, C, LDC };

int routine_pdgemm(const engine_grid *g, engine_call *c)
{
    static const char me[] = "pdgemm";
    char transa = args_char(c, TRANSA), transb = args_char(c, TRANSB);
    int m = args_int(c, M), n = args_int(c, N), k = args_int(c, K);
    int lda = args_int(c, LDA), ldb = args_int(c, LDB), ldc = args_int(c, LDC);
    double alpha = args_double(c, ALPHA), beta = args_double(c, BETA);
    if (args_check_char(c, me, "transa", transa, "NTC") ||
        args_check_char(c, me, "transb", transb, "NTC") || args_check_count(c, me, "m", m) ||
        args_check_count(c, me, "n", n) || args_check_count(c, me, "k", k))
        return -1;
    int a_plain = args_char_is(transa, "N"), b_plain = args_char_is(transb, "N");
    int a_rows = a_plain ? m : k, a_cols = a_plain ? k : m;
    int b_rows = b_plain ? k : n, b_cols = b_plain ? n : k;
    if (args_check_ld(c, me, "lda", lda, a_rows) || args_check_ld(c, me, "ldb", ldb, b_rows) ||
        args_check_ld(c, me, "ldc", ldc, m))
        return -1;
    if (m == 0 || n == 0)
        return 0;

    dist_matrix a, b, cm;
    int ok = dist_matrix_init(g, &a, a_rows, a_cols) == 0;
    ok &= dist_matrix_init(g, &b, b_rows, b_cols) == 0;
    ok &= dist_matrix_init(g, &cm, m, n) == 0;
    int rc = -1, one = 1;
    if (!dist_agree(g, ok)) {
        args_fail_memory(c, me, m > k ? m : k, n > k ? n : k);
        goto done;
    }
    double t = dist_clock(g);
    /* As in BLAS, A and B are not read when alpha is zero, nor C when beta is
     * (the local parts start zeroed). */
    if (alpha != 0.0) {
        dist_scatter(g, args_doubles(c, A), lda, &a);
        dist_scatter(g, args_doubles(c, B), ldb, &b);
    }
    if (beta != 0.0)
        dist_scatter(g, args_doubles(c, C), ldc, &cm);
    dist_lap(g, &t, &c->scatter_s);
    pdgemm_(&transa, &transb, &m, &n, &k, &alpha, a.local, &one, &one, a.desc, b.local, &one,
            &one, b.desc, &beta, cm.local, &one, &one, cm.desc, 1, 1);
    dist_lap(g, &t, &c->compute_s);
    dist_gather(g, &cm, args_doubles(c, C), ldc);
    dist_lap(g, &t, &c->gather_s);
    rc = 0;
done:
    dist_matrix_free(&a);
    dist_matrix_free(&b);
    dist_matrix_free(&cm);
    return rc;
}
