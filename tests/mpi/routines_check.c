/* routines_check.c -- the engine's ScaLAPACK routines (mpi/routines.c) against
 * local LAPACK on the same inputs, on grids of 1 to 4 ranks; routines_test.sh runs it. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "dist.h"
#include "engine.h"
#include "numrpc.h"
#include "scalapack.h"

/* ---- Local LAPACK and BLAS, the reference ---- */
void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv, double *b,
            const int *ldb, int *info);
void dposv_(const char *uplo, const int *n, const int *nrhs, double *a, const int *lda,
            double *b, const int *ldb, int *info, size_t);
void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b,
            const int *ldb, const double *beta, double *c, const int *ldc, size_t, size_t);
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *lda,
             const int *ipiv, double *b, const int *ldb, int *info, size_t);
void dgecon_(const char *norm, const int *n, const double *a, const int *lda,
             const double *anorm, double *rcond, double *work, int *iwork, int *info, size_t);
void dpocon_(const char *uplo, const int *n, const double *a, const int *lda,
             const double *anorm, double *rcond, double *work, int *iwork, int *info, size_t);

/* A check passes when its scaled error is below THRESH (as ScaLAPACK's own
 * testers do): residuals are divided by eps * n * the norms involved. */
#define THRESH   16.0
#define EPS      DBL_EPSILON
#define SENTINEL 777.0 /* fills rows m..ld-1: the engine must leave them */

static int world_rank, world_size;
static int passed, failed;
static char case_name[160];

/* ---- Checks (rank 0) ---- */

static void check(int ok, const char *fmt, ...)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL %s: ", case_name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void name_case(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(case_name, sizeof case_name, fmt, ap);
    va_end(ap);
}

/* ---- Matrices on rank 0: column-major, ld rows each column ---- */

static uint64_t seed = 0x9e3779b97f4a7c15u;

static double uniform(void) /* in [-1, 1) */
{
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return (double)(seed >> 11) / 4503599627370496.0 - 1.0;
}

static int at_least_one(int x)
{
    return x > 1 ? x : 1;
}

