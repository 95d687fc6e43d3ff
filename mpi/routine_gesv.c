/* routine_gesv.c -- pdgesv behind dgesv's arguments: A X = B by LU with
 * partial pivoting; LU factors, X and LAPACK's pivots gathered to rank 0. */
#include "args.h"
#include "plan.h"
#include "routine.h"

enum { N, NRHS, A, LDA, IPIV, B, LDB, INFO };

/* pdgesv's own course (pdgetrf, then pdgetrs when A is not singular), with
 * pdgetrf's info corrected as for pdgetrf alone (routine.h). */
static int compute(const engine_grid *g, engine_call *c, plan *p)
{
    int n = args_int(c, N), nrhs = args_int(c, NRHS), one = 1, info = 0;
    dist_matrix *a = &p->arrays[0].d, *b = &p->arrays[1].d;
    pdgetrf_(&n, &n, a->local, &one, &one, a->desc, p->pivots.local, &info);
    info = routine_getrf_info(g, c, n, A, info);
    if (info == 0)
        pdgetrs_("N", &n, &nrhs, a->local, &one, &one, a->desc, p->pivots.local, b->local, &one,
                 &one, b->desc, &info, 1);
    return info;
}

int routine_pdgesv(const engine_grid *g, engine_call *c)
{
    static const char me[] = "pdgesv";
    int n = args_int(c, N), nrhs = args_int(c, NRHS);
    if (args_check_system(c, me, n, nrhs, args_int(c, LDA), args_int(c, LDB)))
        return -1;
    args_set_int(c, INFO, 0);
    if (n == 0)
        return 0;
    plan p;
    plan_begin(&p, me, INFO);
    plan_array_add(&p, A, LDA, n, n, PLAN_IN | PLAN_OUT);
    plan_array_add(&p, B, LDB, n, nrhs, PLAN_IN | PLAN_OUT);
    plan_pivots(&p, IPIV, n, n, PLAN_OUT);
    return plan_run(g, c, &p, compute);
}
