/* sdpa_local.c -- sdpa-local: the standalone baseline, the same SDPA solve
 * (stubs/sdpa_solve.cc, a child process) on a local file. */
#include <stdio.h>
#include <time.h>

#include "sdpa_solve.h"

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: sdpa-local PROBLEM.dat-s [PARAM [SOLUTION]]\n");
        return 2;
    }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    sdpa_result r;
    int rc = sdpa_solve_isolated(argv[1], NULL, argc > 2 ? argv[2] : NULL, argc > 3 ? argv[3] : NULL, &r);
    clock_gettime(CLOCK_MONOTONIC, &b);
    if (rc != 0) {
        fprintf(stderr, "sdpa-local: %s\n", r.message);
        return 1;
    }
    printf("phase.value  = %s\nobjValPrimal = %+.16e\nobjValDual   = %+.16e\niteration    = %d\n",
           r.phase_name, r.primal, r.dual, r.iterations);
    printf("solve_seconds = %.6f\nwall_seconds = %.6f\n", r.solve_seconds,
           (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9);
    return 0;
}