static double *mat_new(int ld, int cols)
{
    size_t count = (size_t)ld * (size_t)at_least_one(cols);
    double *a = malloc(count * sizeof *a);
    if (a == NULL) {
        fprintf(stderr, "routines_check: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (size_t i = 0; i < count; i++)
        a[i] = SENTINEL;
    return a;
}

static double *mat_random(int ld, int m, int n)
{
    double *a = mat_new(ld, n);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            a[i + (size_t)j * ld] = uniform();
    return a;
}

static double *mat_copy(const double *a, int ld, int cols)
{
    double *b = mat_new(ld, cols);
    memcpy(b, a, (size_t)ld * (size_t)at_least_one(cols) * sizeof *a);
    return b;
}

static int *ints_new(int count)
{
    int *p = calloc((size_t)at_least_one(count), sizeof *p);
    if (p == NULL)
        MPI_Abort(MPI_COMM_WORLD, 2);
    return p;
}

static double norm1(int m, int n, const double *a, int ld)
{
    double best = 0.0;
    for (int j = 0; j < n; j++) {
        double sum = 0.0;
        for (int i = 0; i < m; i++)
            sum += fabs(a[i + (size_t)j * ld]);
        best = sum > best || isnan(sum) ? sum : best;
    }
    return best;
}

static double norm1_diff(int m, int n, const double *a, int lda, const double *b, int ldb)
{
    double best = 0.0;
    for (int j = 0; j < n; j++) {
        double sum = 0.0;
        for (int i = 0; i < m; i++)
            sum += fabs(a[i + (size_t)j * lda] - b[i + (size_t)j * ldb]);
        best = sum > best || isnan(sum) ? sum : best;
    }
    return best;
}

/* Rows m..ld-1 still hold the sentinel. */
static int padding_intact(const double *a, int ld, int m, int n)
{
    for (int j = 0; j < n; j++)
        for (int i = m; i < ld; i++)
            if (a[i + (size_t)j * ld] != SENTINEL)
                return 0;
    return 1;
}

/* ||op(A) X - B||_1 / (||A||_1 ||X||_1 n eps) for n x n A. */
static double solve_residual(char trans, int n, int nrhs, const double *a, int lda,
                             const double *x, int ldx, const double *b, int ldb)
{
    double *r = mat_copy(b, ldb, nrhs), one = 1.0, minus = -1.0;
    dgemm_(&trans, "N", &n, &nrhs, &n, &minus, a, &lda, x, &ldx, &one, r, &ldb, 1, 1);
    double scale = norm1(n, n, a, lda) * norm1(n, nrhs, x, ldx) * n * EPS;
    double res = norm1(n, nrhs, r, ldb) / (scale > 0 ? scale : 1.0);
    free(r);
    return res;
}

/* ||P A - L U||_1 / (||A||_1 max(m, n) eps) for dgetrf's factors lu and pivots. */
static double lu_residual(int m, int n, const double *a, int lda, const double *lu, int ldlu,
                          const int *ipiv)
{
    int r = m < n ? m : n;
    for (int i = 0; i < r; i++)
        if (ipiv[i] < 1 || ipiv[i] > m)
            return INFINITY; /* not a row: no LAPACK pivots */
    double *pa = mat_copy(a, lda, n), *l = mat_new(m, r), *u = mat_new(r, n), *prod = mat_new(m, n);
    for (int i = 0; i < r; i++) /* P A: the interchanges in order */
        for (int j = 0; j < n; j++) {
            double *x = &pa[i + (size_t)j * lda], *y = &pa[ipiv[i] - 1 + (size_t)j * lda];
            double keep = *x;
            *x = *y;
            *y = keep;
        }
    for (int j = 0; j < r; j++)
        for (int i = 0; i < m; i++)
            l[i + (size_t)j * m] = i < j ? 0.0 : i == j ? 1.0 : lu[i + (size_t)j * ldlu];
    for (int j = 0; j < n; j++)
        for (int i = 0; i < r; i++)
            u[i + (size_t)j * r] = i <= j ? lu[i + (size_t)j * ldlu] : 0.0;
    double one = 1.0, zero = 0.0;
    dgemm_("N", "N", &m, &n, &r, &one, l, &m, u, &r, &zero, prod, &m, 1, 1);
    double scale = norm1(m, n, a, lda) * (m > n ? m : n) * EPS;
    double res = norm1_diff(m, n, pa, lda, prod, m) / (scale > 0 ? scale : 1.0);
    free(pa);
    free(l);
    free(u);
    free(prod);
    return res;
}

/* The engine's factors lu of a (both leading dimension lda) and its pivots:
 * the pivots are LAPACK's (ref, from routine) and P A = L U. */
static void check_lu(int m, int n, const double *a, int lda, const double *lu, const int *ipiv,
                     const int *ref, const char *routine)
{
    int r = m < n ? m : n, differ = 0;
    for (int i = 0; i < r; i++)
        differ += ipiv[i] != ref[i];
    check(differ == 0, "%d of %d pivots differ from %s's", differ, r, routine);
    double res = lu_residual(m, n, a, lda, lu, lda, ipiv);
    check(res < THRESH, "|PA - LU| scaled %.3g", res);
}

/* ---- One engine call, argv as engine.h has it ---- */

static int run(const engine_grid *g, const char *name, void **argv, int nargs, engine_call *c)
{
    const engine_routine *r = engine_routine_find(name);
    if (r == NULL || r->nargs != nargs) {
        fprintf(stderr, "routines_check: %s not in the table with %d arguments\n", name, nargs);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(c, 0, sizeof *c);
    c->argv = argv;
    c->nargs = nargs;
    int rc = r->run(g, c);
    if (g->rank == 0) {
        check(rc == 0 || c->code != 0, "returned %d without a code", rc);
        check(c->scatter_s >= 0 && c->compute_s >= 0 && c->gather_s >= 0, "negative phase time");
    }
    return rc;
}

/* An array argument: rank 0's block, NULL elsewhere. */
static void *on_root(const engine_grid *g, void *block)
{
    return g->rank == 0 ? block : NULL;
}

/* ---- pdgesv against dgesv ---- */

/* relative difference of two solutions, scaled by what the condition allows */
static double solution_error(int n, int nrhs, const double *x, int ldx, const double *ref,
                             int ldref, double rcond)
{
    double scale = norm1(n, nrhs, ref, ldref) * n * EPS / (rcond > 0 ? rcond : EPS);
    return norm1_diff(n, nrhs, x, ldx, ref, ldref) / (scale > 0 ? scale : 1.0);
}

static double lu_rcond(int n, const double *lu, int ld, double anorm)
{
    double rcond = 0.0, *work = mat_new(4 * n, 1);
    int *iwork = ints_new(n), info = 0;
    dgecon_("1", &n, lu, &ld, &anorm, &rcond, work, iwork, &info, 1);
    free(work);
    free(iwork);
    return rcond;
}

/* singular_col >= 0 zeroes that column: info > 0 as dgesv says. */
static void test_gesv(const engine_grid *g, int n, int nrhs, int singular_col)
{
    int lda = n + 2, ldb = n + 1, info = -99;
    double *a = NULL, *b = NULL, *a0 = NULL, *b0 = NULL, *aref = NULL, *bref = NULL;
    int *ipiv = NULL, *ipref = NULL, inforef = 0;
    name_case("pdgesv n=%d nrhs=%d%s grid %dx%d nb %d", n, nrhs,
              singular_col >= 0 ? " singular" : "", g->nprow, g->npcol, g->nb);
    if (g->rank == 0) {
        a = mat_random(lda, n, n);
        b = mat_random(ldb, n, nrhs);
        for (int i = 0; singular_col >= 0 && i < n; i++)
            a[i + (size_t)singular_col * lda] = 0.0;
        a0 = mat_copy(a, lda, n), b0 = mat_copy(b, ldb, nrhs);
        aref = mat_copy(a, lda, n), bref = mat_copy(b, ldb, nrhs);
        ipiv = ints_new(n), ipref = ints_new(n);
        dgesv_(&n, &nrhs, aref, &lda, ipref, bref, &ldb, &inforef);
    }
    void *argv[] = {&n, &nrhs, on_root(g, a), &lda, on_root(g, ipiv), on_root(g, b), &ldb, &info};
    engine_call c;
    int rc = run(g, "pdgesv", argv, 8, &c);
    if (g->rank == 0) {
        check(rc == 0, "rc %d: %s", rc, c.detail);
        check(info == inforef, "info %d, dgesv's %d", info, inforef);
        check_lu(n, n, a0, lda, a, ipiv, ipref, "dgesv");
        if (inforef == 0) {
            double res = solve_residual('N', n, nrhs, a0, lda, b, ldb, b0, ldb);
            double err = solution_error(n, nrhs, b, ldb, bref, ldb,
                                        lu_rcond(n, aref, lda, norm1(n, n, a0, lda)));
            check(res < THRESH, "|AX - B| scaled %.3g", res);
            check(err < THRESH, "|X - dgesv's X| scaled %.3g", err);
        }
        check(padding_intact(a, lda, n, n) && padding_intact(b, ldb, n, nrhs),
              "rows past n of a or b were written");
    }
    free(a), free(b), free(a0), free(b0), free(aref), free(bref), free(ipiv), free(ipref);
}

/* ---- pdposv against dposv ---- */

static int in_triangle(char uplo, int i, int j)
{
    return uplo == 'L' || uplo == 'l' ? i >= j : i <= j;
}

/* A = M^T M + n I (well conditioned); bad_diag >= 0 makes the identity with
 * a -1 there instead: not positive definite, info = bad_diag + 1. */
static void test_posv(const engine_grid *g, char uplo, int n, int nrhs, int bad_diag)
{
    int lda = n + 3, ldb = n + 2, info = -99, inforef = 0;
    double *a = NULL, *b = NULL, *a0 = NULL, *b0 = NULL, *aref = NULL, *bref = NULL;
    name_case("pdposv uplo=%c n=%d nrhs=%d%s grid %dx%d nb %d", uplo, n, nrhs,
              bad_diag >= 0 ? " indefinite" : "", g->nprow, g->npcol, g->nb);
    if (g->rank == 0) {
        double *m = mat_random(n, n, n), one = 1.0, zero = 0.0;
        a = mat_new(lda, n);
        dgemm_("T", "N", &n, &n, &n, &one, m, &n, m, &n, &zero, a, &lda, 1, 1);
        for (int i = 0; i < n; i++) {
            if (bad_diag >= 0)
                for (int j = 0; j < n; j++)
                    a[i + (size_t)j * lda] = i == j ? (i == bad_diag ? -1.0 : 1.0) : 0.0;
            else
                a[i + (size_t)i * lda] += n;
        }
        free(m);
        b = mat_random(ldb, n, nrhs);
        a0 = mat_copy(a, lda, n), b0 = mat_copy(b, ldb, nrhs);
        aref = mat_copy(a, lda, n), bref = mat_copy(b, ldb, nrhs);
        dposv_(&uplo, &n, &nrhs, aref, &lda, bref, &ldb, &inforef, 1);
    }
    void *argv[] = {&uplo, &n, &nrhs, on_root(g, a), &lda, on_root(g, b), &ldb, &info};
    engine_call c;
    int rc = run(g, "pdposv", argv, 8, &c);
    if (g->rank == 0) {
        check(rc == 0, "rc %d: %s", rc, c.detail);
        check(info == inforef, "info %d, dposv's %d", info, inforef);
        /* The factor in uplo's triangle is dposv's; the other one untouched. */
        double worst = 0.0, big = 0.0;
        int other_changed = 0;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                size_t at = i + (size_t)j * lda;
                if (!in_triangle(uplo, i, j))
                    other_changed += a[at] != a0[at];
                else if (inforef == 0) {
                    worst = fmax(worst, fabs(a[at] - aref[at]));
                    big = fmax(big, fabs(aref[at]));
                }
            }
        check(other_changed == 0, "%d entries outside uplo's triangle changed", other_changed);
        check(worst <= THRESH * n * EPS * big, "Cholesky factor off dposv's by %.3g of %.3g", worst,
              big);
        if (inforef == 0) {
            double anorm = norm1(n, n, a0, lda), rcond = 0.0, *work = mat_new(3 * n, 1);
            int *iwork = ints_new(n), cinfo = 0;
            dpocon_(&uplo, &n, aref, &lda, &anorm, &rcond, work, iwork, &cinfo, 1);
            double res = solve_residual('N', n, nrhs, a0, lda, b, ldb, b0, ldb);
            double err = solution_error(n, nrhs, b, ldb, bref, ldb, rcond);
            check(res < THRESH, "|AX - B| scaled %.3g", res);
            check(err < THRESH, "|X - dposv's X| scaled %.3g", err);
            free(work), free(iwork);
        }
        check(padding_intact(a, lda, n, n) && padding_intact(b, ldb, n, nrhs),
              "rows past n of a or b were written");
    }
    free(a), free(b), free(a0), free(b0), free(aref), free(bref);
}

/* ---- pdgemm against dgemm ---- */

static double max_abs(int m, int n, const double *a, int ld)
{
    double best = 0.0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            best = fmax(best, fabs(a[i + (size_t)j * ld]));
    return best;
}

/* beta 0 puts NaN in C: BLAS does not read C then, nor may the engine. */
static void test_gemm(const engine_grid *g, char ta, char tb, int m, int n, int k, double alpha,
                      double beta)
{
    int an = ta == 'N' || ta == 'n', bn = tb == 'N' || tb == 'n';
    int ar = an ? m : k, ac = an ? k : m, br = bn ? k : n, bc = bn ? n : k;
    int lda = ar + 1, ldb = br + 2, ldc = m + 3;
    double *a = NULL, *b = NULL, *cm = NULL, *cref = NULL, scale = 0.0;
    name_case("pdgemm %c%c m=%d n=%d k=%d alpha=%g beta=%g grid %dx%d nb %d", ta, tb, m, n, k,
              alpha, beta, g->nprow, g->npcol, g->nb);
    if (g->rank == 0) {
        a = mat_random(lda, ar, ac), b = mat_random(ldb, br, bc), cm = mat_random(ldc, m, n);
        for (int j = 0; beta == 0.0 && j < n; j++)
            for (int i = 0; i < m; i++)
                cm[i + (size_t)j * ldc] = NAN;
        scale = THRESH * EPS *
                (k * fabs(alpha) * max_abs(ar, ac, a, lda) * max_abs(br, bc, b, ldb) +
                 fabs(beta) * max_abs(m, n, cm, ldc) + DBL_MIN);
        cref = mat_copy(cm, ldc, n);
        dgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, cref, &ldc, 1, 1);
    }
    void *argv[] = {&ta,  &tb, &m, &n, &k, &alpha, on_root(g, a), &lda, on_root(g, b), &ldb,
                    &beta, on_root(g, cm), &ldc};
    engine_call c;
    int rc = run(g, "pdgemm", argv, 13, &c);
    if (g->rank == 0) {
        check(rc == 0, "rc %d: %s", rc, c.detail);
        double worst = 0.0;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                double d = fabs(cm[i + (size_t)j * ldc] - cref[i + (size_t)j * ldc]);
                worst = isnan(d) ? INFINITY : fmax(worst, d);
            }
        check(worst <= scale, "C off dgemm's by %.3g (allowed %.3g)", worst, scale);
        check(padding_intact(cm, ldc, m, n), "rows past m of c were written");
    }
    free(a), free(b), free(cm), free(cref);
}

