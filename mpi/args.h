/* args.h -- an engine call's arguments by position (mpi/engine.h's argv) and
 * a refused call reported the same way on every rank. */
#ifndef NUMRPC_MPI_ARGS_H
#define NUMRPC_MPI_ARGS_H

#include <stdint.h>

#include "engine.h"

/* ---- Scalars: present on every rank ---- */
int32_t args_int(const engine_call *c, int i);
double args_double(const engine_call *c, int i);
char args_char(const engine_call *c, int i);

/* ---- Arrays: rank 0's block (owned by the engine), NULL on other ranks ---- */
double *args_doubles(const engine_call *c, int i);
int32_t *args_ints(const engine_call *c, int i);

/* An OUT int scalar, written where the engine gave it storage (rank 0). */
void args_set_int(engine_call *c, int i, int32_t value);

/* Whether ch is one of the letters of allowed, in either case. */
int args_char_is(char ch, const char *allowed);

/* ---- Checks: each returns 0, or -1 with the call refused (NUMRPC_EINVAL
 *      and a sentence naming routine and argument) ---- */
int args_check_count(engine_call *c, const char *routine, const char *name, int32_t value);
/* A leading dimension: ld >= max(1, rows). */
int args_check_ld(engine_call *c, const char *routine, const char *name, int32_t ld,
                  int32_t rows);
/* A system A X = B of order n with nrhs right-hand sides: both counts, and
 * lda, ldb >= max(1, n). */
int args_check_system(engine_call *c, const char *routine, int32_t n, int32_t nrhs, int32_t lda, int32_t ldb);
/* A job character: one of the letters of allowed (either case). */
int args_check_char(engine_call *c, const char *routine, const char *name, char ch,
                    const char *allowed);

/* A rank could not hold its part of an m x n matrix (NUMRPC_ENOMEM). */
int args_fail_memory(engine_call *c, const char *routine, int m, int n);
/* ScaLAPACK's info: 0 when it accepted the call (info >= 0, a result for
 * the caller), or -1 with NUMRPC_EINTERNAL when it refused an argument the
 * checks above let through. */
int args_check_info(engine_call *c, const char *routine, int info);

/* Sets c->code and c->detail (printf-style); returns -1.  Called alike on
 * every rank, from scalars every rank has, so that all return together. */
int args_fail(engine_call *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
