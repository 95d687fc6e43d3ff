/* marshal.c -- the interface walker: scalars in XDR (libtirpc), arrays as
 * runs of elements converted a packet at a time by the codec. */
#include "marshal.h"

#include <rpc/xdr.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

int marshal_travels(const iface_param *p, marshal_dir dir)
{
    return dir == MARSHAL_REQUEST ? iface_param_in_request(p) : iface_param_in_reply(p);
}

/* ---- Shapes ---- */

typedef struct argv_ctx {
    const iface_t *f;
    void *const *argv;
} argv_ctx;

static int read_integer_arg(void *ctx, uint32_t index, int64_t *value, err_t *err)
{
    argv_ctx *c = ctx;
    const void *p = c->argv[index];
    switch (c->f->params[index].type) {
    case NUMRPC_T_CHAR: *value = *(const signed char *)p; return 0;
    case NUMRPC_T_INT: *value = *(const int32_t *)p; return 0;
    case NUMRPC_T_LONG: *value = *(const int64_t *)p; return 0;
    default:
        return err_set(err, NUMRPC_EPROTO, "%s is not an integer", c->f->params[index].name);
    }
}

int marshal_eval_shapes(const iface_t *f, void *const *argv,
                        iface_shape *shapes, err_t *err)
{
    argv_ctx c = {f, argv};
    return iface_eval_shapes(f, read_integer_arg, &c, shapes, err);
}

double marshal_complexity(const iface_t *f, void *const *argv)
{
    argv_ctx c = {f, argv};
    double flops = 0;
    err_t ignored;
    if (f->complexity.nwords == 0 ||
        expr_eval_real(&f->complexity, read_integer_arg, &c, &flops, &ignored) != 0)
        return 0;
    return flops;
}

/* ---- Scalars: XDR through a small memory stream per value ---- */

static bool_t xdr_scalar(XDR *x, uint32_t type, void *value)
{
    switch (type) {
    case NUMRPC_T_CHAR: return xdr_char(x, (char *)value);
    case NUMRPC_T_INT: return xdr_int(x, (int *)value);
    case NUMRPC_T_LONG: return xdr_int64_t(x, (int64_t *)value);
    case NUMRPC_T_FLOAT: return xdr_float(x, (float *)value);
    case NUMRPC_T_DOUBLE: return xdr_double(x, (double *)value);
    case NUMRPC_T_SCOMPLEX: return xdr_vector(x, value, 2, sizeof(float), (xdrproc_t)xdr_float);
    case NUMRPC_T_DCOMPLEX: return xdr_vector(x, value, 2, sizeof(double), (xdrproc_t)xdr_double);
    default: return FALSE;
    }
}

/* ---- Strings: XDR strings, scalars in the scalar section and string
 * arrays (one string per traveling element) in the array section ---- */

/* Reads one string into *slot.  A request (read by the server) lands in
 * fresh malloc'd memory that the caller of the walker frees; a reply (read
 * by the client) lands in the caller's own buffer *slot of bound + 1 bytes. */
static int read_string(wire_reader *r, const iface_t *f, const iface_param *p, char **slot,
                       int64_t bound, marshal_dir dir, err_t *err)
{
    if (dir == MARSHAL_REQUEST) return wire_get_string(r, slot, MARSHAL_MAX_STRING, err);
    uint8_t *text = NULL;
    uint32_t len;
    int rc = wire_get_opaque(r, &text, &len, MARSHAL_MAX_STRING, err);
    if (rc != 0) return rc;
    if (bound < 0 || (int64_t)len > bound || *slot == NULL)
        rc = err_set(err, NUMRPC_EPROTO, "%s: reply string %s has %u characters, its bound is %lld",
                     f->name, p->name, len, (long long)bound);
    else
        memcpy(*slot, text, (size_t)len + 1);
    free(text);
    return rc;
}

/* The index in memory of the j-th traveling element of a string array. */
static uint64_t string_index(const iface_shape *s, uint64_t j)
{
    return (uint64_t)s->start[0] + j * (uint64_t)s->stride[0];
}

static int write_string_array(wire_writer *w, char *const *table, const iface_shape *s,
                              err_t *err)
{
    int rc = 0;
    for (uint64_t j = 0; rc == 0 && j < s->wire_elems; j++)
        rc = wire_put_string(w, table[string_index(s, j)], err);
    return rc;
}

