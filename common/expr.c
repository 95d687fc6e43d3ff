/* expr.c -- evaluation, validation, rendering and building of the shape and
 * complexity bytecode. */
#include "expr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int op_takes_operand(int64_t op)
{
    return op == EXPR_CONST || op == EXPR_ARG;
}

static int op_pops(int64_t op)
{
    switch (op) {
    case EXPR_CONST:
    case EXPR_ARG:
        return 0;
    case EXPR_NEG:
        return 1;
    case EXPR_COND:
        return 3;
    default:
        return 2;
    }
}

static int apply_int(int64_t op, int64_t a, int64_t b, int64_t *r, err_t *err)
{
    switch (op) {
    case EXPR_ADD:
        if (__builtin_add_overflow(a, b, r)) goto overflow;
        return 0;
    case EXPR_SUB:
        if (__builtin_sub_overflow(a, b, r)) goto overflow;
        return 0;
    case EXPR_MUL:
        if (__builtin_mul_overflow(a, b, r)) goto overflow;
        return 0;
    case EXPR_DIV:
    case EXPR_MOD:
        if (b == 0)
            return err_set(err, NUMRPC_EINVAL, "division by zero in a size expression");
        if (a == INT64_MIN && b == -1) goto overflow;
        *r = op == EXPR_DIV ? a / b : a % b;
        return 0;
    case EXPR_MIN:
        *r = a < b ? a : b;
        return 0;
    case EXPR_MAX:
        *r = a > b ? a : b;
        return 0;
    case EXPR_POW: {
        if (b < 0)
            return err_set(err, NUMRPC_EINVAL, "negative exponent in a size expression");
        int64_t acc = 1;
        for (int64_t i = 0; i < b; i++) {
            if (__builtin_mul_overflow(acc, a, &acc)) goto overflow;
            if (acc == 0 || acc == 1) break;
        }
        *r = acc;
        return 0;
    }
    case EXPR_EQ: *r = a == b; return 0;
    case EXPR_NE: *r = a != b; return 0;
    case EXPR_LT: *r = a < b; return 0;
    case EXPR_LE: *r = a <= b; return 0;
    case EXPR_GT: *r = a > b; return 0;
    case EXPR_GE: *r = a >= b; return 0;
    case EXPR_AND: *r = a != 0 && b != 0; return 0;
    case EXPR_OR: *r = a != 0 || b != 0; return 0;
    default:
        return err_set(err, NUMRPC_EPROTO, "bad expression opcode %lld", (long long)op);
    }
overflow:
    return err_set(err, NUMRPC_EINVAL, "size expression overflows 64 bits");
}

static double apply_real(int64_t op, double a, double b)
{
    switch (op) {
    case EXPR_ADD: return a + b;
    case EXPR_SUB: return a - b;
    case EXPR_MUL: return a * b;
    case EXPR_DIV: return b == 0 ? 0 : a / b;
    /* In doubles throughout: a value beyond 64 bits must not be converted
     * back to an integer (undefined, and INT64_MIN % -1 traps). */
    case EXPR_MOD: return b == 0 ? 0 : fmod(a, b);
    case EXPR_MIN: return a < b ? a : b;
    case EXPR_MAX: return a > b ? a : b;
    case EXPR_POW: {
        double acc = 1;
        for (int i = 0; i < 64 && i < b; i++) acc *= a;
        return acc;
    }
    case EXPR_EQ: return a == b;
    case EXPR_NE: return a != b;
    case EXPR_LT: return a < b;
    case EXPR_LE: return a <= b;
    case EXPR_GT: return a > b;
    case EXPR_GE: return a >= b;
    case EXPR_AND: return a != 0 && b != 0;
    case EXPR_OR: return a != 0 || b != 0;
    default: return 0;
    }
}

/* The one evaluator: 64-bit integers with every overflow an error, or
 * doubles (for complexity, where n^3 may exceed 64 bits). */
static int evaluate(const expr_t *e, expr_arg_fn arg, void *ctx, int real, int64_t *iout,
                    double *dout, err_t *err)
{
    int64_t istack[EXPR_MAX_STACK];
    double dstack[EXPR_MAX_STACK];
    int sp = 0;
    for (uint32_t pc = 0; pc < e->nwords; pc++) {
        int64_t op = e->words[pc];
        if (op_takes_operand(op)) {
            if (pc + 1 >= e->nwords || sp >= EXPR_MAX_STACK)
                return err_set(err, NUMRPC_EPROTO, "malformed expression");
            int64_t operand = e->words[++pc];
            if (op == EXPR_ARG) {
                int rc = arg(ctx, (uint32_t)operand, &operand, err);
                if (rc != 0) return rc;
            }
            istack[sp] = operand;
            dstack[sp++] = (double)operand;
            continue;
        }
        if (sp < op_pops(op)) return err_set(err, NUMRPC_EPROTO, "malformed expression");
        if (op == EXPR_NEG) {
            dstack[sp - 1] = -dstack[sp - 1];
            if (!real && istack[sp - 1] == INT64_MIN)
                return err_set(err, NUMRPC_EINVAL, "size expression overflows 64 bits");
            istack[sp - 1] = -istack[sp - 1];
            continue;
        }
        if (op == EXPR_COND) {
            if (real) dstack[sp - 3] = dstack[sp - 3] != 0 ? dstack[sp - 2] : dstack[sp - 1];
            else istack[sp - 3] = istack[sp - 3] != 0 ? istack[sp - 2] : istack[sp - 1];
            sp -= 2;
            continue;
        }
        if (real) {
            dstack[sp - 2] = apply_real(op, dstack[sp - 2], dstack[sp - 1]);
        } else {
            int64_t r = 0;
            int rc = apply_int(op, istack[sp - 2], istack[sp - 1], &r, err);
            if (rc != 0) return rc;
            istack[sp - 2] = r;
        }
        sp--;
    }
    if (sp != 1) return err_set(err, NUMRPC_EPROTO, "malformed expression");
    if (real) *dout = dstack[0];
    else *iout = istack[0];
    return 0;
}

