/* sdpa_module.c -- the routines of the sdpa stub module (stubs/sdpa.idl):
 * SDPA on a staged file or on a remote file, each solve in a child process. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sdpa_solve.h"
#include "numrpc.h"
#include "stubmod.h"

/* Set by the server when it loads the module (stubmod.h). */
__attribute__((visibility("default"))) const stub_services *numrpc_stub_services;

void numrpc_sdpa_ship(char *problem, char *param, int want_solution, char *solution,
                      double *primal, double *dual, char *phase, int *phase_code,
                      int *iterations, double *solve_seconds);
void numrpc_sdpa_rfile(numrpc_rfile *problem, char *param, int want_solution, char *solution,
                       double *primal, double *dual, char *phase, int *phase_code,
                       int *iterations, double *solve_seconds);

static void fail(int code, const char *detail)
{
    if (numrpc_stub_services) numrpc_stub_services->fail(code, detail);
}

/* SDPA's iterations reach a caller that asked for progress (stubmod.h:
 * stub_services.progress; nothing without the services). */
static void report_iterations(void)
{
    sdpa_solve_set_progress(numrpc_stub_services ? numrpc_stub_services->progress : NULL);
}

/* Copies a result out, or reports the failure: a problem SDPA cannot read
 * is the caller's error (EINVAL) with SDPA's own words. */
static void finish(int rc, const sdpa_result *r, double *primal, double *dual, char *phase,
                   int *phase_code, int *iterations, double *solve_seconds)
{
    if (rc != 0) {
        char detail[600];
        snprintf(detail, sizeof detail, "sdpa: %s", r->message);
        fail(NUMRPC_EINVAL, detail);
        return;
    }
    *primal = r->primal;
    *dual = r->dual;
    /* SDPA pads its phase names with blanks. */
    size_t n = strcspn(r->phase_name, " ");
    if (n > 15) n = 15;
    memcpy(phase, r->phase_name, n);
    phase[n] = '\0';
    *phase_code = r->phase;
    *iterations = r->iterations;
    *solve_seconds = r->solve_seconds;
}

void numrpc_sdpa_ship(char *problem, char *param, int want_solution, char *solution,
                      double *primal, double *dual, char *phase, int *phase_code,
                      int *iterations, double *solve_seconds)
{
    sdpa_result r;
    report_iterations();
    if (access(problem, R_OK) != 0) {
        fail(NUMRPC_EINVAL, "sdpa: no problem file arrived");
        return;
    }
    int rc = sdpa_solve_isolated(problem, NULL, param, want_solution ? solution : NULL, &r);
    finish(rc, &r, primal, dual, phase, phase_code, iterations, solve_seconds);
}

void numrpc_sdpa_rfile(numrpc_rfile *problem, char *param, int want_solution, char *solution,
                       double *primal, double *dual, char *phase, int *phase_code,
                       int *iterations, double *solve_seconds)
{
    sdpa_result r;
    report_iterations();
    int rc = sdpa_solve_isolated(NULL, problem, param, want_solution ? solution : NULL, &r);
    finish(rc, &r, primal, dual, phase, phase_code, iterations, solve_seconds);
}