/* ---- pdsyev against dsyev ---- */

static int dsyev_best_lwork(char jobz, char uplo, int n)
{
    double best = 0.0, dummy = 0.0;
    int query = -1, info = 0, lda = at_least_one(n);
    dsyev_(&jobz, &uplo, &n, &dummy, &lda, &dummy, &best, &query, &info, 1, 1);
    return (int)best;
}

/* Symmetric in uplo's triangle; the other triangle holds numbers that would
 * spoil the result were they read. */
static void test_syev(const engine_grid *g, char jobz, char uplo, int n)
{
    int lda = n + 1, lwork = n > 1 ? 3 * n - 1 : 1, info = -99, inforef = 0;
    double *a = NULL, *sym = NULL, *aref = NULL, *w = NULL, *wref = NULL, *work = NULL;
    name_case("pdsyev jobz=%c uplo=%c n=%d grid %dx%d nb %d", jobz, uplo, n, g->nprow, g->npcol,
              g->nb);
    if (g->rank == 0) {
        a = mat_random(lda, n, n), sym = mat_new(n, n);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                size_t at = i + (size_t)j * lda;
                if (!in_triangle(uplo, i, j))
                    a[at] = 1e3 + i;
                else
                    sym[i + (size_t)j * n] = sym[j + (size_t)i * n] = a[at];
            }
        aref = mat_copy(a, lda, n);
        w = mat_new(n, 1), wref = mat_new(n, 1), work = mat_new(lwork, 1);
        int lref = dsyev_best_lwork(jobz, uplo, n);
        double *wref_work = mat_new(lref, 1);
        dsyev_(&jobz, &uplo, &n, aref, &lda, wref, wref_work, &lref, &inforef, 1, 1);
        free(wref_work);
    }
    void *argv[] = {&jobz, &uplo, &n, on_root(g, a), &lda, on_root(g, w), on_root(g, work), &lwork,
                    &info};
    engine_call c;
    int rc = run(g, "pdsyev", argv, 9, &c);
    if (g->rank == 0) {
        check(rc == 0, "rc %d: %s", rc, c.detail);
        check(info == inforef, "info %d, dsyev's %d", info, inforef);
        double anorm = norm1(n, n, sym, n), worst = 0.0;
        int ascending = 1;
        for (int i = 0; i < n; i++) {
            worst = fmax(worst, fabs(w[i] - wref[i]));
            ascending &= i == 0 || w[i - 1] <= w[i];
        }
        check(ascending, "eigenvalues not ascending");
        check(worst <= THRESH * n * EPS * anorm, "eigenvalues off dsyev's by %.3g (|A| %.3g)",
              worst, anorm);
        if (jobz == 'V' || jobz == 'v') {
            /* Q^T A Q - diag(w) and Q^T Q - I, whatever the vectors' signs */
            double *aq = mat_new(n, n), *d = mat_new(n, n), *qq = mat_new(n, n);
            double one = 1.0, zero = 0.0;
            dgemm_("N", "N", &n, &n, &n, &one, sym, &n, a, &lda, &zero, aq, &n, 1, 1);
            dgemm_("T", "N", &n, &n, &n, &one, a, &lda, aq, &n, &zero, d, &n, 1, 1);
            dgemm_("T", "N", &n, &n, &n, &one, a, &lda, a, &lda, &zero, qq, &n, 1, 1);
            for (int i = 0; i < n; i++)
                d[i + (size_t)i * n] -= w[i], qq[i + (size_t)i * n] -= 1.0;
            double diag = norm1(n, n, d, n) / (n * EPS * (anorm > 0 ? anorm : 1.0));
            double orth = norm1(n, n, qq, n) / (n * EPS);
            check(diag < THRESH, "|Q^T A Q - diag(w)| scaled %.3g", diag);
            check(orth < THRESH, "|Q^T Q - I| scaled %.3g", orth);
            free(aq), free(d), free(qq);
        }
        check(padding_intact(a, lda, n, n), "rows past n of a were written");
    }
    free(a), free(sym), free(aref), free(w), free(wref), free(work);
}

