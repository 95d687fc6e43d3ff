/* progress_routines.c -- the routine of tests/progress/progressmod.idl:
 * spins, reporting progress through stub_services.progress, or garbage. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "slots.h"
#include "stubmod.h"

/* Set by the server when it loads the module (stubmod.h). */
__attribute__((visibility("default"))) const stub_services *numrpc_stub_services;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* This worker's own slot: the one shared page mapped writable (server/slots.c
 * names them "numrpc-slot"), or NULL when it cannot be found. */
static worker_slot *own_slot(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL) return NULL;
    char line[512];
    void *found = NULL;
    while (found == NULL && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[5];
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3) continue;
        if (strstr(line, "numrpc-slot") && perms[0] == 'r' && perms[1] == 'w' && hi - lo == SLOT_BYTES)
            found = (void *)lo;
    }
    fclose(f);
    return found;
}

/* Garbage straight into the slot: no NUL, NaN and huge times, the
 * shortest period, a sequence left odd. */
static int spoil_slot(void)
{
    worker_slot *s = own_slot();
    if (s == NULL) return 0;
    memset(s->progress_message, 'A', sizeof s->progress_message);
    s->progress_fraction = NAN;
    s->predicted = 1e300;
    s->began = NAN;
    s->progress_ms = 1;
    atomic_store(&s->progress_seq, 2);
    return 1;
}

void progressmod_tick(double seconds, int mode, int *reports)
{
    const stub_services *sv = numrpc_stub_services;
    double t0 = now(), next = t0;
    char junk[1000];
    memset(junk, 'x', sizeof junk);
    junk[3] = '\n';
    junk[4] = '\x01';
    *reports = 0;
    if (mode == 2 && !spoil_slot()) {
        *reports = -1; /* could not find it: the test says so */
        return;
    }
    for (int step = 0;; step++) {
        double t = now();
        if (t - t0 >= seconds) break;
        if (t < next || mode == 2) continue;
        next = t + 0.01;
        if (sv == NULL || sv->progress == NULL) continue;
        char line[64];
        snprintf(line, sizeof line, "step %d", step);
        if (mode == 1) {
            double bad[] = {NAN, 1e300, -5, INFINITY};
            sv->progress(bad[*reports % 4], junk); /* no NUL in 1000 bytes */
        } else {
            sv->progress((t - t0) / seconds, line);
        }
        (*reports)++;
    }
    if (mode != 2 && sv && sv->progress) sv->progress(1.0, "done");
}
