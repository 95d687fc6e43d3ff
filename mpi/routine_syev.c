/* routine_syev.c -- pdsyev behind dsyev's arguments: the eigenvalues (w) and,
 * with jobz 'V', eigenvectors (into a) of a symmetric matrix, on rank 0. */
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "numrpc.h"
#include "plan.h"
#include "routine.h"

enum { JOBZ, UPLO, N, A, LDA, W, WORKSPACE, LWORK, INFO };

/* lwork -1: the caller asks dsyev's optimal workspace, as a local call
 * would answer (the engine's own workspace is ScaLAPACK's, on each rank). */
static void answer_query(const engine_grid *g, engine_call *c)
{
    char jobz = args_char(c, JOBZ), uplo = args_char(c, UPLO);
    int n = args_int(c, N), lda = args_int(c, LDA), query = -1, info = 0;
    double best = 0.0;
    if (g->rank != 0)
        return;
    dsyev_(&jobz, &uplo, &n, args_doubles(c, A), &lda, args_doubles(c, W), &best, &query, &info,
           1, 1);
    args_doubles(c, WORKSPACE)[0] = best;
    args_set_int(c, INFO, info);
}

/* Collective: this rank's pdsyev workspace, sized by ScaLAPACK's own query
 * (which every rank makes); NULL when out of memory. */
static double *workspace(char jobz, char uplo, int n, dist_matrix *a, double *w, dist_matrix *z,
                         int *lwork)
{
    int query = -1, one = 1, info = 0;
    double best = 0.0;
    pdsyev_(&jobz, &uplo, &n, a->local, &one, &one, a->desc, w, z->local, &one, &one, z->desc,
            &best, &query, &info, 1, 1);
    if (info != 0 || best < 1.0 || best > 2147483647.0)
        return NULL;
    *lwork = (int)best;
    return malloc((size_t)*lwork * sizeof(double));
}

static int compute(const engine_grid *g, engine_call *c, plan *p)
{
    char jobz = args_char(c, JOBZ), uplo = args_char(c, UPLO);
    int n = args_int(c, N), one = 1, info = PLAN_NO_MEMORY, lwork = 0;
    /* Z is the second array for jobz 'V'; not referenced for 'N'. */
    dist_matrix *a = &p->arrays[0].d, *z = p->count > 1 ? &p->arrays[1].d : a;
    double *work = NULL, *w = malloc((size_t)n * sizeof *w);
    if (!dist_agree(g, w != NULL))
        goto done;
    work = workspace(jobz, uplo, n, a, w, z, &lwork);
    if (!dist_agree(g, work != NULL))
        goto done;
    pdsyev_(&jobz, &uplo, &n, a->local, &one, &one, a->desc, w, z->local, &one, &one, z->desc,
            work, &lwork, &info, 1, 1);
    if (g->rank == 0) /* every rank has w */
        memcpy(args_doubles(c, W), w, (size_t)n * sizeof *w);
done:
    free(work);
    free(w);
    return info;
}

int routine_pdsyev(const engine_grid *g, engine_call *c)
{
    static const char me[] = "pdsyev";
    int n = args_int(c, N), lwork = args_int(c, LWORK);
    if (args_check_char(c, me, "jobz", args_char(c, JOBZ), "NV") ||
        args_check_char(c, me, "uplo", args_char(c, UPLO), "UL") ||
        args_check_count(c, me, "n", n) || args_check_ld(c, me, "lda", args_int(c, LDA), n))
        return -1;
    int least = n > 1 ? 3 * n - 1 : 1;
    if (lwork != -1 && lwork < least)
        return args_fail(c, NUMRPC_EINVAL,
                         "%s: lwork = %d must be at least max(1, 3*n-1) = %d, or -1 to ask the "
                         "workspace's size",
                         me, lwork, least);
    args_set_int(c, INFO, 0);
    if (lwork == -1) {
        answer_query(g, c);
        return 0;
    }
    if (n == 0)
        return 0;
    plan p;
    plan_begin(&p, me, INFO);
    /* a is destroyed for jobz 'N', as in dsyev: it does not come back. */
    plan_array_add(&p, A, LDA, n, n, PLAN_IN);
    if (args_char_is(args_char(c, JOBZ), "V"))
        plan_array_add(&p, A, LDA, n, n, PLAN_OUT); /* Z, the eigenvectors, into a */
    return plan_run(g, c, &p, compute);
}
