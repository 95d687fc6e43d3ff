/* fuzz_support.c -- the fuzz targets' shared pieces: the reader over the
 * fuzzer's bytes and the real interfaces loaded through idlc's front end. */
#include "fuzz_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "marshal.h"
#include "msg.h"
#include "sema.h"
#include "transport.h"

#ifndef FUZZ_SRCDIR
#error "FUZZ_SRCDIR names the source tree (tests/fuzz/build.sh sets it)"
#endif

/* ---- The reader ---- */

static wire_reader reader;
static int reader_ready;
static transport fed; /* the stream fed last: its copy in the reader dies with it */

wire_reader *fuzz_reader(size_t max_packet)
{
    if (!reader_ready) {
        err_t err;
        if (wire_reader_init(&reader, -1, max_packet, &err) != 0) {
            fprintf(stderr, "fuzz: %s\n", err.detail);
            abort();
        }
        reader_ready = 1;
    }
    return &reader;
}

void fuzz_reader_feed(wire_reader *r, const uint8_t *data, size_t n)
{
    fed = transport_memory(data, n);
    wire_reader_attach(r, fed);
}

void fuzz_reader_close(void)
{
    fed.ops->close(&fed);
}

int fuzz_read_peer_request(wire_reader *r, uint32_t type, char name[IFACE_MAX_NAME + 1], err_t *err)
{
    msg_hello h;
    switch (type) {
    case PROTO_HELLO: return msg_read_hello(r, &h, err);
    case PROTO_LIST: return wire_expect_end(r, err);
    case PROTO_GET_IFACE: return msg_read_get_iface(r, name, err);
    default: return 1;
    }
}

/* ---- The real interfaces ---- */

static const char *const idl_files[] = {"stubs/linpack.idl", "stubs/blas.idl", "stubs/lapack.idl",
                                        "stubs/sdpa.idl", "tests/client/strmod.idl"};

static iface_t *ifaces; /* malloc'd once, kept for the process */
static uint32_t nifaces;

/* Compiles one IDL file and registers its routines as decoded descriptors. */
static void load_file(const char *relative)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", FUZZ_SRCDIR, relative);
    ast_file file;
    sema_unit unit;
    ast_file_init(&file, path);
    if (ast_parse_file(&file) != 0 || sema_check(&file, &unit) != 0) {
        fprintf(stderr, "fuzz: %s does not compile\n", path);
        abort();
    }
    ast_file_free(&file);
    iface_t *grown = realloc(ifaces, (nifaces + unit.count) * sizeof *grown);
    if (grown == NULL) abort();
    ifaces = grown;
    for (size_t i = 0; i < unit.count; i++) {
        uint8_t *blob;
        size_t len;
        err_t err;
        if (iface_encode(&unit.routines[i].iface, &blob, &len, &err) != 0 ||
            iface_decode(blob, len, &ifaces[nifaces], &err) != 0) {
            fprintf(stderr, "fuzz: %s: %s\n", path, err.detail);
            abort();
        }
        free(blob);
        nifaces++;
    }
    sema_unit_free(&unit);
}

static void load_ifaces(void)
{
    if (ifaces != NULL) return;
    for (size_t i = 0; i < sizeof idl_files / sizeof idl_files[0]; i++) load_file(idl_files[i]);
}

uint32_t fuzz_iface_count(void)
{
    load_ifaces();
    return nifaces;
}

const iface_t *fuzz_iface_at(uint32_t i)
{
    load_ifaces();
    return i < nifaces ? &ifaces[i] : NULL;
}

const iface_t *fuzz_iface_find(const char *name)
{
    load_ifaces();
    for (uint32_t i = 0; i < nifaces; i++)
        if (strcmp(ifaces[i].name, name) == 0) return &ifaces[i];
    return NULL;
}

/* ---- Bytes off the front ---- */

uint8_t fuzz_take_byte(fuzz_cursor *c)
{
    if (c->left == 0) return 0;
    c->left--;
    return *c->p++;
}

/* ---- A caller's arguments ---- */

/* A string buffer of bound + 1 bytes holding text (cut to fit). */
static char *string_buffer(int64_t bound, const char *text)
{
    char *s = calloc((size_t)bound + 1, 1);
    if (s == NULL) abort();
    snprintf(s, (size_t)bound + 1, "%s", text);
    return s;
}

static void fill_strings(const iface_param *p, fuzz_args *a, uint32_t i)
{
    const iface_shape *s = &a->shapes[i];
    int out = iface_param_in_reply(p);
    if (p->rank == 0) {
        a->scalars[i].s = out ? string_buffer(s->bound, "abc") : strdup("abc");
        return;
    }
    char **table = calloc(s->mem_elems ? s->mem_elems : 1, sizeof *table);
    if (table == NULL) abort();
    for (uint64_t j = 0; j < s->wire_elems; j++) {
        uint64_t at = (uint64_t)s->start[0] + j * (uint64_t)s->stride[0];
        table[at] = out ? string_buffer(s->bound, "w") : strdup("w");
    }
    a->owned[i] = table;
    a->argv[i] = table;
}

int fuzz_args_fill(const iface_t *f, fuzz_cursor *c, const char *file_path, fuzz_args *a)
{
    static const char letters[] = "NVULTA";
    err_t err;
    memset(a, 0, sizeof *a);
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        a->argv[i] = p->rank == 0 ? &a->scalars[i] : NULL;
        if (p->rank != 0) continue;
        switch (p->type) {
        case NUMRPC_T_INT: a->scalars[i].i = fuzz_take_byte(c) % 32; break;
        case NUMRPC_T_LONG: a->scalars[i].l = fuzz_take_byte(c) % 32; break;
        case NUMRPC_T_CHAR: a->scalars[i].c = letters[fuzz_take_byte(c) % 6]; break;
        case NUMRPC_T_DOUBLE: a->scalars[i].d = 1.5; break;
        case NUMRPC_T_FLOAT: a->scalars[i].f = 2.5f; break;
        case NUMRPC_T_FILE:
        case NUMRPC_T_RFILE: a->scalars[i].s = (char *)file_path; break;
        default: break;
        }
    }
    if (marshal_eval_shapes(f, a->argv, a->shapes, &err) != 0) return -1;
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (p->type == NUMRPC_T_STRING) {
            fill_strings(p, a, i);
            continue;
        }
        if (p->rank == 0) continue;
        size_t bytes = (size_t)a->shapes[i].mem_elems * iface_type_size(p->type);
        uint8_t *block = malloc(bytes ? bytes : 1);
        if (block == NULL) abort();
        for (size_t k = 0; k < bytes; k++) block[k] = (uint8_t)(k * 13 + i);
        a->owned[i] = block;
        a->argv[i] = block;
    }
    return 0;
}

void fuzz_args_free(const iface_t *f, fuzz_args *a)
{
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (p->type == NUMRPC_T_STRING && p->rank == 0) free(a->scalars[i].s);
        if (p->type == NUMRPC_T_STRING && p->rank > 0 && a->owned[i])
            for (uint64_t j = 0; j < a->shapes[i].mem_elems; j++) free(((char **)a->owned[i])[j]);
        free(a->owned[i]);
    }
    memset(a, 0, sizeof *a);
}
