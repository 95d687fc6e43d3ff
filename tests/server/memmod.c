/* memmod.c -- the library behind memmod.idl: routines that write and read
 * the memory of a call that no request fills, for the server's memory tests. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void mem_fill(const char *gate, int n, double value, double *w, double *sum);
void mem_peek(int n, int inc, const double *x, const double *w, double *found);

/* Tells the test this worker's pid, then waits for the gate. */
static void hold(const char *gate)
{
    char started[4096], pid[32];
    snprintf(started, sizeof started, "%s.started.tmp", gate);
    int fd = open(started, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
        int len = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
        if (write(fd, pid, (size_t)len) != len) len = -1;
        close(fd);
        char done[4096];
        snprintf(done, sizeof done, "%s.started", gate);
        if (len > 0) rename(started, done); /* whole, or not there */
    }
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 60000 && access(gate, F_OK) != 0; i++) nanosleep(&ms, NULL);
}

void mem_fill(const char *gate, int n, double value, double *w, double *sum)
{
    double s = 0;
    for (int i = 0; i < n; i++) w[i] = value;
    if (gate[0] != '\0') hold(gate);
    for (int i = 0; i < n; i++) s += w[i];
    *sum = s;
}

void mem_peek(int n, int inc, const double *x, const double *w, double *found)
{
    double most = 0;
    long extent = n > 0 ? 1 + (long)(n - 1) * inc : 0;
    for (long i = 0; i < extent; i++)
        if (inc > 0 && i % inc != 0 && fabs(x[i]) > most) most = fabs(x[i]);
    for (int i = 0; i < n; i++)
        if (fabs(w[i]) > most) most = fabs(w[i]);
    *found = most;
}
