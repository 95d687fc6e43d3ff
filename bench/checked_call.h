/* checked_call.h -- calls whose answers are checked: dcopy and dgemm of one
 * size on inputs made once, compared with the same routine of local BLAS;
 * their outcomes' short names. */
#ifndef NUMRPC_BENCH_CHECKED_CALL_H
#define NUMRPC_BENCH_CHECKED_CALL_H

typedef enum checked_kind { CHECKED_DCOPY = 0, CHECKED_DGEMM = 1 } checked_kind;

/* One call and its expected answer.  Every buffer is malloc'd by
 * checked_case_init and freed by checked_case_free. */
typedef struct checked_case {
    checked_kind kind;
    int n;         /* dcopy: elements; dgemm: the order of the matrices  */
    double *a, *b; /* inputs: dcopy's x (b unused); dgemm's a and b      */
    double *out;   /* dcopy's y, dgemm's c: cleared before every call    */
    double *want;  /* the local answer (dcopy: a itself, not a copy)     */
    long out_len;  /* elements of out and want                           */
} checked_case;

/* Inputs from seed, and the local answer.  0, or -1 when memory ran out. */
int checked_case_init(checked_case *c, checked_kind kind, int n, unsigned seed);
void checked_case_free(checked_case *c);

/* The blocking call (through whatever numrpc_init or the environment set):
 * the numrpc result; *wrong is 1 when the call succeeded with an answer
 * other than the local one, else 0. */
int checked_case_call(checked_case *c, int *wrong);
/* After a successful call: 1 when out differs from the local answer. */
int checked_case_wrong(const checked_case *c);

/* A call's outcome for tables: "OK", "ETIMEDOUT" (numrpc_errname less its
 * NUMRPC_ prefix). */
const char *checked_code_name(int code);

#endif
