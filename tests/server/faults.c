/* faults.c -- the library behind faults.idl: routines that crash, abort,
 * spin, exhaust memory or wait for a file, for the server's isolation tests. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void faults_crash(int how);
void faults_abort(int how);
void faults_spin(int seconds);
void faults_hog(int mib);
void faults_hold(const char *path);

void faults_crash(int how)
{
    if (how) raise(SIGSEGV); /* what a wild pointer does, without UB */
}

void faults_abort(int how)
{
    if (how) abort();
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void faults_spin(int seconds)
{
    volatile unsigned long sink = 0;
    double end = now() + seconds;
    while (seconds < 0 || now() < end)
        for (int i = 0; i < 100000; i++) sink += (unsigned long)i;
}

void faults_hog(int mib)
{
    const size_t chunk = 16u << 20;
    for (int got = 0; got < mib; got += 16) {
        char *p = malloc(chunk);
        if (p == NULL) abort(); /* what most libraries do when memory runs out */
        memset(p, 1, chunk);    /* kept: the point is to run out */
    }
}

void faults_hold(const char *path)
{
    char started[4096];
    snprintf(started, sizeof started, "%s.started", path);
    int fd = open(started, O_WRONLY | O_CREAT, 0600);
    if (fd >= 0) close(fd);
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 60000 && access(path, F_OK) != 0; i++) nanosleep(&ms, NULL);
}
