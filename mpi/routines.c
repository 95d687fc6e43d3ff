/* routines.c -- the table of the engine's routines by IDL name, with how
 * many parameters each interface has (engine.h). */
#include <string.h>

#include "routine.h"

const engine_routine engine_routines[] = {
    /* (n, nrhs, a, lda, ipiv, b, ldb, info): dgesv's */
    {"pdgesv", 8, routine_pdgesv, NULL},
    /* (uplo, n, nrhs, a, lda, b, ldb, info): dposv's */
    {"pdposv", 8, routine_pdposv, NULL},
    /* (transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc): dgemm's */
    {"pdgemm", 13, routine_pdgemm, NULL},
    /* (jobz, uplo, n, a, lda, w, workspace, lwork, info): dsyev's */
    {"pdsyev", 9, routine_pdsyev, NULL},
    /* (m, n, a, lda, ipiv, info): dgetrf's */
    {"pdgetrf", 6, routine_pdgetrf, layout_pdgetrf},
    /* (trans, n, nrhs, a, lda, ipiv, b, ldb, info): dgetrs's */
    {"pdgetrs", 9, routine_pdgetrs, layout_pdgetrs},
    {NULL, 0, NULL, NULL},
};

const engine_routine *engine_routine_find(const char *name)
{
    for (const engine_routine *r = engine_routines; r->name != NULL; r++)
        if (strcmp(r->name, name) == 0)
            return r;
    return NULL;
}
