/* sdpa_solve.h -- one SDPA 7.3 solve of an SDPA-format problem, isolated in
 * a child process (the library exits on bad input and keeps global state). */
#ifndef NUMRPC_STUBS_SDPA_SOLVE_H
#define NUMRPC_STUBS_SDPA_SOLVE_H

#include "stubmod.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SDPA_PHASE_MAX 16

typedef struct sdpa_result {
    double primal, dual;           /* objective values (SDPA's sign convention) */
    int phase;                     /* SDPA::PhaseType: 7 = pdOPT, 3 = pdFEAS ... */
    char phase_name[SDPA_PHASE_MAX]; /* "pdOPT", "pdFEAS", ...                  */
    int iterations;
    double solve_seconds;          /* SDPA's own timer                        */
    double total_seconds;          /* read + solve + write, in the child      */
    char message[512];             /* why it failed (SDPA's own words)        */
} sdpa_result;

/* Solves the problem read from problem_path, or (problem_path NULL) from the
 * remote file rf through a stdio stream; param_path (may be NULL or a file
 * that does not exist: SDPA's defaults) holds SDPA's parameters;
 * solution_path (NULL = none) receives objective values and the X and Y
 * matrices.  Returns 0 with *out filled, or -1 with out->message saying
 * why (bad file, SDPA stopped, no memory).  Runs SDPA in a child process
 * that dies with the caller; the caller's process is never touched. */
int sdpa_solve_isolated(const char *problem_path, numrpc_rfile *rf, const char *param_path,
                        const char *solution_path, sdpa_result *out);
/* Solves after this call hand each iteration SDPA prints to fn, in the
 * child ("iteration I: primal P dual D gap G mu M", fraction -1): the
 * server's stub_services.progress.  NULL (the default): none. */
typedef void (*sdpa_progress_fn)(double fraction, const char *message);
void sdpa_solve_set_progress(sdpa_progress_fn fn);

#ifdef __cplusplus
}
#endif

#endif
