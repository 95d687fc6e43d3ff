/* crash_routines.c -- the library behind crashmod.idl: routines that fail as
 * badly as a real library can, for the isolation tests. */
#include <signal.h>
#include <stdlib.h>

void crash_segv(int how);
void crash_abort(int how);
void add_one(int n, int *result);
void scribble(double *a, int n, int how);
void poke(double *a, int n);

void crash_segv(int how)
{
    if (how) raise(SIGSEGV); /* what a wild pointer does, without UB */
}

void crash_abort(int how)
{
    if (how) abort();
}

void add_one(int n, int *result)
{
    *result = n + 1;
}

void scribble(double *a, int n, int how)
{
    for (int i = 0; i < n; i++) a[i] = -1;
    if (how) raise(SIGSEGV);
}

void poke(double *a, int n)
{
    if (n > 0) ((volatile double *)a)[0] = 42; /* an IN array: the routine breaks its contract */
}
