/* args.c -- an engine call's arguments by position and a refused call
 * reported the same way on every rank (args.h). */
#include "args.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "numrpc.h"

int32_t args_int(const engine_call *c, int i)
{
    return *(const int32_t *)c->argv[i];
}

double args_double(const engine_call *c, int i)
{
    return *(const double *)c->argv[i];
}

char args_char(const engine_call *c, int i)
{
    return *(const char *)c->argv[i];
}

double *args_doubles(const engine_call *c, int i)
{
    return (double *)c->argv[i];
}

int32_t *args_ints(const engine_call *c, int i)
{
    return (int32_t *)c->argv[i];
}

void args_set_int(engine_call *c, int i, int32_t value)
{
    if (c->argv[i] != NULL)
        *(int32_t *)c->argv[i] = value;
}

int args_char_is(char ch, const char *allowed)
{
    return ch != '\0' && strchr(allowed, toupper((unsigned char)ch)) != NULL;
}

int args_fail(engine_call *c, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->detail, sizeof c->detail, fmt, ap);
    va_end(ap);
    c->code = code;
    return -1;
}

int args_check_count(engine_call *c, const char *routine, const char *name, int32_t value)
{
    if (value >= 0)
        return 0;
    return args_fail(c, NUMRPC_EINVAL, "%s: %s = %d must not be negative", routine, name,
                     (int)value);
}

int args_check_ld(engine_call *c, const char *routine, const char *name, int32_t ld,
                  int32_t rows)
{
    int32_t least = rows > 1 ? rows : 1;
    if (ld >= least)
        return 0;
    return args_fail(c, NUMRPC_EINVAL, "%s: %s = %d must be at least max(1, %d) = %d", routine,
                     name, (int)ld, (int)rows, (int)least);
}

int args_check_system(engine_call *c, const char *routine, int32_t n, int32_t nrhs, int32_t lda, int32_t ldb)
{
    return args_check_count(c, routine, "n", n) || args_check_count(c, routine, "nrhs", nrhs) ||
                   args_check_ld(c, routine, "lda", lda, n) || args_check_ld(c, routine, "ldb", ldb, n)
               ? -1
               : 0;
}

int args_check_char(engine_call *c, const char *routine, const char *name, char ch,
                    const char *allowed)
{
    if (args_char_is(ch, allowed))
        return 0;
    char shown[8];
    if (ch >= 0x20 && ch < 0x7f)
        snprintf(shown, sizeof shown, "'%c'", ch);
    else
        snprintf(shown, sizeof shown, "%d", (int)(unsigned char)ch);
    return args_fail(c, NUMRPC_EINVAL, "%s: %s = %s must be one of '%s' (either case)", routine,
                     name, shown, allowed);
}

int args_fail_memory(engine_call *c, const char *routine, int m, int n)
{
    return args_fail(c, NUMRPC_ENOMEM,
                     "%s: a rank cannot hold its part of a %d x %d matrix (out of memory, or "
                     "over 2^31 elements on one rank)",
                     routine, m, n);
}

int args_check_info(engine_call *c, const char *routine, int info)
{
    if (info >= 0)
        return 0;
    return args_fail(c, NUMRPC_EINTERNAL, "%s: ScaLAPACK refused its argument %d", routine, -info);
}
