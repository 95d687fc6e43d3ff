/* fft_precision.h -- the fft module's six routines for one precision: included
 * by fft_module.c once for double (fftw_) and once for single (fftwf_). */

/* The includer defines:
 *   FFT_REAL, FFT_COMPLEX      the element types (double, fftw_complex)
 *   FFTW(name)                 FFTW's name for this precision (fftw_##name)
 *   FFT_LOCAL(name)            a file-local name for this precision
 *   FFT_C "z", FFT_R "d"       the routines' precision letters, for messages
 *   FFT_C2C_1D ... FFT_C2R_2D  the exported names stubs/fft.idl calls
 * and this file undefines them at its end, ready for the next precision. */

void FFT_C2C_1D(int n, FFT_COMPLEX *x, int sign);
void FFT_C2C_2D(int n1, int n2, FFT_COMPLEX *x, int sign);
void FFT_R2C_1D(int n, FFT_REAL *x, FFT_COMPLEX *y);
void FFT_C2R_1D(int n, FFT_COMPLEX *y, FFT_REAL *x);
void FFT_R2C_2D(int n1, int n2, FFT_REAL *x, FFT_COMPLEX *y);
void FFT_C2R_2D(int n1, int n2, FFT_COMPLEX *y, FFT_REAL *x);

/* Runs the plan once and destroys it; a plan FFTW could not make is the
 * server's failure. */
static void FFT_LOCAL(run_once)(FFTW(plan) plan, const char *routine)
{
    if (plan == NULL) {
        plan_missing(routine);
        return;
    }
    FFTW(execute)(plan);
    FFTW(destroy_plan)(plan);
}

/* The arrays are column-major and FFTW's row-major: an n1 x n2 array is
 * FFTW's n2 x n1, its fastest dimension (n1) last, the one r2c halves. */

void FFT_C2C_1D(int n, FFT_COMPLEX *x, int sign)
{
    const char *routine = FFT_C "fft_1d";
    if (!sizes_valid(routine, n, 1) || !sign_valid(routine, sign)) return;
    FFT_LOCAL(run_once)(FFTW(plan_dft_1d)(n, x, x, sign, FFTW_ESTIMATE), routine);
}

void FFT_C2C_2D(int n1, int n2, FFT_COMPLEX *x, int sign)
{
    const char *routine = FFT_C "fft_2d";
    if (!sizes_valid(routine, n1, n2) || !sign_valid(routine, sign)) return;
    FFT_LOCAL(run_once)(FFTW(plan_dft_2d)(n2, n1, x, x, sign, FFTW_ESTIMATE), routine);
}

void FFT_R2C_1D(int n, FFT_REAL *x, FFT_COMPLEX *y)
{
    const char *routine = FFT_R "fft_r2c_1d";
    if (!sizes_valid(routine, n, 1)) return;
    FFT_LOCAL(run_once)(FFTW(plan_dft_r2c_1d)(n, x, y, FFTW_ESTIMATE), routine);
}

/* c2r overwrites its input: y is the server's copy of the caller's array. */
void FFT_C2R_1D(int n, FFT_COMPLEX *y, FFT_REAL *x)
{
    const char *routine = FFT_R "fft_c2r_1d";
    if (!sizes_valid(routine, n, 1)) return;
    FFT_LOCAL(run_once)(FFTW(plan_dft_c2r_1d)(n, y, x, FFTW_ESTIMATE), routine);
}

void FFT_R2C_2D(int n1, int n2, FFT_REAL *x, FFT_COMPLEX *y)
{
    const char *routine = FFT_R "fft_r2c_2d";
    if (!sizes_valid(routine, n1, n2)) return;
    FFT_LOCAL(run_once)(FFTW(plan_dft_r2c_2d)(n2, n1, x, y, FFTW_ESTIMATE), routine);
}

void FFT_C2R_2D(int n1, int n2, FFT_COMPLEX *y, FFT_REAL *x)
{
    const char *routine = FFT_R "fft_c2r_2d";
    if (!sizes_valid(routine, n1, n2)) return;
    FFT_LOCAL(run_once)(FFTW(plan_dft_c2r_2d)(n2, n1, y, x, FFTW_ESTIMATE), routine);
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
