/* fft_precision.h -- the fft module's six routines and plan cache for one
 * precision: included by fft_module.c for double (fftw_) and single (fftwf_). */

/* The includer defines:
 *   FFT_REAL, FFT_COMPLEX      the element types (double, fftw_complex)
 *   FFTW(name)                 FFTW's name for this precision (fftw_##name)
 *   FFT_LOCAL(name)            a file-local name for this precision
 *   FFT_C "z", FFT_R "d"       the routines' precision letters, for messages
 *   FFT_C2C_1D ... FFT_C2R_2D  the exported names stubs/fft.idl calls
 * and this file undefines them at its end, ready for the next precision.
 * fft_module.c defines enum fft_kind, FFT_CACHE_SLOTS, FFT_CACHE_POINTS,
 * sizes_valid, sign_valid and plan_missing. */

void FFT_C2C_1D(int n, FFT_COMPLEX *x, int sign);
void FFT_C2C_2D(int n1, int n2, FFT_COMPLEX *x, int sign);
void FFT_R2C_1D(int n, FFT_REAL *x, FFT_COMPLEX *y);
void FFT_C2R_1D(int n, FFT_COMPLEX *y, FFT_REAL *x);
void FFT_R2C_2D(int n1, int n2, FFT_REAL *x, FFT_COMPLEX *y);
void FFT_C2R_2D(int n1, int n2, FFT_COMPLEX *y, FFT_REAL *x);

/* A plan kept for the next calls of the same shape.  FFTW runs a plan on
 * other arrays (fftw_execute_dft and its kin) when they are aligned as the
 * planning ones were and in place exactly when those were: the alignments
 * are in the key, and a kind is always in place (c2c) or never (r2c, c2r). */
typedef struct {
    enum fft_kind kind;
    int rank, n1, n2, sign, align_in, align_out;
    FFTW(plan) plan; /* NULL: a free slot */
} FFT_LOCAL(cached_plan);

static FFT_LOCAL(cached_plan) FFT_LOCAL(cache)[FFT_CACHE_SLOTS];
static int FFT_LOCAL(next_slot); /* the slot replaced next (round robin) */

/* Destroys the kept plans (the module is being unloaded). */
static void FFT_LOCAL(forget_plans)(void)
{
    for (int i = 0; i < FFT_CACHE_SLOTS; i++)
        if (FFT_LOCAL(cache)[i].plan != NULL) FFTW(destroy_plan)(FFT_LOCAL(cache)[i].plan);
    memset(FFT_LOCAL(cache), 0, sizeof FFT_LOCAL(cache));
    FFT_LOCAL(next_slot) = 0;
}

/* A new FFTW_ESTIMATE plan (it does not touch the arrays), or NULL.  The
 * arrays are column-major and FFTW's row-major: an n1 x n2 array is FFTW's
 * n2 x n1, its fastest dimension (n1) last, the one r2c halves. */
static FFTW(plan) FFT_LOCAL(new_plan)(enum fft_kind kind, int rank, int n1, int n2, int sign,
                                      void *in, void *out)
{
    const int dims[2] = {rank == 2 ? n2 : n1, n1};
    const int *n = rank == 2 ? dims : dims + 1;
    switch (kind) {
    case FFT_C2C: return FFTW(plan_dft)(rank, n, in, out, sign, FFTW_ESTIMATE);
    case FFT_R2C: return FFTW(plan_dft_r2c)(rank, n, in, out, FFTW_ESTIMATE);
    case FFT_C2R: return FFTW(plan_dft_c2r)(rank, n, in, out, FFTW_ESTIMATE);
    }
    return NULL;
}

/* Runs the transform from in to out with a cached plan or a new one; a
 * new plan of up to FFT_CACHE_POINTS points replaces the oldest cached,
 * a larger one (planned in a small fraction of its run) is destroyed after. */
