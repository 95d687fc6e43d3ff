/* error.h -- one way to report a failure inside numrpc: an error code from
 * numrpc.h's list plus a detail string for the user. */
#ifndef NUMRPC_COMMON_ERROR_H
#define NUMRPC_COMMON_ERROR_H

#include "numrpc.h"

#define ERR_DETAIL_MAX 512

/* A failure report.  Owned by whoever declared it (usually the stack). */
typedef struct err {
    int code;                    /* NUMRPC_OK or a negative numrpc_error */
    char detail[ERR_DETAIL_MAX]; /* "" when code is NUMRPC_OK            */
} err_t;

/* Resets *e to success. */
void err_clear(err_t *e);
/* Records code and a printf-style detail in *e (e may be NULL); returns
 * code so that a failure path can `return err_set(e, ...)`. */
int err_set(err_t *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefixes the existing detail with "prefix: " (keeps the code). */
void err_prefix(err_t *e, const char *prefix);

/* Broken internal invariant: print and abort.  Never for network input. */
#define NR_ASSERT(cond)                                                        \
    do {                                                                       \
        if (!(cond)) err_panic(__FILE__, __LINE__, #cond);                     \
    } while (0)
void err_panic(const char *file, int line, const char *what)
    __attribute__((noreturn));

#endif
