/* fuzz_expr.c -- libFuzzer target: shape and complexity programs (expr.c)
 * validated, then evaluated in integers and doubles, and rendered. */
#include <stdio.h>
#include <string.h>

#include "expr.h"
#include "fuzz_support.h"
#include "iface.h"

/* Input: byte nparams (mod IFACE_MAX_PARAMS + 1), byte k (mod 5), k
 * big-endian 64-bit argument values (parameter i reads value i mod k),
 * then the program, one opcode byte at a time: the opcode is byte % 24 - 1
 * (so -1, 0, 21 and 22 are unknown ones); CONST and ARG take an operand byte
 * (signed), or after 0x80 a full big-endian 64-bit word. */

typedef struct values {
    int64_t v[4];
    uint32_t k, nparams;
} values;

static int read_arg(void *ctx, uint32_t index, int64_t *value, err_t *err)
{
    const values *a = ctx;
    if (index >= a->nparams) /* only an unvalidated program gets here */
        return err_set(err, NUMRPC_EPROTO, "parameter %u of %u", index, a->nparams);
    *value = a->k ? a->v[index % a->k] : 0;
    return 0;
}

static int64_t take_word(fuzz_cursor *c)
{
    uint64_t w = 0;
    for (int i = 0; i < 8; i++) w = w << 8 | fuzz_take_byte(c);
    return (int64_t)w;
}

static int64_t take_operand(fuzz_cursor *c)
{
    uint8_t b = fuzz_take_byte(c);
    return b == 0x80 ? take_word(c) : (int8_t)b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char names_store[IFACE_MAX_PARAMS][IFACE_MAX_NAME + 1];
    static const char *names[IFACE_MAX_PARAMS];
    if (names[0] == NULL) /* the longest names a descriptor may carry */
        for (int i = 0; i < IFACE_MAX_PARAMS; i++) {
            memset(names_store[i], 'a' + i % 26, IFACE_MAX_NAME);
            names[i] = names_store[i];
        }
    fuzz_cursor c = {data, size};
    values a = {{0}, 0, 0};
    a.nparams = fuzz_take_byte(&c) % (IFACE_MAX_PARAMS + 1);
    a.k = fuzz_take_byte(&c) % 5;
    for (uint32_t i = 0; i < a.k; i++) a.v[i] = take_word(&c);

    int64_t words[EXPR_MAX_WORDS + 8];
    uint32_t n = 0;
    while (c.left > 0 && n < EXPR_MAX_WORDS + 4) {
        int64_t op = fuzz_take_byte(&c) % 24 - 1;
        words[n++] = op;
        if (op == EXPR_CONST || op == EXPR_ARG) words[n++] = take_operand(&c);
    }
    expr_t e = {n, words};
    err_t err;
    int64_t iv;
    double dv;
    int valid = expr_validate(&e, a.nparams, &err) == 0;
    expr_eval_int(&e, read_arg, &a, &iv, &err);
    expr_eval_real(&e, read_arg, &a, &dv, &err);
    if (valid) { /* rendering trusts a validated program's parameter indices */
        char text[2048];
        expr_render(&e, names, text, sizeof text);
    }
    return 0;
}
