/* ftest.c -- the routine behind ftest.idl: echoes its scalars back so a
 * test can see every type arrive with its value. */
#include <complex.h>
#include <stdio.h>
#include <string.h>

void fecho(const char *s, char c, long l, float x, double complex z, char *out, long *lout,
           double *sum, float *v, int n);

void fecho(const char *s, char c, long l, float x, double complex z, char *out, long *lout,
           double *sum, float *v, int n)
{
    char buf[80];
    int len = snprintf(buf, sizeof buf, "%.60s|%c", s, c); /* at most 62 characters */
    memset(out, ' ', 64);
    memcpy(out, buf, (size_t)len);
    *lout = 2 * l;
    *sum = (double)x + creal(z) + cimag(z);
    for (int i = 0; i < n; i++) v[i] *= 2;
}
