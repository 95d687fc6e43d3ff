/* error.c -- the system-wide error list (numrpc_strerror, numrpc_errname,
 * numrpc_error_valid) and the err_t code + detail reports. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *numrpc_strerror(int code)
{
    switch (code) {
#define STRERROR_CASE(name, value, msg)                                        \
    case value:                                                                \
        return msg;
        NUMRPC_ERROR_LIST(STRERROR_CASE)
#undef STRERROR_CASE
    default:
        return "unknown error";
    }
}

const char *numrpc_errname(int code)
{
    switch (code) {
#define ERRNAME_CASE(name, value, msg)                                         \
    case value:                                                                \
        return "NUMRPC_" #name;
        NUMRPC_ERROR_LIST(ERRNAME_CASE)
#undef ERRNAME_CASE
    default:
        return "NUMRPC_UNKNOWN";
    }
}

int numrpc_error_valid(int code)
{
    switch (code) {
#define VALID_CASE(name, value, msg)                                           \
    case value:                                                                \
        return value != NUMRPC_EPENDING;
        NUMRPC_ERROR_LIST(VALID_CASE)
#undef VALID_CASE
    default:
        return 0;
    }
}

void err_clear(err_t *e)
{
    e->code = NUMRPC_OK;
    e->detail[0] = '\0';
}

int err_set(err_t *e, int code, const char *fmt, ...)
{
    if (e == NULL) return code;
    e->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->detail, sizeof e->detail, fmt, ap);
    va_end(ap);
    return code;
}

void err_prefix(err_t *e, const char *prefix)
{
    char old[ERR_DETAIL_MAX];
    memcpy(old, e->detail, sizeof old);
    int n = snprintf(e->detail, sizeof e->detail, "%s: ", prefix);
    if (n > 0 && (size_t)n < sizeof e->detail)
        snprintf(e->detail + n, sizeof e->detail - (size_t)n, "%.*s", (int)(sizeof e->detail - (size_t)n - 1), old);
}

void err_panic(const char *file, int line, const char *what)
{
    fprintf(stderr, "numrpc: internal invariant broken at %s:%d: %s\n", file,
            line, what);
    abort();
}
