/* asyncmod.c -- the routines behind asyncmod.idl (test-only): immediate
 * answers, a hold (sleeping or computing) released by a file the test
 * creates, a crash, an exit. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void amod_add(int a, int b, int *sum);
void amod_hold(const char *path, int value, int *result);
void amod_spin(const char *path, int value, int *result);
void amod_scale(int n, double factor, double *x, int *pid);
void amod_fail(int how);

void amod_add(int a, int b, int *sum)
{
    *sum = a + b;
}

/* Writes the worker's pid to path.started (whole or not at all). */
static void announce_start(const char *path)
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
}

void amod_hold(const char *path, int value, int *result)
{
    announce_start(path);
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 60000 && access(path, F_OK) != 0; i++) nanosleep(&ms, NULL);
    *result = value + 1;
}

void amod_spin(const char *path, int value, int *result)
{
    announce_start(path);
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile double x = 1.0;
    do {
        for (int i = 0; i < 100000; i++) x = x * 1.0000001 + 1e-9;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (access(path, F_OK) != 0 && now.tv_sec - t0.tv_sec < 60);
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