/* lwork -1 answers dsyev's optimal workspace in workspace[0], and nothing else. */
static void test_syev_query(const engine_grid *g, int n)
{
    char jobz = 'V', uplo = 'L';
    int lda = n, lwork = -1, info = -99;
    double *a = NULL, *w = NULL, work = 0.0;
    name_case("pdsyev workspace query n=%d grid %dx%d nb %d", n, g->nprow, g->npcol, g->nb);
    if (g->rank == 0)
        a = mat_random(lda, n, n), w = mat_new(n, 1);
    void *argv[] = {&jobz, &uplo, &n, on_root(g, a), &lda, on_root(g, w), on_root(g, &work),
                    &lwork, &info};
    engine_call c;
    int rc = run(g, "pdsyev", argv, 9, &c);
    if (g->rank == 0) {
        check(rc == 0 && info == 0, "rc %d info %d: %s", rc, info, c.detail);
        check(work == dsyev_best_lwork(jobz, uplo, n), "workspace %g, dsyev says %d", work,
              dsyev_best_lwork(jobz, uplo, n));
    }
    free(a), free(w);
}

/* ---- pdgetrf and pdgetrs against dgetrf and dgetrs ---- */

static void test_getrf(const engine_grid *g, int m, int n)
{
    int lda = m + 3, r = m < n ? m : n, info = -99, inforef = 0;
    double *a = NULL, *a0 = NULL, *aref = NULL;
    int *ipiv = NULL, *ipref = NULL;
    name_case("pdgetrf m=%d n=%d grid %dx%d nb %d", m, n, g->nprow, g->npcol, g->nb);
    if (g->rank == 0) {
        a = mat_random(lda, m, n), a0 = mat_copy(a, lda, n), aref = mat_copy(a, lda, n);
        ipiv = ints_new(r), ipref = ints_new(r);
        dgetrf_(&m, &n, aref, &lda, ipref, &inforef);
    }
    void *argv[] = {&m, &n, on_root(g, a), &lda, on_root(g, ipiv), &info};
    engine_call c;
    int rc = run(g, "pdgetrf", argv, 6, &c);
    if (g->rank == 0) {
        check(rc == 0, "rc %d: %s", rc, c.detail);
        check(info == inforef, "info %d, dgetrf's %d", info, inforef);
        check_lu(m, n, a0, lda, a, ipiv, ipref, "dgetrf");
        check(padding_intact(a, lda, m, n), "rows past m of a were written");
    }
    free(a), free(a0), free(aref), free(ipiv), free(ipref);
}