static int read_string_array(wire_reader *r, const iface_t *f, const iface_param *p,
                             char **table, const iface_shape *s, marshal_dir dir, err_t *err)
{
    int rc = 0;
    for (uint64_t j = 0; rc == 0 && j < s->wire_elems; j++) {
        char **slot = &table[string_index(s, j)];
        if (dir == MARSHAL_REQUEST) free(*slot); /* an INOUT re-read never leaks */
        rc = read_string(r, f, p, slot, s->bound, dir, err);
    }
    return rc;
}

/* Fails when a string that travels is longer than its bound. */
static int check_one_string(const iface_t *f, const iface_param *p, const char *text,
                            const iface_shape *s, err_t *err)
{
    size_t len = text ? strlen(text) : 0;
    int64_t bound = s->bound >= 0 ? s->bound : (int64_t)MARSHAL_MAX_STRING;
    if ((int64_t)len > bound)
        return err_set(err, p->bound.nwords ? NUMRPC_EINVAL : NUMRPC_ELIMIT,
                       "%s: string %s has %zu characters, more than its bound of %lld",
                       f->name, p->name, len, (long long)bound);
    return 0;
}

int marshal_check_strings(const iface_t *f, void *const *argv, const iface_shape *shapes,
                          marshal_dir dir, err_t *err)
{
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (p->type != NUMRPC_T_STRING || !marshal_travels(p, dir)) continue;
        if (p->rank == 0) {
            int rc = check_one_string(f, p, argv[i] ? *(char *const *)argv[i] : NULL,
                                      &shapes[i], err);
            if (rc != 0) return rc;
            continue;
        }
        char *const *table = argv[i];
        if (shapes[i].wire_elems > 0 && table == NULL)
            return err_set(err, NUMRPC_EINVAL, "%s: string array %s is NULL", f->name, p->name);
        for (uint64_t j = 0; j < shapes[i].wire_elems; j++) {
            int rc = check_one_string(f, p, table[string_index(&shapes[i], j)], &shapes[i], err);
            if (rc != 0) return rc;
        }
    }
    return 0;
}

static int write_scalars(wire_writer *w, const iface_t *f, void *const *argv,
                         marshal_dir dir, err_t *err)
{
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (p->rank != 0 || !marshal_travels(p, dir)) continue;
        if (iface_type_is_file(p->type)) continue; /* the file section: files.c */
        int rc;
        if (p->type == NUMRPC_T_STRING) {
            rc = wire_put_string(w, *(char *const *)argv[i], err);
        } else {
            uint8_t enc[16];
            XDR x;
            xdrmem_create(&x, (char *)enc, sizeof enc, XDR_ENCODE);
            bool_t ok = xdr_scalar(&x, p->type, argv[i]);
            u_int n = xdr_getpos(&x);
            xdr_destroy(&x);
            if (!ok) return err_set(err, NUMRPC_EINTERNAL, "%s: cannot encode %s", f->name, p->name);
            rc = wire_put(w, enc, n, err);
        }
        if (rc != 0) return rc;
    }
    return wire_pad8(w, err);
}

int marshal_read_scalars(wire_reader *r, const iface_t *f, void *const *argv,
                         const iface_shape *shapes, marshal_dir dir, err_t *err)
{
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (p->rank != 0 || !marshal_travels(p, dir)) continue;
        if (iface_type_is_file(p->type)) continue; /* the file section: files.c */
        int rc;
        if (p->type == NUMRPC_T_STRING) {
            rc = read_string(r, f, p, (char **)argv[i], shapes ? shapes[i].bound : -1, dir, err);
        } else {
            uint8_t enc[16];
            size_t n = p->type == NUMRPC_T_LONG || p->type == NUMRPC_T_DOUBLE ||
                               p->type == NUMRPC_T_SCOMPLEX ? 8
                       : p->type == NUMRPC_T_DCOMPLEX ? 16 : 4;
            rc = wire_get(r, enc, n, err);
            if (rc == 0) {
                XDR x;
                xdrmem_create(&x, (char *)enc, (u_int)n, XDR_DECODE);
                if (!xdr_scalar(&x, p->type, argv[i]))
                    rc = err_set(err, NUMRPC_EPROTO, "%s: bad value for %s", f->name, p->name);
                xdr_destroy(&x);
            }
        }
        if (rc != 0) return rc;
    }
    return wire_skip_pad8(r, err);
}

