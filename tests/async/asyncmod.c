/* asyncmod.c -- the routines behind asyncmod.idl (test-only): immediate
 * answers, a hold released by a file the test creates, a crash, an exit. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void amod_add(int a, int b, int *sum);
void amod_hold(const char *path, int value, int *result);
void amod_scale(int n, double factor, double *x, int *pid);
void amod_fail(int how);

void amod_add(int a, int b, int *sum)
{
    *sum = a + b;
}

void amod_hold(const char *path, int value, int *result)
{
    char started[4096], tmp[4200], pid[32];
    snprintf(started, sizeof started, "%s.started", path);
    snprintf(tmp, sizeof tmp, "%s.tmp%d", started, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
        int n = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
        if (write(fd, pid, (size_t)n) != n) n = -1;
        close(fd);
        rename(tmp, started); /* the test sees the pid whole or not at all */
    }
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 60000 && access(path, F_OK) != 0; i++) nanosleep(&ms, NULL);
    *result = value + 1;
}

void amod_scale(int n, double factor, double *x, int *pid)
{
    for (int i = 0; i < n; i++) x[i] *= factor;
    *pid = (int)getpid();
}

void amod_fail(int how)
{
    if (how == 1) raise(SIGSEGV);
    if (how == 2) _exit(3);
}
