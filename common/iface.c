/* iface.c -- encoding (libtirpc XDR), validation, hashing, shape evaluation
 * and IDL rendering of interface descriptors. */
#include "iface.h"

#include <rpc/xdr.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

/* ---- XDR: one routine per structure, used for both directions ---- */

static bool_t xdr_expr(XDR *x, expr_t *e)
{
    return xdr_array(x, (char **)&e->words, &e->nwords, EXPR_MAX_WORDS,
                     sizeof(int64_t), (xdrproc_t)xdr_int64_t);
}

static bool_t xdr_param(XDR *x, iface_param *p)
{
    if (!xdr_string(x, &p->name, IFACE_MAX_NAME)) return FALSE;
    if (!xdr_u_int(x, &p->type) || !xdr_u_int(x, &p->mode) ||
        !xdr_u_int(x, &p->rank))
        return FALSE;
    for (int d = 0; d < IFACE_MAX_RANK; d++) {
        iface_dim *dim = &p->dims[d];
        if (!xdr_expr(x, &dim->size) || !xdr_expr(x, &dim->count) ||
            !xdr_expr(x, &dim->start) || !xdr_expr(x, &dim->stride))
            return FALSE;
    }
    return xdr_expr(x, &p->bound);
}

/* end: the encoding's length when decoding (where an optional part may
 * begin), ignored otherwise. */
static bool_t xdr_iface(XDR *x, iface_t *f, u_int end)
{
    u_int format = IFACE_FORMAT_VERSION;
    if (!xdr_u_int(x, &format) || format != IFACE_FORMAT_VERSION) return FALSE;
    if (!xdr_string(x, &f->name, IFACE_MAX_NAME) ||
        !xdr_string(x, &f->module, IFACE_MAX_NAME) ||
        !xdr_string(x, &f->description, IFACE_MAX_TEXT) ||
        !xdr_string(x, &f->library, IFACE_MAX_TEXT) ||
        !xdr_string(x, &f->symbol, IFACE_MAX_NAME))
        return FALSE;
    if (!xdr_u_int(x, &f->lang) || !xdr_uint64_t(x, &f->hash)) return FALSE;
    if (!xdr_array(x, (char **)&f->params, &f->nparams, IFACE_MAX_PARAMS,
                   sizeof(iface_param), (xdrproc_t)xdr_param))
        return FALSE;
    if (!xdr_expr(x, &f->complexity)) return FALSE;
    /* The backend part: written only for a routine that is not local, read
     * only when bytes follow (a descriptor of the older form has none). */
    if (x->x_op == XDR_ENCODE && f->backend == IFACE_BACKEND_LOCAL && f->ranks == 0) return TRUE;
    if (x->x_op == XDR_DECODE && xdr_getpos(x) >= end) return TRUE;
    return xdr_u_int(x, &f->backend) && xdr_u_int(x, &f->ranks);
}

/* Strings may be NULL in a struct built by hand; XDR wants "" then. */
static iface_t with_empty_strings(const iface_t *f)
{
    iface_t c = *f;
    static char empty[] = "";
    if (!c.name) c.name = empty;
    if (!c.module) c.module = empty;
    if (!c.description) c.description = empty;
    if (!c.library) c.library = empty;
    if (!c.symbol) c.symbol = empty;
    return c;
}

int iface_encode(const iface_t *f, uint8_t **blob_out, size_t *len_out,
                 err_t *err)
{
    iface_t c = with_empty_strings(f);
    XDR x;
    uint8_t *buf = malloc(IFACE_MAX_BLOB);
    if (buf == NULL) return err_set(err, NUMRPC_ENOMEM, "interface buffer");
    xdrmem_create(&x, (char *)buf, IFACE_MAX_BLOB, XDR_ENCODE);
    if (!xdr_iface(&x, &c, 0)) {
        xdr_destroy(&x);
        free(buf);
        return err_set(err, NUMRPC_EINVAL, "interface of %s does not encode",
                       c.name);
    }
    *len_out = xdr_getpos(&x);
    xdr_destroy(&x);
    uint8_t *shrunk = realloc(buf, *len_out);
    *blob_out = shrunk ? shrunk : buf;
    return 0;
}

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

