/* routine_posv.c -- pdposv behind dposv's arguments: A X = B for symmetric
 * positive definite A by Cholesky (uplo's triangle); factor and X to rank 0. */
#include "args.h"
#include "plan.h"
#include "routine.h"

enum { UPLO, N, NRHS, A, LDA, B, LDB, INFO };

static int compute(const engine_grid *g, engine_call *c, plan *p)
{
    char uplo = args_char(c, UPLO);
    int n = args_int(c, N), nrhs = args_int(c, NRHS), one = 1, info = 0;
    dist_matrix *a = &p->arrays[0].d, *b = &p->arrays[1].d;
    (void)g;
    pdposv_(&uplo, &n, &nrhs, a->local, &one, &one, a->desc, b->local, &one, &one, b->desc,
            &info, 1);
    return info;
}

int routine_pdposv(const engine_grid *g, engine_call *c)
{
    static const char me[] = "pdposv";
    int n = args_int(c, N), nrhs = args_int(c, NRHS);
    if (args_check_char(c, me, "uplo", args_char(c, UPLO), "UL") ||
        args_check_system(c, me, n, nrhs, args_int(c, LDA), args_int(c, LDB)))
        return -1;
    args_set_int(c, INFO, 0);
    if (n == 0)
        return 0;
    plan p;
    plan_begin(&p, me, INFO);
    plan_array_add(&p, A, LDA, n, n, PLAN_IN | PLAN_OUT);
    plan_array_add(&p, B, LDB, n, nrhs, PLAN_IN | PLAN_OUT);
    return plan_run(g, c, &p, compute);
}
