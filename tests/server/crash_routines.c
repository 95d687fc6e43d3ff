/* crash_routines.c -- the library behind crashmod.idl: routines that fail as
 * badly as a real library can, for the isolation tests. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

void crash_segv(int how);
void crash_abort(int how);
void add_one(int n, int *result);
void scribble(double *a, int n, int how);
void poke(double *a, int n);
void hold_sum(const double *a, int n, const char *path, double *sum);
void speak(int flood, int say, int how);

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

void hold_sum(const double *a, int n, const char *path, double *sum)
{
    char started[4096];
    snprintf(started, sizeof started, "%s.started", path);
    int fd = open(started, O_WRONLY | O_CREAT, 0600);
    if (fd >= 0) close(fd);
    for (int i = 0; i < 1000 && access(path, F_OK) != 0; i++) nanosleep(&(struct timespec){0, 10000000}, NULL);
    double s = 0;
    for (int i = 0; i < n; i++) s += a[i];
    *sum = s;
}

/* Writes flood KiB of numbered filler lines to stderr, then (say) a line to
 * stdout and one to stderr, then (how) dies of SIGSEGV even under a
 * sanitizer, whose own handler would add its report to the words. */
void speak(int flood, int say, int how)
{
    char line[64];
    for (int i = 0; i < flood * 16; i++) {
        int n = snprintf(line, sizeof line, "filler line %08d of a routine that floods its stderr....\n", i);
        if (n > 0 && fwrite(line, 1, (size_t)n, stderr) != (size_t)n) break;
    }
    if (say) {
        printf("words one: the routine is about to fail\n");
        fputs("words two: \x1b[31mgoodbye\n", stderr);
    }
    if (how) {
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
    }
}