/* The pair: pdgetrf's factors and pivots, as rank 0 got them, back into
 * pdgetrs; bad_pivot >= 0 spoils that pivot, which must be refused. */
static void test_getrs(const engine_grid *g, char trans, int n, int nrhs, int bad_pivot)
{
    int lda = n + 1, ldb = n + 2, info = -99, inforef = 0;
    double *a = NULL, *lu = NULL, *b = NULL, *b0 = NULL, *bref = NULL;
    int *ipiv = NULL;
    if (g->rank == 0)
        a = mat_random(lda, n, n), lu = mat_copy(a, lda, n), ipiv = ints_new(n);
    void *rf_argv[] = {&n, &n, on_root(g, lu), &lda, on_root(g, ipiv), &info};
    engine_call c;
    name_case("pdgetrs trans=%c n=%d nrhs=%d (its pdgetrf) grid %dx%d nb %d", trans, n, nrhs,
              g->nprow, g->npcol, g->nb);
    run(g, "pdgetrf", rf_argv, 6, &c);
    if (g->rank == 0) {
        check(info == 0, "pdgetrf info %d", info);
        b = mat_random(ldb, n, nrhs), b0 = mat_copy(b, ldb, nrhs), bref = mat_copy(b, ldb, nrhs);
        dgetrs_(&trans, &n, &nrhs, lu, &lda, ipiv, bref, &ldb, &inforef, 1);
        if (bad_pivot >= 0)
            ipiv[bad_pivot] = n + 1;
    }
    void *argv[] = {&trans, &n, &nrhs, on_root(g, lu), &lda, on_root(g, ipiv),
                    on_root(g, b), &ldb, &info};
    if (bad_pivot >= 0)
        name_case("pdgetrs ipiv[%d] = n+1 grid %dx%d nb %d", bad_pivot, g->nprow, g->npcol, g->nb);
    int rc = run(g, "pdgetrs", argv, 9, &c);
    if (g->rank == 0 && bad_pivot >= 0) {
        char expect[32];
        snprintf(expect, sizeof expect, "ipiv[%d] = %d", bad_pivot, n + 1);
        check(rc == -1 && c.code == NUMRPC_EINVAL && strstr(c.detail, expect) != NULL,
              "rc %d code %d detail '%s'", rc, c.code, c.detail);
        check(norm1_diff(n, nrhs, b, ldb, b0, ldb) == 0.0, "b changed by a refused call");
    } else if (g->rank == 0) {
        check(rc == 0 && info == inforef, "rc %d info %d (dgetrs's %d): %s", rc, info, inforef,
              c.detail);
        double res = solve_residual(trans, n, nrhs, a, lda, b, ldb, b0, ldb);
        double err = solution_error(n, nrhs, b, ldb, bref, ldb,
                                    lu_rcond(n, lu, lda, norm1(n, n, a, lda)));
        check(res < THRESH, "|op(A) X - B| scaled %.3g", res);
        check(err < THRESH, "|X - dgetrs's X| scaled %.3g", err);
        check(padding_intact(b, ldb, n, nrhs), "rows past n of b were written");
    }
    free(a), free(lu), free(b), free(b0), free(bref), free(ipiv);
}

