/* routine_getrf.c -- pdgetrf and pdgetrs behind dgetrf's and dgetrs's
 * arguments: the LU factors and pivots in LAPACK's form on rank 0, and back. */
#include "args.h"
#include "numrpc.h"
#include "plan.h"
#include "routine.h"

enum { RF_M, RF_N, RF_A, RF_LDA, RF_IPIV, RF_INFO };

int routine_getrf_info(const engine_grid *g, const engine_call *c, int m, int a_arg, int info)
{
    if (m != 1 || info != 0)
        return info;
    /* ScaLAPACK 2.2.1's pdgetrf answers 0 for a one-row matrix whose pivot
     * (its first element) is zero; dgetrf answers 1.  Rank 0 holds the
     * element and tells the others. */
    int zero_pivot = g->rank == 0 && args_doubles(c, a_arg)[0] == 0.0;
    return dist_agree(g, !zero_pivot) ? 0 : 1;
}

static int factor(const engine_grid *g, engine_call *c, plan *p)
{
    int m = args_int(c, RF_M), n = args_int(c, RF_N), one = 1, info = 0;
    dist_matrix *a = &p->arrays[0].d;
    pdgetrf_(&m, &n, a->local, &one, &one, a->desc, p->pivots.local, &info);
    return routine_getrf_info(g, c, m, RF_A, info);
}

/* pdgetrf's plan from its scalars: 0, 1 when there is nothing to do, or
 * -1 refused.  A and its pivots stay on the grid for a pdgetrs (keep.h). */
int layout_pdgetrf(engine_call *c, plan *p)
{
    static const char me[] = "pdgetrf";
    int m = args_int(c, RF_M), n = args_int(c, RF_N);
    plan_begin(p, me, RF_INFO);
    if (args_check_count(c, me, "m", m) || args_check_count(c, me, "n", n) ||
        args_check_ld(c, me, "lda", args_int(c, RF_LDA), m))
        return -1;
    if (m == 0 || n == 0)
        return 1;
    plan_array_add(p, RF_A, RF_LDA, m, n, PLAN_IN | PLAN_OUT);
    plan_pivots(p, RF_IPIV, m, m < n ? m : n, PLAN_OUT);
    return 0;
}

int routine_pdgetrf(const engine_grid *g, engine_call *c)
{
    return plan_run_layout(g, c, layout_pdgetrf, factor);
}

enum { RS_TRANS, RS_N, RS_NRHS, RS_A, RS_LDA, RS_IPIV, RS_B, RS_LDB, RS_INFO };

static int solve(const engine_grid *g, engine_call *c, plan *p)
{
    char trans = args_char(c, RS_TRANS);
    int n = args_int(c, RS_N), nrhs = args_int(c, RS_NRHS), one = 1, info = 0;
    dist_matrix *a = &p->arrays[0].d, *b = &p->arrays[1].d;
    (void)g;
    pdgetrs_(&trans, &n, &nrhs, a->local, &one, &one, a->desc, p->pivots.local, b->local, &one,
             &one, b->desc, &info, 1);
    return info;
}

/* pdgetrs's plan: A and the pivots only read (a pdgetrf's, kept, or
 * scattered and kept for the next solve); the pivots checked by plan_run. */
int layout_pdgetrs(engine_call *c, plan *p)
{
    static const char me[] = "pdgetrs";
    int n = args_int(c, RS_N), nrhs = args_int(c, RS_NRHS);
    plan_begin(p, me, RS_INFO);
    if (args_check_char(c, me, "trans", args_char(c, RS_TRANS), "NTC") ||
        args_check_system(c, me, n, nrhs, args_int(c, RS_LDA), args_int(c, RS_LDB)))
        return -1;
    if (n == 0 || nrhs == 0)
        return 1;
    plan_array_add(p, RS_A, RS_LDA, n, n, PLAN_IN);
    plan_array_add(p, RS_B, RS_LDB, n, nrhs, PLAN_IN | PLAN_OUT);
    plan_pivots(p, RS_IPIV, n, n, PLAN_IN);
    return 0;
}

int routine_pdgetrs(const engine_grid *g, engine_call *c)
{
    return plan_run_layout(g, c, layout_pdgetrs, solve);
}
