/* sdpa_remote.c -- sdpa-remote: SDPA on a numrpc server, the problem read
 * from this machine's file on demand (--mode rfile) or shipped whole (ship). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "numrpc.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int usage(void)
{
    fprintf(stderr, "usage: sdpa-remote PROBLEM.dat-s [--mode rfile|ship] [--param FILE] "
                    "[--solution FILE]\n"
                    "  the server: NUMRPC_SERVER=host:port (or a numrpc:// URL in --server URL)\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *problem = NULL, *param = NULL, *solution = NULL, *mode = "rfile";
    const char *server = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) mode = argv[++i];
        else if (strcmp(argv[i], "--param") == 0 && i + 1 < argc) param = argv[++i];
        else if (strcmp(argv[i], "--solution") == 0 && i + 1 < argc) solution = argv[++i];
        else if (strcmp(argv[i], "--server") == 0 && i + 1 < argc) server = argv[++i];
        else if (argv[i][0] != '-' && problem == NULL) problem = argv[i];
        else return usage();
    }
    if (problem == NULL || (strcmp(mode, "rfile") != 0 && strcmp(mode, "ship") != 0)) return usage();
    char routine[600];
    snprintf(routine, sizeof routine, "%s%ssdpa_%s", server ? server : "", server ? "/" : "", mode);

    double primal = 0, dual = 0, solve_s = 0;
    char phase[16] = "";
    int code = 0, iterations = 0;
    double t0 = now();
    /* The remote call: this one line replaces the local SDPA run. */
    int rc = numrpc_call(routine, problem, param, solution != NULL, solution, &primal, &dual, phase, &code, &iterations, &solve_s);
    double wall = now() - t0;
    if (rc != NUMRPC_OK) {
        fprintf(stderr, "sdpa-remote: %s: %s\n", numrpc_strerror(rc), numrpc_last_error_detail());
        return 1;
    }
    numrpc_call_info info;
    numrpc_last_call_info(&info);
    printf("phase.value  = %s\n", phase);
    printf("objValPrimal = %+.16e\nobjValDual   = %+.16e\n", primal, dual);
    printf("iteration    = %d\n", iterations);
    printf("solve_seconds = %.6f\ncompute_seconds = %.6f\nwall_seconds = %.6f\n", solve_s,
           info.compute_seconds, wall);
    printf("send_seconds = %.6f\nreceive_seconds = %.6f\n", info.send_seconds, info.receive_seconds);
    printf("bytes_sent = %llu\nbytes_received = %llu\n", (unsigned long long)info.bytes_sent,
           (unsigned long long)info.bytes_received);
    return 0;
}