int iface_compute_hash(iface_t *f, err_t *err)
{
    uint8_t *blob;
    size_t len;
    f->hash = 0;
    int rc = iface_encode(f, &blob, &len, err);
    if (rc != 0) return rc;
    f->hash = fnv1a(blob, len);
    free(blob);
    return 0;
}

int iface_decode(const uint8_t *blob, size_t len, iface_t *f, err_t *err)
{
    XDR x;
    memset(f, 0, sizeof *f);
    xdrmem_create(&x, (char *)(uintptr_t)blob, (u_int)len, XDR_DECODE);
    bool_t ok = xdr_iface(&x, f, (u_int)len);
    xdr_destroy(&x);
    if (!ok) {
        iface_free(f);
        return err_set(err, NUMRPC_EPROTO, "malformed interface descriptor");
    }
    int rc = iface_validate(f, err);
    if (rc != 0) iface_free(f);
    return rc;
}

/* Frees field by field: xdr_free keeps a string longer than its XDR limit
 * (and what follows it), and idlc builds descriptors with any names. */
void iface_free(iface_t *f)
{
    free(f->name);
    free(f->module);
    free(f->description);
    free(f->library);
    free(f->symbol);
    for (uint32_t i = 0; f->params != NULL && i < f->nparams; i++) {
        iface_param *p = &f->params[i];
        free(p->name);
        for (int d = 0; d < IFACE_MAX_RANK; d++) {
            expr_free(&p->dims[d].size);
            expr_free(&p->dims[d].count);
            expr_free(&p->dims[d].start);
            expr_free(&p->dims[d].stride);
        }
        expr_free(&p->bound);
    }
    free(f->params);
    expr_free(&f->complexity);
    memset(f, 0, sizeof *f);
}

/* ---- Types ---- */

size_t iface_type_size(uint32_t type)
{
    switch (type) {
    case NUMRPC_T_CHAR: return 1;
    case NUMRPC_T_INT: return 4;
    case NUMRPC_T_LONG: return 8;
    case NUMRPC_T_FLOAT: return 4;
    case NUMRPC_T_DOUBLE: return 8;
    case NUMRPC_T_SCOMPLEX: return 8;
    case NUMRPC_T_DCOMPLEX: return 16;
    default: return 0;
    }
}

size_t iface_type_unit(uint32_t type)
{
    switch (type) {
    case NUMRPC_T_CHAR: return 1;
    case NUMRPC_T_INT:
    case NUMRPC_T_FLOAT:
    case NUMRPC_T_SCOMPLEX: return 4;
    default: return 8;
    }
}

const char *iface_type_name(uint32_t type)
{
    switch (type) {
    case NUMRPC_T_CHAR: return "char";
    case NUMRPC_T_INT: return "int";
    case NUMRPC_T_LONG: return "long";
    case NUMRPC_T_FLOAT: return "float";
    case NUMRPC_T_DOUBLE: return "double";
    case NUMRPC_T_SCOMPLEX: return "complex";
    case NUMRPC_T_DCOMPLEX: return "double complex";
    case NUMRPC_T_STRING: return "string";
    case NUMRPC_T_FILE: return "filename";
    case NUMRPC_T_RFILE: return "rfile";
    default: return "?";
    }
}

const char *iface_mode_name(uint32_t mode)
{
    switch (mode) {
    case IFACE_IN: return "IN";
    case IFACE_OUT: return "OUT";
    case IFACE_INOUT: return "INOUT";
    case IFACE_WORK: return "WORK";
    default: return "?";
    }
}

int iface_type_is_integer(uint32_t type)
{
    return type == NUMRPC_T_CHAR || type == NUMRPC_T_INT || type == NUMRPC_T_LONG;
}

int iface_param_in_request(const iface_param *p)
{
    return p->mode == IFACE_IN || p->mode == IFACE_INOUT;
}

int iface_param_in_reply(const iface_param *p)
{
    return p->mode == IFACE_OUT || p->mode == IFACE_INOUT;
}

/* ---- Validation ---- */