static void FFT_LOCAL(transform)(const char *routine, enum fft_kind kind, int rank, int n1, int n2,
                                 int sign, void *in, void *out)
{
    const int align_in = FFTW(alignment_of)(in), align_out = FFTW(alignment_of)(out);
    FFTW(plan) plan = NULL;
    int cached = 0;
    for (int i = 0; i < FFT_CACHE_SLOTS && plan == NULL; i++) {
        const FFT_LOCAL(cached_plan) *c = &FFT_LOCAL(cache)[i];
        if (c->plan != NULL && c->kind == kind && c->rank == rank && c->n1 == n1 && c->n2 == n2 &&
            c->sign == sign && c->align_in == align_in && c->align_out == align_out) {
            plan = c->plan;
            cached = 1;
        }
    }
    if (plan == NULL) {
        plan = FFT_LOCAL(new_plan)(kind, rank, n1, n2, sign, in, out);
        if (plan == NULL) {
            plan_missing(routine);
            return;
        }
        if ((long long)n1 * n2 <= FFT_CACHE_POINTS) {
            FFT_LOCAL(cached_plan) *slot = &FFT_LOCAL(cache)[FFT_LOCAL(next_slot)];
            if (slot->plan != NULL) FFTW(destroy_plan)(slot->plan);
            *slot = (FFT_LOCAL(cached_plan)){kind, rank, n1, n2, sign, align_in, align_out, plan};
            FFT_LOCAL(next_slot) = (FFT_LOCAL(next_slot) + 1) % FFT_CACHE_SLOTS;
            cached = 1;
        }
    }
    switch (kind) {
    case FFT_C2C: FFTW(execute_dft)(plan, in, out); break;
    case FFT_R2C: FFTW(execute_dft_r2c)(plan, in, out); break;
    case FFT_C2R: FFTW(execute_dft_c2r)(plan, in, out); break;
    }
    if (!cached) FFTW(destroy_plan)(plan);
}

void FFT_C2C_1D(int n, FFT_COMPLEX *x, int sign)
{
    const char *routine = FFT_C "fft_1d";
    if (sizes_valid(routine, n, 1) && sign_valid(routine, sign))
        FFT_LOCAL(transform)(routine, FFT_C2C, 1, n, 1, sign, x, x);
}

void FFT_C2C_2D(int n1, int n2, FFT_COMPLEX *x, int sign)
{
    const char *routine = FFT_C "fft_2d";
    if (sizes_valid(routine, n1, n2) && sign_valid(routine, sign))
        FFT_LOCAL(transform)(routine, FFT_C2C, 2, n1, n2, sign, x, x);
}

void FFT_R2C_1D(int n, FFT_REAL *x, FFT_COMPLEX *y)
{
    const char *routine = FFT_R "fft_r2c_1d";
    if (sizes_valid(routine, n, 1)) FFT_LOCAL(transform)(routine, FFT_R2C, 1, n, 1, FFTW_FORWARD, x, y);
}

/* c2r overwrites its input: y is the server's copy of the caller's array. */
void FFT_C2R_1D(int n, FFT_COMPLEX *y, FFT_REAL *x)
{
    const char *routine = FFT_R "fft_c2r_1d";
    if (sizes_valid(routine, n, 1)) FFT_LOCAL(transform)(routine, FFT_C2R, 1, n, 1, FFTW_BACKWARD, y, x);
}

void FFT_R2C_2D(int n1, int n2, FFT_REAL *x, FFT_COMPLEX *y)
{
    const char *routine = FFT_R "fft_r2c_2d";
    if (sizes_valid(routine, n1, n2)) FFT_LOCAL(transform)(routine, FFT_R2C, 2, n1, n2, FFTW_FORWARD, x, y);
}

void FFT_C2R_2D(int n1, int n2, FFT_COMPLEX *y, FFT_REAL *x)
{
    const char *routine = FFT_R "fft_c2r_2d";
    if (sizes_valid(routine, n1, n2)) FFT_LOCAL(transform)(routine, FFT_C2R, 2, n1, n2, FFTW_BACKWARD, y, x);
}

#undef FFT_REAL
#undef FFT_COMPLEX
#undef FFTW
#undef FFT_LOCAL
#undef FFT_C
#undef FFT_R
#undef FFT_C2C_1D
#undef FFT_C2C_2D
#undef FFT_R2C_1D
#undef FFT_C2R_1D
#undef FFT_R2C_2D
#undef FFT_C2R_2D