/* ---- Arrays: runs of elements along dimension 0 ---- */

/* One contiguous-or-strided run of elements in memory. */
typedef struct run {
    uint8_t *base;
    uint64_t count;
    size_t stride; /* in elements */
} run;

typedef int (*run_fn)(void *io, const run *rn, size_t elem, size_t unit, err_t *err);

/* Calls fn for every run of the traveling elements of a block laid out as
 * shape s says, in wire order (dimension 0 fastest). */
static int for_each_run(uint8_t *block, const iface_param *p, const iface_shape *s,
                        run_fn fn, void *io, err_t *err)
{
    size_t elem = iface_type_size(p->type), unit = iface_type_unit(p->type);
    if (s->wire_elems == 0) return 0;
    uint64_t pitch[IFACE_MAX_RANK];
    pitch[0] = 1;
    for (uint32_t d = 1; d < p->rank; d++) pitch[d] = pitch[d - 1] * (uint64_t)s->size[d - 1];

    /* A full dimension 0 with a unit-stride dimension 1 is one long run. */
    uint32_t first_outer = 1;
    run rn = {NULL, (uint64_t)s->count[0], (size_t)s->stride[0]};
    if (p->rank >= 2 && s->start[0] == 0 && s->stride[0] == 1 && s->count[0] == s->size[0] &&
        s->stride[1] == 1) {
        rn.count = (uint64_t)s->count[0] * (uint64_t)s->count[1];
        first_outer = 2;
    }
    uint64_t index[IFACE_MAX_RANK] = {0};
    for (;;) {
        uint64_t offset = (uint64_t)s->start[0];
        if (first_outer == 2) offset += (uint64_t)s->start[1] * pitch[1];
        for (uint32_t d = first_outer; d < p->rank; d++)
            offset += ((uint64_t)s->start[d] + index[d] * (uint64_t)s->stride[d]) * pitch[d];
        rn.base = block + offset * elem;
        int rc = fn(io, &rn, elem, unit, err);
        if (rc != 0) return rc;
        uint32_t d = first_outer;
        while (d < p->rank && ++index[d] == (uint64_t)s->count[d]) index[d++] = 0;
        if (d >= p->rank) return 0;
    }
}

static int encode_run(void *io, const run *rn, size_t elem, size_t unit, err_t *err)
{
    wire_writer *w = io;
    uint64_t done = 0;
    /* Unit-stride complex numbers travel as their float/double parts. */
    size_t stride = rn->stride;
    uint64_t count = rn->count;
    if (stride == 1 && elem > unit) {
        count *= elem / unit;
        elem = unit;
    }
    while (done < count) {
        uint8_t *dst;
        size_t avail;
        int rc = wire_reserve(w, &dst, &avail, err);
        if (rc != 0) return rc;
        uint64_t k = avail / elem;
        if (k == 0) { /* a strided 16-byte element across two packets */
            uint8_t tmp[16];
            codec_encode(tmp, rn->base + done * stride * elem, 1, elem, unit, 1);
            rc = wire_put(w, tmp, elem, err);
            if (rc != 0) return rc;
            done++;
            continue;
        }
        if (k > count - done) k = count - done;
        codec_encode(dst, rn->base + done * stride * elem, (size_t)k, elem, unit, stride);
        wire_commit(w, (size_t)(k * elem));
        done += k;
    }
    return 0;
}

static int decode_run(void *io, const run *rn, size_t elem, size_t unit, err_t *err)
{
    wire_reader *r = io;
    uint64_t done = 0;
    size_t stride = rn->stride;
    uint64_t count = rn->count;
    if (stride == 1 && elem > unit) {
        count *= elem / unit;
        elem = unit;
    }
    while (done < count) {
        const uint8_t *src;
        size_t avail;
        int rc = wire_peek(r, &src, &avail, err);
        if (rc != 0) return rc;
        uint64_t k = avail / elem;
        if (k == 0) { /* an element split across reads or packets */
            uint8_t tmp[16];
            rc = wire_get(r, tmp, elem, err);
            if (rc != 0) return rc;
            codec_decode(rn->base + done * stride * elem, tmp, 1, elem, unit, 1);
            done++;
            continue;
        }
        if (k > count - done) k = count - done;
        codec_decode(rn->base + done * stride * elem, src, (size_t)k, elem, unit, stride);
        wire_consume(r, (size_t)(k * elem));
        done += k;
    }
    return 0;
}