static int validate_expr_args(const iface_t *f, const expr_t *e,
                              const char *what, err_t *err)
{
    int rc = expr_validate(e, f->nparams, err);
    if (rc != 0) {
        err_prefix(err, what);
        return rc;
    }
    for (uint32_t pc = 0; pc < e->nwords; pc++) {
        if (e->words[pc] != EXPR_CONST && e->words[pc] != EXPR_ARG) continue;
        if (e->words[pc] == EXPR_ARG) {
            const iface_param *q = &f->params[e->words[pc + 1]];
            if (q->rank != 0 || q->mode != IFACE_IN || !iface_type_is_integer(q->type))
                return err_set(err, NUMRPC_EPROTO,
                               "%s uses %s, which is not an integer scalar of mode in",
                               what, q->name);
        }
        pc++;
    }
    return 0;
}

/* A string is a scalar or a rank-1 array of C strings; only IN strings may
 * go without a bound, and only strings have one. */
static int validate_string_param(const iface_t *f, const iface_param *p, err_t *err)
{
    if (p->type != NUMRPC_T_STRING) {
        if (p->bound.nwords != 0)
            return err_set(err, NUMRPC_EPROTO, "%s: %s is not a string but has a bound",
                           f->name, p->name);
        return 0;
    }
    if (p->rank > 1)
        return err_set(err, NUMRPC_EPROTO, "%s: string array %s has rank %u > 1", f->name,
                       p->name, p->rank);
    if (p->mode == IFACE_WORK ||
        (p->mode != IFACE_IN && p->bound.nwords == 0))
        return err_set(err, NUMRPC_EPROTO, "%s: %s string %s needs a bound", f->name,
                       iface_mode_name(p->mode), p->name);
    char what[160];
    snprintf(what, sizeof what, "%s: bound of %s", f->name, p->name);
    return validate_expr_args(f, &p->bound, what, err);
}

int iface_validate(const iface_t *f, err_t *err)
{
    if (f->name == NULL || f->name[0] == '\0')
        return err_set(err, NUMRPC_EPROTO, "interface without a name");
    if (f->lang > IFACE_LANG_FORTRAN)
        return err_set(err, NUMRPC_EPROTO, "%s: unknown language %u", f->name, f->lang);
    if (f->backend > IFACE_BACKEND_MPI)
        return err_set(err, NUMRPC_EPROTO, "%s: unknown backend %u", f->name, f->backend);
    if (f->ranks > IFACE_MAX_RANKS || (f->ranks != 0 && f->backend != IFACE_BACKEND_MPI))
        return err_set(err, NUMRPC_EPROTO, "%s: %u ranks for a routine that is not MPI's, or more than %d",
                       f->name, f->ranks, IFACE_MAX_RANKS);
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        char what[160];
        if (p->name == NULL || p->name[0] == '\0')
            return err_set(err, NUMRPC_EPROTO, "%s: parameter %u has no name", f->name, i);
        if (iface_type_size(p->type) == 0 && p->type != NUMRPC_T_STRING &&
            !iface_type_is_file(p->type))
            return err_set(err, NUMRPC_EPROTO, "%s: parameter %s has unknown type %u",
                           f->name, p->name, p->type);
        if (p->mode < IFACE_IN || p->mode > IFACE_WORK)
            return err_set(err, NUMRPC_EPROTO, "%s: parameter %s has unknown mode %u",
                           f->name, p->name, p->mode);
        if (p->rank > IFACE_MAX_RANK)
            return err_set(err, NUMRPC_EPROTO, "%s: parameter %s has rank %u > %d",
                           f->name, p->name, p->rank, IFACE_MAX_RANK);
        int rc = validate_string_param(f, p, err);
        if (rc == 0) rc = iface_validate_file_param(f, p, err);
        if (rc != 0) return rc;
        for (uint32_t d = 0; d < IFACE_MAX_RANK; d++) {
            const iface_dim *dim = &p->dims[d];
            if (d < p->rank && dim->size.nwords == 0)
                return err_set(err, NUMRPC_EPROTO, "%s: %s dimension %u has no extent",
                               f->name, p->name, d + 1);
            snprintf(what, sizeof what, "%s: extent of %s", f->name, p->name);
            if ((rc = validate_expr_args(f, &dim->size, what, err)) != 0 ||
                (rc = validate_expr_args(f, &dim->count, what, err)) != 0 ||
                (rc = validate_expr_args(f, &dim->start, what, err)) != 0 ||
                (rc = validate_expr_args(f, &dim->stride, what, err)) != 0)
                return rc;
        }
    }
    char what[96];
    snprintf(what, sizeof what, "%s: complexity", f->name);
    return validate_expr_args(f, &f->complexity, what, err);
}

