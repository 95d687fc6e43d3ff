/* routine_gemm.c -- pdgemm behind dgemm's arguments: C := alpha op(A) op(B)
 * + beta C with op N or T ('C' is T for real matrices); C gathered to rank 0. */
#include "args.h"
#include "plan.h"
#include "routine.h"

enum { TRANSA, TRANSB, M, N, K, ALPHA, A, LDA, B, LDB, BETA, C, LDC };

static int compute(const engine_grid *g, engine_call *c, plan *p)
{
    char transa = args_char(c, TRANSA), transb = args_char(c, TRANSB);
    int m = args_int(c, M), n = args_int(c, N), k = args_int(c, K), one = 1;
    double alpha = args_double(c, ALPHA), beta = args_double(c, BETA);
    dist_matrix *a = &p->arrays[0].d, *b = &p->arrays[1].d, *cm = &p->arrays[2].d;
    (void)g;
    pdgemm_(&transa, &transb, &m, &n, &k, &alpha, a->local, &one, &one, a->desc, b->local, &one,
            &one, b->desc, &beta, cm->local, &one, &one, cm->desc, 1, 1);
    return 0;
}

int routine_pdgemm(const engine_grid *g, engine_call *c)
{
    static const char me[] = "pdgemm";
    char transa = args_char(c, TRANSA), transb = args_char(c, TRANSB);
    int m = args_int(c, M), n = args_int(c, N), k = args_int(c, K);
    if (args_check_char(c, me, "transa", transa, "NTC") ||
        args_check_char(c, me, "transb", transb, "NTC") || args_check_count(c, me, "m", m) ||
        args_check_count(c, me, "n", n) || args_check_count(c, me, "k", k))
        return -1;
    int a_plain = args_char_is(transa, "N"), b_plain = args_char_is(transb, "N");
    int a_rows = a_plain ? m : k, a_cols = a_plain ? k : m;
    int b_rows = b_plain ? k : n, b_cols = b_plain ? n : k;
    if (args_check_ld(c, me, "lda", args_int(c, LDA), a_rows) ||
        args_check_ld(c, me, "ldb", args_int(c, LDB), b_rows) ||
        args_check_ld(c, me, "ldc", args_int(c, LDC), m))
        return -1;
    if (m == 0 || n == 0)
        return 0;
    /* As in BLAS, A and B are not read when alpha is zero, nor C when beta
     * is (the parts on the grid start zeroed). */
    int reads_ab = args_double(c, ALPHA) != 0.0 ? PLAN_IN : 0;
    int reads_c = args_double(c, BETA) != 0.0 ? PLAN_IN : 0;
    plan p;
    plan_begin(&p, me, -1);
    plan_array_add(&p, A, LDA, a_rows, a_cols, reads_ab);
    plan_array_add(&p, B, LDB, b_rows, b_cols, reads_ab);
    plan_array_add(&p, C, LDC, m, n, reads_c | PLAN_OUT);
    return plan_run(g, c, &p, compute);
}
