/* expr.h -- shape and complexity expressions: a tiny stack bytecode over the
 * scalar arguments of a call, evaluated with overflow checks. */
#ifndef NUMRPC_COMMON_EXPR_H
#define NUMRPC_COMMON_EXPR_H

#include <stdint.h>

#include "error.h"

/* Opcodes.  A program is a sequence of 64-bit words: an opcode, followed by
 * one operand word for EXPR_CONST (the value) and EXPR_ARG (the parameter
 * index).  An empty program means "absent" (the owner supplies a default). */
enum expr_op {
    EXPR_CONST = 1, /* push operand                               */
    EXPR_ARG = 2,   /* push the value of scalar parameter operand */
    EXPR_ADD = 3,
    EXPR_SUB = 4,
    EXPR_MUL = 5,
    EXPR_DIV = 6, /* truncating; division by zero is an error   */
    EXPR_MOD = 7,
    EXPR_NEG = 8,
    EXPR_MIN = 9,
    EXPR_MAX = 10,
    EXPR_POW = 11, /* integer power, exponent >= 0              */
    /* Comparisons and logic give 1 or 0 (for shapes that depend on a char
     * argument, e.g. LAPACK's jobz). */
    EXPR_EQ = 12,
    EXPR_NE = 13,
    EXPR_LT = 14,
    EXPR_LE = 15,
    EXPR_GT = 16,
    EXPR_GE = 17,
    EXPR_AND = 18, /* 1 when both are nonzero                   */
    EXPR_OR = 19,  /* 1 when either is nonzero                  */
    EXPR_COND = 20 /* c a b -> c != 0 ? a : b (pops three; both
                      branches are evaluated)                   */
};
#define EXPR_LAST_OP EXPR_COND

#define EXPR_MAX_WORDS 256 /* longest program accepted from the wire */
#define EXPR_MAX_STACK 32

typedef struct expr {
    uint32_t nwords;
    int64_t *words; /* malloc'd; owned by the expr (freed by expr_free) */
} expr_t;

/* Reads the integer value of scalar parameter `index`; returns 0 on
 * success or a numrpc error code with err filled. */
typedef int (*expr_arg_fn)(void *ctx, uint32_t index, int64_t *value,
                           err_t *err);

/* Evaluates e in 64-bit integers; any overflow, division by zero or negative
 * power is an error (NUMRPC_EINVAL), reported in err. */
int expr_eval_int(const expr_t *e, expr_arg_fn arg, void *ctx, int64_t *out,
                  err_t *err);
/* Evaluates e in doubles (for complexity: n^3 may exceed 64 bits). */
int expr_eval_real(const expr_t *e, expr_arg_fn arg, void *ctx, double *out,
                   err_t *err);

/* Checks that e is well formed: known opcodes, the stack never underflows
 * or exceeds EXPR_MAX_STACK, exactly one value is left, and every EXPR_ARG
 * index is < nparams.  For programs that arrive from the wire. */
int expr_validate(const expr_t *e, uint32_t nparams, err_t *err);

/* Writes e in infix form ("lda", "n*n+2", "max(1,n)") into buf, using
 * names[i] for parameter i. */
void expr_render(const expr_t *e, const char *const *names, char *buf,
                 size_t size);

/* Building programs (used by the IDL compiler).  Each returns 0 or
 * NUMRPC_ENOMEM. */
int expr_append(expr_t *e, int64_t word);
int expr_concat(expr_t *dst, const expr_t *src);
void expr_free(expr_t *e);

#endif
