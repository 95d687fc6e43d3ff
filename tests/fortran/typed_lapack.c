/* typed_lapack.c -- calls LAPACK through the typed header that
 * `numrpc describe --c-header lapack` generates (char and int by value). */
#include <math.h>
#include <stdio.h>

#include "numrpc_lapack.h"

int main(void)
{
    enum { N = 4, LDA = 6 };
    double a0[LDA * N], a[LDA * N], b[N], x[N];
    int ipiv[N], info = -1;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < LDA; i++) a0[j * LDA + i] = (i == j ? 10.0 : 1.0 / (1 + i + j));
    for (int i = 0; i < N; i++) b[i] = x[i] = i + 1;
    for (int k = 0; k < LDA * N; k++) a[k] = a0[k];
    if (numrpc_dgetrf(N, N, a, LDA, ipiv, &info) != NUMRPC_OK || info != 0) return 1;
    if (numrpc_dgetrs('N', N, 1, a, LDA, ipiv, x, N, &info) != NUMRPC_OK || info != 0) return 1;
    for (int i = 0; i < N; i++) {
        double r = -b[i];
        for (int j = 0; j < N; j++) r += a0[j * LDA + i] * x[j];
        if (fabs(r) > 1e-12) return 1;
    }
    puts("typed dgetrf/dgetrs solved the system");
    return 0;
}