int expr_eval_int(const expr_t *e, expr_arg_fn arg, void *ctx, int64_t *out, err_t *err)
{
    return evaluate(e, arg, ctx, 0, out, NULL, err);
}

int expr_eval_real(const expr_t *e, expr_arg_fn arg, void *ctx, double *out, err_t *err)
{
    return evaluate(e, arg, ctx, 1, NULL, out, err);
}

int expr_validate(const expr_t *e, uint32_t nparams, err_t *err)
{
    if (e->nwords > EXPR_MAX_WORDS)
        return err_set(err, NUMRPC_EPROTO, "expression of %u words is too long", e->nwords);
    if (e->nwords == 0) return 0;
    int depth = 0;
    for (uint32_t pc = 0; pc < e->nwords; pc++) {
        int64_t op = e->words[pc];
        if (op < EXPR_CONST || op > EXPR_LAST_OP)
            return err_set(err, NUMRPC_EPROTO, "bad expression opcode %lld", (long long)op);
        if (op_takes_operand(op)) {
            if (pc + 1 >= e->nwords)
                return err_set(err, NUMRPC_EPROTO, "expression ends inside an operand");
            if (op == EXPR_ARG && (e->words[pc + 1] < 0 || e->words[pc + 1] >= nparams))
                return err_set(err, NUMRPC_EPROTO, "expression names parameter %lld of %u",
                               (long long)e->words[pc + 1], nparams);
            pc++;
            if (++depth > EXPR_MAX_STACK)
                return err_set(err, NUMRPC_EPROTO, "expression too deep");
        } else {
            if (depth < op_pops(op))
                return err_set(err, NUMRPC_EPROTO, "expression stack underflow");
            depth -= op_pops(op) - 1;
        }
    }
    if (depth != 1) return err_set(err, NUMRPC_EPROTO, "expression leaves %d values", depth);
    return 0;
}

static const char *op_symbol(int64_t op)
{
    switch (op) {
    case EXPR_ADD: return "+";
    case EXPR_SUB: return "-";
    case EXPR_MUL: return "*";
    case EXPR_DIV: return "/";
    case EXPR_MOD: return "%";
    case EXPR_POW: return "^";
    case EXPR_MIN: return "min";
    case EXPR_EQ: return "==";
    case EXPR_NE: return "!=";
    case EXPR_LT: return "<";
    case EXPR_LE: return "<=";
    case EXPR_GT: return ">";
    case EXPR_GE: return ">=";
    case EXPR_AND: return "&&";
    case EXPR_OR: return "||";
    default: return "max";
    }
}

void expr_render(const expr_t *e, const char *const *names, char *buf,
                 size_t size)
{
    enum { PART = 1024 }; /* one rendered subexpression */
    char stack[EXPR_MAX_STACK][PART];
    int sp = 0;
    for (uint32_t pc = 0; pc < e->nwords; pc++) {
        int64_t op = e->words[pc];
        if (op_takes_operand(op) && pc + 1 < e->nwords && sp < EXPR_MAX_STACK) {
            int64_t v = e->words[++pc];
            if (op == EXPR_CONST) snprintf(stack[sp++], PART, "%lld", (long long)v);
            else snprintf(stack[sp++], PART, "%s", names[v]);
        } else if (op == EXPR_NEG && sp >= 1) {
            char tmp[PART];
            snprintf(tmp, PART, "-(%s)", stack[sp - 1]);
            memcpy(stack[sp - 1], tmp, PART);
        } else if (op == EXPR_COND && sp >= 3) {
            char tmp[PART];
            snprintf(tmp, PART, "(%.336s?%.336s:%.336s)", stack[sp - 3], stack[sp - 2],
                     stack[sp - 1]);
            memcpy(stack[sp - 3], tmp, PART);
            sp -= 2;
        } else if (sp >= 2) {
            char tmp[PART];
            int fn = op == EXPR_MIN || op == EXPR_MAX;
            int last = pc + 1 == e->nwords;
            if (fn) snprintf(tmp, PART, "%s(%.500s,%.500s)", op_symbol(op), stack[sp - 2], stack[sp - 1]);
            else if (last) snprintf(tmp, PART, "%.500s%s%.500s", stack[sp - 2], op_symbol(op), stack[sp - 1]);
            else snprintf(tmp, PART, "(%.500s%s%.500s)", stack[sp - 2], op_symbol(op), stack[sp - 1]);
            memcpy(stack[sp - 2], tmp, PART);
            sp--;
        }
    }
    snprintf(buf, size, "%s", sp == 1 ? stack[0] : "?");
}

int expr_append(expr_t *e, int64_t word)
{
    int64_t *grown = realloc(e->words, (e->nwords + 1) * sizeof *grown);
    if (grown == NULL) return NUMRPC_ENOMEM;
    grown[e->nwords++] = word;
    e->words = grown;
    return 0;
}

int expr_concat(expr_t *dst, const expr_t *src)
{
    for (uint32_t i = 0; i < src->nwords; i++)
        if (expr_append(dst, src->words[i]) != 0) return NUMRPC_ENOMEM;
    return 0;
}

void expr_free(expr_t *e)
{
    free(e->words);
    e->words = NULL;
    e->nwords = 0;
}