/* ---- Shapes ---- */

static int eval_or(const expr_t *e, int64_t dflt, expr_arg_fn arg, void *ctx,
                   int64_t *out, err_t *err)
{
    if (e->nwords == 0) {
        *out = dflt;
        return 0;
    }
    return expr_eval_int(e, arg, ctx, out, err);
}

static int shape_fail(const iface_t *f, const iface_param *p, uint32_t d,
                      const char *what, int64_t v, err_t *err)
{
    char text[512];
    expr_t const *e = strcmp(what, "size") == 0 ? &p->dims[d].size
                      : strcmp(what, "count") == 0 ? &p->dims[d].count
                                                    : &p->dims[d].stride;
    const char *names[IFACE_MAX_PARAMS];
    for (uint32_t i = 0; i < f->nparams; i++) names[i] = f->params[i].name;
    expr_render(e->nwords ? e : &p->dims[d].size, names, text, sizeof text);
    return err_set(err, NUMRPC_EINVAL, "%s: %s of %s in dimension %u is %lld (%s)",
                   f->name, what, p->name, d + 1, (long long)v, text);
}

int iface_eval_shapes(const iface_t *f, expr_arg_fn arg, void *ctx,
                      iface_shape *shapes, err_t *err)
{
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        iface_shape *s = &shapes[i];
        memset(s, 0, sizeof *s);
        s->mem_elems = s->wire_elems = 1;
        s->bound = -1;
        if (p->bound.nwords != 0) {
            int rc = expr_eval_int(&p->bound, arg, ctx, &s->bound, err);
            if (rc != 0) {
                char where[128];
                snprintf(where, sizeof where, "%s: bound of %s", f->name, p->name);
                err_prefix(err, where);
                return rc;
            }
            if (s->bound < 0 || s->bound > (int64_t)IFACE_MAX_STRING)
                return err_set(err, NUMRPC_EINVAL, "%s: bound of string %s is %lld, not in 0..%u",
                               f->name, p->name, (long long)s->bound, IFACE_MAX_STRING);
        }
        for (uint32_t d = 0; d < p->rank; d++) {
            const iface_dim *dim = &p->dims[d];
            int rc;
            if ((rc = eval_or(&dim->size, 0, arg, ctx, &s->size[d], err)) != 0 ||
                (rc = eval_or(&dim->count, s->size[d], arg, ctx, &s->count[d], err)) != 0 ||
                (rc = eval_or(&dim->start, 0, arg, ctx, &s->start[d], err)) != 0 ||
                (rc = eval_or(&dim->stride, 1, arg, ctx, &s->stride[d], err)) != 0) {
                char where[128];
                snprintf(where, sizeof where, "%s: shape of %s", f->name, p->name);
                err_prefix(err, where);
                return rc;
            }
            if (s->size[d] < 0) return shape_fail(f, p, d, "size", s->size[d], err);
            if (s->count[d] < 0) return shape_fail(f, p, d, "count", s->count[d], err);
            if (s->stride[d] < 1) return shape_fail(f, p, d, "stride", s->stride[d], err);
            if (s->start[d] < 0) return shape_fail(f, p, d, "start", s->start[d], err);
            if (s->count[d] > 0) {
                int64_t last;
                if (__builtin_mul_overflow(s->count[d] - 1, s->stride[d], &last) ||
                    __builtin_add_overflow(last, s->start[d], &last) || last >= s->size[d])
                    return err_set(err, NUMRPC_EINVAL,
                                   "%s: %s dimension %u: %lld elements with stride %lld "
                                   "do not fit in extent %lld",
                                   f->name, p->name, d + 1, (long long)s->count[d],
                                   (long long)s->stride[d], (long long)s->size[d]);
            }
            if (__builtin_mul_overflow(s->mem_elems, (uint64_t)s->size[d], &s->mem_elems) ||
                __builtin_mul_overflow(s->wire_elems, (uint64_t)s->count[d], &s->wire_elems))
                return err_set(err, NUMRPC_EINVAL, "%s: %s has more than 2^64 elements",
                               f->name, p->name);
        }
    }
    return 0;
}

