/* crash_routines.c -- the library behind crashmod.idl: routines that fail as
 * badly as a real library can, for the isolation tests. */
#include <signal.h>
#include <stdlib.h>

void crash_segv(int how);
void crash_abort(int how);
void add_one(int n, int *result);

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
