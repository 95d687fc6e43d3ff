/* remote_solve.c -- a user's program built against an installed numrpc
 * (pkg-config): solves A x = b remotely in one line and checks it. */
#include <math.h>
#include <numrpc.h>
#include <stdio.h>

int main(void)
{
    enum { N = 40, LDA = 45 };
    static double a[LDA * N], a0[LDA * N], b[N], x[N];
    int ipvt[N], info = -1;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < LDA; i++)
            a[j * LDA + i] = a0[j * LDA + i] = (i == j ? N : 0) + sin(i + 3.0 * j);
    for (int i = 0; i < N; i++) b[i] = x[i] = cos(i);

    int rc = numrpc_call("linpack", a, LDA, N, ipvt, x, &info);
    if (rc != NUMRPC_OK) {
        fprintf(stderr, "linpack: %s: %s\n", numrpc_strerror(rc), numrpc_last_error_detail());
        return 1;
    }
    double worst = 0;
    for (int i = 0; i < N; i++) {
        double r = -b[i];
        for (int j = 0; j < N; j++) r += a0[j * LDA + i] * x[j];
        if (fabs(r) > worst) worst = fabs(r);
    }
    printf("remote linpack: info %d, max |Ax-b| = %.3g\n", info, worst);
    return info == 0 && worst < 1e-10 ? 0 : 1;
}