/* ---- Rendering ---- */

const char *iface_calls_language(const iface_t *f)
{
    if (f->backend == IFACE_BACKEND_MPI) return "MPI";
    return f->lang == IFACE_LANG_FORTRAN ? "Fortran" : "C";
}

int iface_render_idl(const iface_t *f, char **out)
{
    strbuf b = {0};
    const char *names[IFACE_MAX_PARAMS];
    char text[2048];
    for (uint32_t i = 0; i < f->nparams; i++) names[i] = f->params[i].name;
    strbuf_printf(&b, "Module %s;\n", f->module && f->module[0] ? f->module : "unnamed");
    strbuf_printf(&b, "Define %s(", f->name);
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        int by_ref = p->rank == 0 && p->mode != IFACE_IN && p->type != NUMRPC_T_STRING &&
                     !iface_type_is_file(p->type);
        strbuf_printf(&b, "%s%s %s", i ? ",\n          " : "", iface_mode_name(p->mode),
                  iface_type_name(p->type));
        if (p->bound.nwords) {
            /* One name or constant is two words; anything longer gets
             * parentheses, as the grammar requires inside <...>. */
            expr_render(&p->bound, names, text, sizeof text);
            strbuf_printf(&b, p->bound.nwords > 2 ? "<(%s)>" : "<%s>", text);
        }
        strbuf_printf(&b, " %s%s", by_ref ? "*" : "", p->name);
        for (uint32_t d = 0; d < p->rank; d++) {
            const iface_dim *dim = &p->dims[d];
            expr_render(&dim->size, names, text, sizeof text);
            strbuf_printf(&b, "[%s", text);
            if (dim->count.nwords) {
                expr_render(&dim->count, names, text, sizeof text);
                strbuf_printf(&b, ":%s", text);
            }
            if (dim->stride.nwords) {
                expr_render(&dim->stride, names, text, sizeof text);
                strbuf_printf(&b, ":%s", text);
            }
            strbuf_printf(&b, "]");
        }
    }
    strbuf_printf(&b, ")\n");
    if (f->description && f->description[0]) strbuf_printf(&b, "\"%s\"\n", f->description);
    if (f->library && f->library[0]) strbuf_printf(&b, "Required \"%s\"\n", f->library);
    if (f->complexity.nwords) {
        expr_render(&f->complexity, names, text, sizeof text);
        strbuf_printf(&b, "CalcOrder %s\n", text);
    }
    if (f->backend == IFACE_BACKEND_MPI) strbuf_printf(&b, f->ranks ? "Backend \"MPI\" %u;\n" : "Backend \"MPI\";\n", f->ranks);
    strbuf_printf(&b, "Calls \"%s\" %s(", iface_calls_language(f),
              f->symbol && f->symbol[0] ? f->symbol : f->name);
    for (uint32_t i = 0; i < f->nparams; i++) strbuf_printf(&b, "%s%s", i ? ", " : "", names[i]);
    strbuf_printf(&b, ");\n");
    if (b.failed) {
        free(b.p);
        return NUMRPC_ENOMEM;
    }
    *out = b.p;
    return 0;
}

/* ---- File parameters (their wire section is files.c) ---- */

int iface_type_is_file(uint32_t type)
{
    return type == NUMRPC_T_FILE || type == NUMRPC_T_RFILE;
}

int iface_has_files(const iface_t *f)
{
    for (uint32_t i = 0; i < f->nparams; i++)
        if (iface_type_is_file(f->params[i].type)) return 1;
    return 0;
}

int iface_validate_file_param(const iface_t *f, const iface_param *p, err_t *err)
{
    if (!iface_type_is_file(p->type)) return 0;
    if (p->rank != 0 || p->bound.nwords != 0)
        return err_set(err, NUMRPC_EPROTO, "%s: file %s must be a plain scalar", f->name, p->name);
    int ok = p->type == NUMRPC_T_FILE ? p->mode == IFACE_IN || p->mode == IFACE_OUT
                                      : p->mode == IFACE_IN;
    if (!ok)
        return err_set(err, NUMRPC_EPROTO, "%s: %s %s cannot have mode %s", f->name,
                       iface_type_name(p->type), p->name, iface_mode_name(p->mode));
    return 0;
}
