/* corba_client.h -- a C interface to the omniORB baseline client, so that C
 * benchmarks can run CORBA calls beside numrpc calls in the same loop. */
#ifndef NUMRPC_CORBA_CLIENT_H
#define NUMRPC_CORBA_CLIENT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Connects to the server whose IOR is in ior_file (again after a close, to
 * another server).  Returns 0, or -1 with a message in err. */
int corba_client_open(const char *ior_file, char *err, size_t errlen);
void corba_client_close(void);

/* Each returns 0, or -1 with the CORBA exception's name in corba_last_error. */
int corba_ping(void);
/* Sends x[0..n) and stores the copy the server returns in y. */
int corba_dcopy(const double *x, double *y, size_t n);
/* One-way: sends x[0..n); *ack = the server's x[0] + x[n/2] + x[n-1]. */
int corba_sink(const double *x, size_t n, double *ack);
/* The Linpack calls, with numrpc's arguments: a is lda x n, column-major. */
int corba_linpack(const double *a, int lda, int n, int *ipvt, double *b, int *info);
int corba_dgefa(double *a, int lda, int n, int *ipvt, int *info);
int corba_dgesl(const double *a, int lda, int n, const int *ipvt, double *b, int job);
const char *corba_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
