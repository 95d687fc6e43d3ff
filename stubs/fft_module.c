/* fft_module.c -- the routines of the fft stub module (stubs/fft.idl): FFTW 3
 * transforms in double and single precision, plans kept for the next calls. */
#include <stdio.h>
#include <string.h>

#include <fftw3.h>

#include "numrpc.h"
#include "stubmod.h"

/* Set by the server when it loads the module (stubmod.h). */
__attribute__((visibility("default"))) const stub_services *numrpc_stub_services;

/* FFTW's planner is not thread-safe; a worker is a process that runs one
 * call at a time, so its plans need no lock.  Plans are FFTW_ESTIMATE
 * (made without touching the arrays) and kept for the next calls of the
 * same shape: planning costs as much as the transform itself around
 * 64k points.  Kept plans hold their twiddle factors, so only sizes up to
 * FFT_CACHE_POINTS are kept, in FFT_CACHE_SLOTS slots per precision. */
#define FFT_CACHE_SLOTS 8
#define FFT_CACHE_POINTS (1 << 20)

enum fft_kind { FFT_C2C, FFT_R2C, FFT_C2R };

static void fail(int code, const char *detail)
{
    if (numrpc_stub_services) numrpc_stub_services->fail(code, detail);
}

/* Whether every size is at least 1 (FFTW's requirement); reports otherwise. */
static int sizes_valid(const char *routine, int n1, int n2)
{
    if (n1 >= 1 && n2 >= 1) return 1;
    char detail[128];
    snprintf(detail, sizeof detail, "%s: size %d x %d; a transform needs at least one point per dimension",
             routine, n1, n2);
    fail(NUMRPC_EINVAL, detail);
    return 0;
}

/* Whether sign is FFTW_FORWARD (-1) or FFTW_BACKWARD (+1); reports otherwise. */
static int sign_valid(const char *routine, int sign)
{
    if (sign == FFTW_FORWARD || sign == FFTW_BACKWARD) return 1;
    char detail[128];
    snprintf(detail, sizeof detail, "%s: sign is %d; use -1 (forward) or +1 (backward)", routine, sign);
    fail(NUMRPC_EINVAL, detail);
    return 0;
}

static void plan_missing(const char *routine)
{
    char detail[96];
    snprintf(detail, sizeof detail, "%s: FFTW made no plan for this size", routine);
    fail(NUMRPC_ESERVER, detail);
}

#define FFT_REAL double
#define FFT_COMPLEX fftw_complex
#define FFTW(name) fftw_##name
#define FFT_LOCAL(name) name##_double
#define FFT_C "z"
#define FFT_R "d"
#define FFT_C2C_1D numrpc_fft_zfft_1d
#define FFT_C2C_2D numrpc_fft_zfft_2d
#define FFT_R2C_1D numrpc_fft_dfft_r2c_1d
#define FFT_C2R_1D numrpc_fft_dfft_c2r_1d
#define FFT_R2C_2D numrpc_fft_dfft_r2c_2d
#define FFT_C2R_2D numrpc_fft_dfft_c2r_2d
#include "fft_precision.h"

#define FFT_REAL float
#define FFT_COMPLEX fftwf_complex
#define FFTW(name) fftwf_##name
#define FFT_LOCAL(name) name##_single
#define FFT_C "c"
#define FFT_R "s"
#define FFT_C2C_1D numrpc_fft_cfft_1d
#define FFT_C2C_2D numrpc_fft_cfft_2d
#define FFT_R2C_1D numrpc_fft_sfft_r2c_1d
#define FFT_C2R_1D numrpc_fft_sfft_c2r_1d
#define FFT_R2C_2D numrpc_fft_sfft_r2c_2d
#define FFT_C2R_2D numrpc_fft_sfft_c2r_2d
#include "fft_precision.h"

/* The kept plans go with the module (a server may unload it; so does a test
 * that loads it itself). */
__attribute__((destructor)) static void forget_all_plans(void)
{
    forget_plans_double();
    forget_plans_single();
}
