/* typed_calls_c.h -- the C side of typed_call_test: calls made by C code,
 * whose arguments the C11 _Generic tags carry (typed_calls_c.c). */
#ifndef NUMRPC_TESTS_TYPED_CALLS_C_H
#define NUMRPC_TESTS_TYPED_CALLS_C_H

#include "numrpc.h"

#ifdef __cplusplus
#include <complex>
typedef std::complex<double> c_dcomplex;
typedef std::complex<float> c_scomplex;
extern "C" {
#else
#include <complex.h>
typedef double complex c_dcomplex;
typedef float complex c_scomplex;
#endif

int c_zgemm_by_value(int n, const c_dcomplex *a, const c_dcomplex *b, c_dcomplex *c, c_dcomplex alpha,
                     c_dcomplex beta);
int c_zgemm_by_pointer(int n, const c_dcomplex *a, const c_dcomplex *b, c_dcomplex *c, c_dcomplex alpha,
                       c_dcomplex beta);
int c_zscal_by_value(int n, c_dcomplex alpha, c_dcomplex *x);
int c_cscal_float_complex(int n, c_scomplex alpha, c_scomplex *x);
int c_zscal_real_alpha(int n, double alpha, c_dcomplex *x);
int c_dscal_int_literal(int n, double *x);
int c_dscal_long_n(long n, double *x);
int c_dscal_float_array(int n, float *x);
int c_dscal_int_array(int n, int *x);
int c_dscal_double_n(double n, double *x);
int c_dscal_huge_n(double *x);
int c_dscal_extra(int n, double *x);
int c_dscal_missing(int n, double *x);
int c_zscal_struct(int n, c_dcomplex *x);
int c_dscal_handle(int n, numrpc_data *h);
int c_zscal_async(int n, c_dcomplex alpha, c_dcomplex *x);
int c_dscal_async_float_array(int n, float *x, int *id);

#ifdef __cplusplus
}
#endif
#endif