static int write_count(wire_writer *w, uint64_t count, err_t *err)
{
    uint8_t enc[8];
    XDR x;
    xdrmem_create(&x, (char *)enc, sizeof enc, XDR_ENCODE);
    xdr_uint64_t(&x, &count);
    xdr_destroy(&x);
    return wire_put(w, enc, sizeof enc, err);
}

static int read_count(wire_reader *r, uint64_t *count, err_t *err)
{
    uint8_t enc[8];
    int rc = wire_get(r, enc, sizeof enc, err);
    if (rc != 0) return rc;
    XDR x;
    xdrmem_create(&x, (char *)enc, sizeof enc, XDR_DECODE);
    xdr_uint64_t(&x, count);
    xdr_destroy(&x);
    return 0;
}

/* Writes one array of p (shape s) from block; routine names it in errors. */
static int write_block(wire_writer *w, const char *routine, const iface_param *p, const iface_shape *s,
                       const void *block, err_t *err)
{
    int rc = write_count(w, s->wire_elems, err);
    if (rc == 0 && s->wire_elems > 0 && block == NULL)
        rc = err_set(err, NUMRPC_EINVAL, "%s: array %s is NULL", routine, p->name);
    if (rc == 0 && p->type == NUMRPC_T_STRING)
        rc = write_string_array(w, (char *const *)block, s, err);
    else if (rc == 0)
        rc = for_each_run((uint8_t *)block, p, s, encode_run, w, err);
    if (rc == 0) rc = wire_pad8(w, err);
    return rc;
}

int marshal_write_block(wire_writer *w, const iface_param *p, const iface_shape *s, const void *block,
                        err_t *err)
{
    return write_block(w, "data", p, s, block, err);
}

int marshal_write(wire_writer *w, const iface_t *f, void *const *argv,
                  const iface_shape *shapes, marshal_dir dir, err_t *err)
{
    int rc = write_scalars(w, f, argv, dir, err);
    if (rc == 0) rc = marshal_write_arrays(w, f, argv, shapes, dir, err);
    return rc;
}

int marshal_write_arrays(wire_writer *w, const iface_t *f, void *const *argv,
                         const iface_shape *shapes, marshal_dir dir, err_t *err)
{
    int rc = 0;
    for (uint32_t i = 0; rc == 0 && i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (p->rank == 0 || shapes[i].held || !marshal_travels(p, dir)) continue;
        rc = write_block(w, f->name, p, &shapes[i], argv[i], err);
    }
    return rc;
}

/* Reads one array of p (shape s) into block; f names the routine in errors
 * and bounds its strings (NULL: a handle's data, which has none). */
static int read_block(wire_reader *r, const iface_t *f, const iface_param *p, const iface_shape *s,
                      void *block, marshal_dir dir, err_t *err)
{
    const char *routine = f ? f->name : "data";
    uint64_t count;
    int rc = read_count(r, &count, err);
    if (rc != 0) return rc;
    if (count != s->wire_elems)
        return err_set(err, NUMRPC_EPROTO, "%s: array %s has %llu elements on the wire, %llu expected", routine,
                       p->name, (unsigned long long)count, (unsigned long long)s->wire_elems);
    if (count > 0 && block == NULL) return err_set(err, NUMRPC_EINVAL, "%s: array %s is NULL", routine, p->name);
    if (p->type == NUMRPC_T_STRING && f == NULL)
        return err_set(err, NUMRPC_EINTERNAL, "string arrays need their routine");
    if (p->type == NUMRPC_T_STRING)
        rc = read_string_array(r, f, p, block, s, dir, err);
    else
        rc = for_each_run(block, p, s, decode_run, r, err);
    if (rc == 0) rc = wire_skip_pad8(r, err);
    return rc;
}

int marshal_read_block(wire_reader *r, const iface_param *p, const iface_shape *s, void *block, err_t *err)
{
    return read_block(r, NULL, p, s, block, MARSHAL_REPLY, err);
}

int marshal_read_arrays(wire_reader *r, const iface_t *f, void *const *argv,
                        const iface_shape *shapes, marshal_dir dir, err_t *err)
{
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (p->rank == 0 || shapes[i].held || !marshal_travels(p, dir)) continue;
        int rc = read_block(r, f, p, &shapes[i], argv[i], dir, err);
        if (rc != 0) return rc;
    }
    return 0;
}