/* ---- Arguments the routines refuse, alike on every rank (nobody waits) ---- */

static void expect_refused(const engine_grid *g, const char *name, void **argv, int nargs,
                           const char *says)
{
    engine_call c;
    name_case("%s refusing '%s' grid %dx%d nb %d", name, says, g->nprow, g->npcol, g->nb);
    int rc = run(g, name, argv, nargs, &c);
    if (g->rank == 0)
        check(rc == -1 && c.code == NUMRPC_EINVAL && strstr(c.detail, says) != NULL &&
                  strstr(c.detail, name) != NULL,
              "rc %d code %d detail '%s'", rc, c.code, c.detail);
}

static void test_refusals(const engine_grid *g)
{
    static double space[64];
    static int ispace[64];
    double *d = on_root(g, space), one = 1.0;
    int *iv = on_root(g, ispace), info = 0;
    int neg = -1, two = 2, three = 3, four = 4, five = 5;
    char good = 'N', bad = 'X', lower = 'L', vec = 'V';
    void *gesv_n[] = {&neg, &two, d, &four, iv, d, &four, &info};
    expect_refused(g, "pdgesv", gesv_n, 8, "n = -1 must not be negative");
    void *gesv_lda[] = {&four, &two, d, &three, iv, d, &four, &info};
    expect_refused(g, "pdgesv", gesv_lda, 8, "lda = 3 must be at least max(1, 4) = 4");
    void *posv_uplo[] = {&bad, &four, &two, d, &four, d, &four, &info};
    expect_refused(g, "pdposv", posv_uplo, 8, "uplo = 'X'");
    void *posv_ldb[] = {&lower, &four, &two, d, &four, d, &two, &info};
    expect_refused(g, "pdposv", posv_ldb, 8, "ldb = 2");
    void *gemm_trans[] = {&bad, &good, &two, &two, &two, &one, d, &two, d, &two, &one, d, &two};
    expect_refused(g, "pdgemm", gemm_trans, 13, "transa = 'X'");
    void *gemm_k[] = {&good, &good, &two, &two, &neg, &one, d, &two, d, &two, &one, d, &two};
    expect_refused(g, "pdgemm", gemm_k, 13, "k = -1");
    char t = 'T'; /* A is k x m for 'T': lda 4 is short of k = 5 */
    void *gemm_lda[] = {&t, &good, &three, &two, &five, &one, d, &four, d, &five, &one, d, &three};
    expect_refused(g, "pdgemm", gemm_lda, 13, "lda = 4 must be at least max(1, 5)");
    void *syev_jobz[] = {&bad, &lower, &four, d, &four, d, d, &five, &info};
    expect_refused(g, "pdsyev", syev_jobz, 9, "jobz = 'X'");
    void *syev_lwork[] = {&vec, &lower, &four, d, &four, d, d, &two, &info};
    expect_refused(g, "pdsyev", syev_lwork, 9, "lwork = 2 must be at least max(1, 3*n-1) = 11");
    void *getrf_m[] = {&neg, &two, d, &two, iv, &info};
    expect_refused(g, "pdgetrf", getrf_m, 6, "m = -1");
    void *getrf_lda[] = {&three, &two, d, &two, iv, &info};
    expect_refused(g, "pdgetrf", getrf_lda, 6, "lda = 2 must be at least max(1, 3)");
    void *getrs_trans[] = {&bad, &two, &two, d, &two, iv, d, &two, &info};
    expect_refused(g, "pdgetrs", getrs_trans, 9, "trans = 'X'");
}

