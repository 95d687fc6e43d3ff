/* typed_calls_c.c -- numrpc_call, numrpc_call_async and numrpc_call_pinned
 * from C, where _Generic tags each argument: the cases typed_call_test runs. */
#include <complex.h>

#include "numrpc.h"
#include "typed_calls_c.h"

int c_zgemm_by_value(int n, const double complex *a, const double complex *b, double complex *c,
                     double complex alpha, double complex beta)
{
    return numrpc_call("zgemm", 'N', 'N', n, n, n, alpha, a, n, b, n, beta, c, n);
}

int c_zgemm_by_pointer(int n, const double complex *a, const double complex *b, double complex *c,
                       double complex alpha, double complex beta)
{
    double al[2] = {creal(alpha), cimag(alpha)}, be[2] = {creal(beta), cimag(beta)}; /* as before: parts */
    return numrpc_call("zgemm", 'N', 'N', n, n, n, al, a, n, b, n, be, c, n);
}

int c_zscal_by_value(int n, double complex alpha, double complex *x)
{
    return numrpc_call("zscal", n, alpha, x, 1);
}

int c_cscal_float_complex(int n, float complex alpha, float complex *x)
{
    return numrpc_call("cscal", n, alpha, x, 1);
}

int c_zscal_real_alpha(int n, double alpha, double complex *x)
{
    return numrpc_call("zscal", n, alpha, x, 1); /* a real where a complex goes: imaginary part 0 */
}

int c_dscal_int_literal(int n, double *x)
{
    return numrpc_call("dscal", n, 2, x, 1);
}

int c_dscal_long_n(long n, double *x)
{
    return numrpc_call("dscal", n, 0.5f, x, 1L);
}

int c_dscal_float_array(int n, float *x)
{
    return numrpc_call("dscal", n, 2.0, x, 1);
}

int c_dscal_int_array(int n, int *x)
{
    return numrpc_call("dscal", n, 2.0, x, 1);
}

int c_dscal_double_n(double n, double *x)
{
    return numrpc_call("dscal", n, 2.0, x, 1);
}

int c_dscal_huge_n(double *x)
{
    return numrpc_call("dscal", 1L << 40, 2.0, x, 1);
}

int c_dscal_extra(int n, double *x)
{
    return numrpc_call("dscal", n, 2.0, x, 1, 7);
}

int c_dscal_missing(int n, double *x)
{
    return numrpc_call("dscal", n, 2.0, x);
}

struct c_pair {
    double re, im;
};

int c_zscal_struct(int n, double complex *x)
{
    struct c_pair alpha = {1, 2};
    return numrpc_call("zscal", n, alpha, x, 1);
}

int c_dscal_handle(int n, numrpc_data *h)
{
    return numrpc_call("dscal", n, 3.0, h, 1);
}

int c_zscal_async(int n, double complex alpha, double complex *x)
{
    int id = 0;
    int rc = numrpc_call_async(&id, "zscal", n, alpha, x, 1);
    return rc != NUMRPC_OK ? rc : numrpc_wait(id);
}

int c_dscal_async_float_array(int n, float *x, int *id)
{
    return numrpc_call_async(id, "dscal", n, 2.0, x, 1);
}
