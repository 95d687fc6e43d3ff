/* dmmul.h -- the Ninf papers' example routine dmmul(n, A, B, C): C = A * B
 * for n x n column-major matrices, served by the blas stub module. */
#ifndef NUMRPC_STUBS_DMMUL_H
#define NUMRPC_STUBS_DMMUL_H

/* C := A * B; A, B and C are n x n, column-major, leading dimension n.
 * Does nothing for n <= 0. */
void dmmul(int n, double *A, double *B, double *C);

#endif