/* ---- The test's own grid (the engine's is set up by its main loop) ---- */

typedef struct test_grid {
    engine_grid g;
    int system; /* the BLACS handle of g.comm */
} test_grid;

/* The first nprow * npcol ranks of the world form the grid; returns 0 on the
 * others, which wait. */
static int grid_open(test_grid *t, int nprow, int npcol, int nb)
{
    MPI_Comm comm;
    int member = world_rank < nprow * npcol;
    MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, world_rank, &comm);
    if (!member)
        return 0;
    memset(t, 0, sizeof *t);
    engine_grid *g = &t->g;
    g->comm = comm;
    MPI_Comm_rank(comm, &g->rank);
    MPI_Comm_size(comm, &g->size);
    t->system = Csys2blacs_handle(comm);
    g->ctxt = t->system;
    Cblacs_gridinit(&g->ctxt, "Row", nprow, npcol);
    Cblacs_gridinfo(g->ctxt, &g->nprow, &g->npcol, &g->myrow, &g->mycol);
    int root_map[1] = {0}, root = t->system;
    Cblacs_gridmap(&root, root_map, 1, 1, 1);
    g->ctxt_root = g->rank == 0 ? root : -1;
    g->nb = nb;
    return 1;
}

static void grid_close(test_grid *t)
{
    Cblacs_gridexit(t->g.ctxt);
    if (t->g.rank == 0)
        Cblacs_gridexit(t->g.ctxt_root);
    Cfree_blacs_system_handle(t->system);
    MPI_Comm_free(&t->g.comm);
}

/* ---- What runs on each grid ---- */

