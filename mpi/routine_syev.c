/* routine_syev.c -- pdsyev behind dsyev's arguments: the eigenvalues (w) and,
 * with jobz 'V', eigenvectors (into a) of a symmetric matrix, on rank 0. */
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "dist.h"
#include "numrpc.h"
#include "routine.h"

enum { JOBZ, UPLO, N, A, LDA, W, WORKSPACE, LWORK, INFO };

/* lwork -1: the caller asks dsyev's optimal workspace, as a local call
 * would answer (the engine's own workspace is ScaLAPACK's, on each rank). */
static void answer_query(const engine_grid *g, engine_call *c, char jobz, char uplo, int n,
                         int lda)
{
    int query = -1, info = 0;
    double best = 0.0;
    if (g->rank != 0)
        return;
    dsyev_(&jobz, &uplo, &n, args_doubles(c, A), &lda, args_doubles(c, W), &best, &query, &info,
           1, 1);
    args_doubles(c, WORKSPACE)[0] = best;
    args_set_int(c, INFO, info);
}

/* This rank's pdsyev workspace, sized by ScaLAPACK's own query; NULL when
 * out of memory. */
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

int routine_pdsyev(const engine_grid *g, engine_call *c)
{
    static const char me[] = "pdsyev";
    char jobz = args_char(c, JOBZ), uplo = args_char(c, UPLO);
    int n = args_int(c, N), lda = args_int(c, LDA), lwork = args_int(c, LWORK);
    if (args_check_char(c, me, "jobz", jobz, "NV") || args_check_char(c, me, "uplo", uplo, "UL") ||
        args_check_count(c, me, "n", n) || args_check_ld(c, me, "lda", lda, n))
        return -1;
    int least = n > 1 ? 3 * n - 1 : 1;
    if (lwork != -1 && lwork < least)
        return args_fail(c, NUMRPC_EINVAL,
                         "%s: lwork = %d must be at least max(1, 3*n-1) = %d, or -1 to ask the "
                         "workspace's size",
                         me, lwork, least);
    args_set_int(c, INFO, 0);
    if (lwork == -1) {
        answer_query(g, c, jobz, uplo, n, lda);
        return 0;
    }
    if (n == 0)
        return 0;

    int vectors = args_char_is(jobz, "V"), rc = -1, info = 0, one = 1, work_len = 0;
    dist_matrix a, z;
    double *work = NULL, *w = malloc((size_t)n * sizeof *w);
    int ok = dist_matrix_init(g, &a, n, n) == 0;
    ok &= dist_matrix_init(g, &z, vectors ? n : 1, vectors ? n : 1) == 0;
    if (ok && w != NULL)
        work = workspace(jobz, uplo, n, &a, w, vectors ? &z : &a, &work_len);
    if (!dist_agree(g, ok && w != NULL && work != NULL)) {
        args_fail_memory(c, me, n, n);
        goto done;
    }
    double t = dist_clock(g);
    dist_scatter(g, args_doubles(c, A), lda, &a);
    dist_lap(g, &t, &c->scatter_s);
    dist_matrix *zv = vectors ? &z : &a; /* Z is not referenced for jobz 'N' */
    pdsyev_(&jobz, &uplo, &n, a.local, &one, &one, a.desc, w, zv->local, &one, &one, zv->desc,
            work, &work_len, &info, 1, 1);
    dist_lap(g, &t, &c->compute_s);
    /* w is on every rank; a (destroyed for jobz 'N', as in dsyev) gets Z. */
    if (vectors)
        dist_gather(g, &z, args_doubles(c, A), lda);
    if (g->rank == 0)
        memcpy(args_doubles(c, W), w, (size_t)n * sizeof *w);
    dist_lap(g, &t, &c->gather_s);
    args_set_int(c, INFO, info);
    rc = args_check_info(c, me, info);
done:
    dist_matrix_free(&a);
    dist_matrix_free(&z);
    free(work);
    free(w);
    return rc;
}
