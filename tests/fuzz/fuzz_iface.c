/* fuzz_iface.c -- libFuzzer target: interface descriptors from a hostile
 * peer (iface.c): decoded and validated, re-encoded, rendered, and shaped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_support.h"
#include "iface.h"
#include "marshal.h"

/* Input: a descriptor blob, as GET_IFACE and META_JOIN carry it. */

/* Scalar values the shapes are evaluated with: parameter i of a call takes
 * value i mod 4 of one row. */
static const int64_t rows[][4] = {
    {0, 0, 0, 0},          {1, 1, 1, 1},         {3, 5, 7, 2},
    {-1, -2, -3, -4},      {1 << 20, 3, 1 << 20, 2}, {INT64_MAX, INT32_MAX, 127, 1},
    {'N', 'U', 'V', 'L'},
};

/* Sets every integer scalar of f as a caller would pass it. */
static void fill_scalars(const iface_t *f, const int64_t row[4], fuzz_args *a)
{
    memset(a, 0, sizeof *a);
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        int64_t v = row[i % 4];
        a->argv[i] = p->rank == 0 ? &a->scalars[i] : NULL;
        if (p->type == NUMRPC_T_INT) a->scalars[i].i = (int32_t)v;
        else if (p->type == NUMRPC_T_LONG) a->scalars[i].l = v;
        else if (p->type == NUMRPC_T_CHAR) a->scalars[i].c = (char)v;
    }
}

/* A descriptor that decodes must encode to bytes that decode to the same
 * encoding again: otherwise a server would pass on what a client refuses. */
static void check_round_trip(const iface_t *f)
{
    uint8_t *blob = NULL, *again = NULL;
    size_t len = 0, len_again = 0;
    iface_t back;
    err_t err;
    if (iface_encode(f, &blob, &len, &err) != 0) {
        fprintf(stderr, "a decoded descriptor does not encode: %s\n", err.detail);
        abort();
    }
    if (iface_decode(blob, len, &back, &err) != 0) {
        fprintf(stderr, "a re-encoded descriptor does not decode: %s\n", err.detail);
        abort();
    }
    if (iface_encode(&back, &again, &len_again, &err) != 0 || len_again != len ||
        memcmp(blob, again, len) != 0) {
        fprintf(stderr, "encoding a decoded descriptor is not stable\n");
        abort();
    }
    iface_t hashed = back;
    if (iface_compute_hash(&hashed, &err) != 0) abort();
    iface_free(&back);
    free(blob);
    free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    iface_t f;
    err_t err;
    if (iface_decode(data, size, &f, &err) != 0) return 0;
    check_round_trip(&f);
    char *text = NULL;
    if (iface_render_idl(&f, &text) == 0) free(text);
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        fuzz_args a;
        fill_scalars(&f, rows[r], &a);
        if (marshal_eval_shapes(&f, a.argv, a.shapes, &err) == 0) marshal_complexity(&f, a.argv);
    }
    iface_has_files(&f);
    iface_free(&f);
    return 0;
}