/* n = 1, 2, nb-1, nb, nb+1 and two odd sizes, each once. */
static int sizes_for(int nb, int *sizes)
{
    int wanted[] = {1, 2, nb - 1, nb, nb + 1, 2 * nb + 1, 37}, count = 0;
    for (size_t i = 0; i < sizeof wanted / sizeof *wanted; i++) {
        int seen = wanted[i] < 1;
        for (int j = 0; j < count; j++)
            seen |= sizes[j] == wanted[i];
        if (!seen)
            sizes[count++] = wanted[i];
    }
    return count;
}

static void test_sizes(const engine_grid *g)
{
    int sizes[8], count = sizes_for(g->nb, sizes);
    for (int i = 0; i < count; i++) {
        int n = sizes[i];
        test_gesv(g, n, 1, -1);
        test_gesv(g, n, 3, -1);
        test_posv(g, i % 2 ? 'U' : 'L', n, i % 2 ? 2 : 1, -1);
        test_gemm(g, "NTNT"[i % 4], "NNTT"[i % 4], n, n + 1, n + 2, 1.5, -0.5);
        test_syev(g, i % 2 ? 'V' : 'N', i % 3 ? 'L' : 'U', n);
        test_getrf(g, n, n + i % 3);
        test_getrf(g, n + 2, n);
        test_getrs(g, i % 2 ? 'T' : 'N', n, 2, -1);
    }
}

static void test_special(const engine_grid *g)
{
    int n = 2 * g->nb + 3;
    test_gesv(g, n, 2, g->nb);     /* a zero column: info = nb + 1 */
    test_posv(g, 'U', n, 1, n - 2); /* not positive definite */
    test_gemm(g, 'T', 'N', 7, 5, 0, 2.0, 3.0); /* k = 0: C := beta C */
    test_gemm(g, 'N', 'T', 9, 6, 11, 1.0, 0.0); /* C not read */
    test_gemm(g, 'n', 'c', 6, 9, 4, 0.0, 2.0); /* A and B not read, 'c' is 'T' */
    test_syev(g, 'v', 'u', n);
    test_syev_query(g, n);
    test_getrs(g, 'N', n, 1, 1);
    test_refusals(g);
}

/* Sizes up to 500, at the default block size. */
static void test_large(const engine_grid *g)
{
    test_gesv(g, 500, 3, -1);
    test_posv(g, 'L', 499, 2, -1);
    test_gemm(g, 'T', 'N', 300, 257, 500, -1.0, 0.25);
    test_syev(g, 'V', 'U', 301);
    test_getrf(g, 500, 333);
    test_getrs(g, 'T', 401, 3, -1);
}

/* A barrier that sleeps rather than spins: the ranks outside a small grid
 * leave the machine's cores to those inside. */
static void wait_for_world(void)
{
    MPI_Request done;
    int finished = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &done);
    while (MPI_Test(&done, &finished, MPI_STATUS_IGNORE) == MPI_SUCCESS && !finished)
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
}

int main(int argc, char **argv)
{
    static const int shapes[][2] = {{1, 1}, {1, 2}, {2, 1}, {2, 2}, {1, 4}, {4, 1}};
    static const int blocks[] = {2, 3, 64};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    int blacs_rank, blacs_size;
    Cblacs_pinfo(&blacs_rank, &blacs_size);
    if (world_rank == 0) {
        snprintf(case_name, sizeof case_name, "the table");
        int count = 0;
        for (const engine_routine *r = engine_routines; r->name != NULL; r++)
            count++;
        check(count == 6, "%d routines, not 6", count);
        check(engine_routine_find("dgesv") == NULL, "dgesv found among the engine's routines");
    }
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        int nprow = shapes[s][0], npcol = shapes[s][1];
        if (nprow * npcol > world_size)
            continue;
        double start = MPI_Wtime();
        for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++) {
            test_grid t;
            if (grid_open(&t, nprow, npcol, blocks[b])) {
                /* at nb 3, parts move in chunks of a few columns, as those
                 * over 4 MiB do */
                dist_set_chunk_limit(blocks[b] == 3 ? 97 : 0);
                test_sizes(&t.g);
                test_special(&t.g);
                dist_set_chunk_limit(0);
                if (blocks[b] == 64)
                    test_large(&t.g);
                grid_close(&t);
            }
            wait_for_world();
        }
        if (world_rank == 0)
            printf("routines_check: grid %dx%d done in %.2f s\n", nprow, npcol,
                   MPI_Wtime() - start);
    }
    int verdict[2] = {passed, failed};
    MPI_Bcast(verdict, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (world_rank == 0)
        printf("routines_check: %d ranks, %d checks passed, %d failed\n", world_size, verdict[0],
               verdict[1]);
    MPI_Finalize();
    return verdict[1] == 0 ? 0 : 1;
}
