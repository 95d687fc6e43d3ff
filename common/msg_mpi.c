/* msg_mpi.c -- the writers and readers of MPI_START, MPI_CALL, MPI_HELD,
 * MPI_ARRAYS and MPI_REPLY (worker <-> rank 0 of the MPI job); every field
 * from the peer checked here. */
#include "msg_mpi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "marshal.h"
#include "protocol.h"

/* ---- MPI_START ---- */

int msg_mpi_write_start(wire_writer *w, err_t *err)
{
    int rc = wire_begin(w, PROTO_MPI_START, 0);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_mpi_read_start(wire_reader *r, err_t *err)
{
    uint32_t type, id;
    int rc = wire_next_message(r, &type, &id, err);
    if (rc != 0) return rc;
    if (type != PROTO_MPI_START)
        return err_set(err, NUMRPC_EPROTO, "the MPI job sent message type %u, not MPI_START", type);
    return wire_expect_end(r, err);
}

/* ---- MPI_CALL ---- */

/* shapes with no array held: on the job every array travels unless rank 0
 * says it holds it. */
static void all_travel(const iface_t *f, const iface_shape *shapes, iface_shape *out)
{
    for (uint32_t i = 0; i < f->nparams; i++) {
        out[i] = shapes[i];
        out[i].held = 0;
    }
}

/* Shapes with every array held: the walker writes the scalars alone. */
static void scalars_only(const iface_t *f, iface_shape *out)
{
    for (uint32_t i = 0; i < f->nparams; i++) out[i] = (iface_shape){.held = f->params[i].rank > 0};
}

static int write_handles(wire_writer *w, const msg_mpi_handles *hs, err_t *err)
{
    uint32_t n = hs ? hs->n : 0;
    int rc = wire_put_u32(w, n, err);
    for (uint32_t k = 0; rc == 0 && k < n; k++) {
        const msg_mpi_handle *h = &hs->h[k];
        rc = wire_put_u32(w, h->param, err);
        if (rc == 0) rc = wire_put_u32(w, h->flags, err);
        if (rc == 0) rc = wire_put(w, h->key.id, sizeof h->key.id, err);
        if (rc == 0) rc = wire_put_u64(w, h->key.version, err);
        if (rc == 0) rc = wire_put_u64(w, h->next_version, err);
    }
    return rc;
}

int msg_mpi_write_call(wire_writer *w, uint32_t call_id, const uint8_t *blob, uint32_t len, const iface_t *f,
                       void *const *argv, const msg_mpi_handles *handles, err_t *err)
{
    iface_shape none[IFACE_MAX_PARAMS];
    scalars_only(f, none);
    int rc = wire_begin(w, PROTO_MPI_CALL, call_id);
    if (rc == 0) rc = wire_put_opaque(w, blob, len, err);
    if (rc == 0) rc = wire_pad8(w, err);
    if (rc == 0) rc = marshal_write(w, f, argv, none, MARSHAL_REQUEST, err);
    if (rc == 0) rc = write_handles(w, handles, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

/* One handle of MPI_CALL, checked against the routine: an array parameter
 * after the previous one's, flags its mode allows, versions given. */
static int check_handle(const iface_t *f, const msg_mpi_handle *h, int64_t previous, err_t *err)
{
    if (h->param >= f->nparams || (int64_t)h->param <= previous || f->params[h->param].rank == 0)
        return err_set(err, NUMRPC_EPROTO, "%s: a handle names parameter %u, not a next array", f->name, h->param);
    const iface_param *p = &f->params[h->param];
    int reads = p->mode == IFACE_IN || p->mode == IFACE_INOUT, writes = p->mode == IFACE_OUT || p->mode == IFACE_INOUT;
    int now = (h->flags & MSG_MPI_KEY_NOW) != 0, next = (h->flags & MSG_MPI_KEY_NEXT) != 0;
    if (h->flags == 0 || (h->flags & ~(uint32_t)(MSG_MPI_KEY_NOW | MSG_MPI_KEY_NEXT)) || (now && !reads) ||
        (next && !writes) || (now && h->key.version == 0) || (next && h->next_version == 0) ||
        (now && next && h->next_version == h->key.version))
        return err_set(err, NUMRPC_EPROTO, "%s: the handle of %s has flags %#x and versions %llu, %llu", f->name,
                       p->name, h->flags, (unsigned long long)h->key.version, (unsigned long long)h->next_version);
    return 0;
}

static int read_handles(wire_reader *r, const iface_t *f, msg_mpi_handles *hs, err_t *err)
{
    int rc = wire_get_u32(r, &hs->n, err);
    if (rc == 0 && hs->n > f->nparams)
        return err_set(err, NUMRPC_EPROTO, "%s: %u handles for %u parameters", f->name, hs->n, f->nparams);
    int64_t previous = -1;
    for (uint32_t k = 0; rc == 0 && k < hs->n; k++) {
        msg_mpi_handle *h = &hs->h[k];
        rc = wire_get_u32(r, &h->param, err);
        if (rc == 0) rc = wire_get_u32(r, &h->flags, err);
        if (rc == 0) rc = wire_get(r, h->key.id, sizeof h->key.id, err);
        if (rc == 0) rc = wire_get_u64(r, &h->key.version, err);
        if (rc == 0) rc = wire_get_u64(r, &h->next_version, err);
        if (rc == 0) rc = check_handle(f, h, previous, err);
        previous = h->param;
    }
    return rc;
}

void msg_mpi_call_free(msg_mpi_call *c)
{
    for (uint32_t i = 0; i < c->f.nparams; i++)
        if (c->f.params[i].rank > 0) free(c->argv[i]);
    iface_free(&c->f);
    memset(c, 0, sizeof *c);
}

/* What the job takes: an MPI routine of numbers and chars. */
static int check_routine(const iface_t *f, err_t *err)
{
    if (f->backend != IFACE_BACKEND_MPI)
        return err_set(err, NUMRPC_EPROTO, "%s is not an MPI routine", f->name);
    for (uint32_t i = 0; i < f->nparams; i++) {
        uint32_t type = f->params[i].type;
        if (type == NUMRPC_T_STRING || iface_type_is_file(type))
            return err_set(err, NUMRPC_EPROTO, "%s: parameter %s is a %s, which no MPI routine takes", f->name,
                           f->params[i].name, iface_type_name(type));
    }
    return 0;
}

/* The bytes of every array block of the call, or NUMRPC_ELIMIT past max. */
static int measure(msg_mpi_call *c, uint64_t max_bytes, err_t *err)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < c->f.nparams; i++) {
        const iface_param *p = &c->f.params[i];
        uint64_t bytes;
        if (p->rank == 0) continue;
        if (__builtin_mul_overflow(c->shapes[i].mem_elems, (uint64_t)iface_type_size(p->type), &bytes) ||
            __builtin_add_overflow(total, bytes, &total) || total > max_bytes)
            return err_set(err, NUMRPC_ELIMIT, "%s: its arrays need more than the MPI job's %llu bytes per call",
                           c->f.name, (unsigned long long)max_bytes);
    }
    c->array_bytes = total;
    return 0;
}

static int allocate_blocks(msg_mpi_call *c, err_t *err)
{
    for (uint32_t i = 0; i < c->f.nparams; i++) {
        const iface_param *p = &c->f.params[i];
        if (p->rank == 0) continue;
        size_t bytes = (size_t)c->shapes[i].mem_elems * iface_type_size(p->type);
        c->argv[i] = calloc(bytes ? bytes : 1, 1);
        if (c->argv[i] == NULL)
            return err_set(err, NUMRPC_ENOMEM, "%s: %zu bytes for %s", c->f.name, bytes, p->name);
    }
    return 0;
}

int msg_mpi_read_call(wire_reader *r, uint64_t max_bytes, msg_mpi_call *c, err_t *err)
{
    uint8_t *blob = NULL;
    uint32_t len = 0;
    memset(c, 0, sizeof *c);
    int rc = wire_get_opaque(r, &blob, &len, IFACE_MAX_BLOB, err);
    if (rc == 0) rc = wire_skip_pad8(r, err);
    if (rc == 0) rc = iface_decode(blob, len, &c->f, err);
    free(blob);
    if (rc == 0) rc = check_routine(&c->f, err);
    /* Arrays stay NULL until allocated (msg_mpi_call_free frees those). */
    for (uint32_t i = 0; rc == 0 && i < c->f.nparams; i++)
        c->argv[i] = c->f.params[i].rank > 0 ? NULL : &c->scalars[i];
    if (rc == 0) rc = marshal_read_scalars(r, &c->f, c->argv, NULL, MARSHAL_REQUEST, err);
    if (rc == 0) rc = marshal_eval_shapes(&c->f, c->argv, c->shapes, err);
    if (rc == 0) rc = measure(c, max_bytes, err);
    if (rc == 0) rc = read_handles(r, &c->f, &c->handles, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    if (rc == 0) rc = allocate_blocks(c, err);
    if (rc != 0) msg_mpi_call_free(c);
    return rc;
}

/* ---- MPI_HELD ---- */

int msg_mpi_write_held(wire_writer *w, uint32_t call_id, const msg_mpi_call *c, err_t *err)
{
    uint32_t n = 0, nparams = c ? c->f.nparams : 0;
    for (uint32_t i = 0; i < nparams; i++) n += c->shapes[i].held != 0;
    int rc = wire_begin(w, PROTO_MPI_HELD, call_id);
    if (rc == 0) rc = wire_put_u32(w, n, err);
    for (uint32_t i = 0; rc == 0 && i < nparams; i++)
        if (c->shapes[i].held) rc = wire_put_u32(w, i, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

/* Whether the call offered param's bytes by key (MSG_MPI_KEY_NOW). */
static int offered(const msg_mpi_handles *hs, uint32_t param)
{
    for (uint32_t k = 0; hs && k < hs->n; k++)
        if (hs->h[k].param == param) return (hs->h[k].flags & MSG_MPI_KEY_NOW) != 0;
    return 0;
}

/* The worker: the next message from rank 0 must be want_type (its name for
 * messages) answering call want_id. */
static int next_answer(wire_reader *r, uint32_t want_type, const char *name, uint32_t want_id, err_t *err)
{
    uint32_t type, id;
    int rc = wire_next_message(r, &type, &id, err);
    if (rc != 0) return rc;
    if (type != want_type || id != want_id)
        return err_set(err, NUMRPC_EPROTO, "the MPI job sent message type %u for call %u, not %s for %u", type, id,
                       name, want_id);
    return 0;
}

int msg_mpi_read_held(wire_reader *r, uint32_t want_id, const msg_mpi_handles *handles, iface_shape *shapes,
                      err_t *err)
{
    uint32_t n = 0;
    int rc = next_answer(r, PROTO_MPI_HELD, "MPI_HELD", want_id, err);
    if (rc == 0) rc = wire_get_u32(r, &n, err);
    int64_t previous = -1;
    for (uint32_t k = 0; rc == 0 && k < n; k++) {
        uint32_t param;
        rc = wire_get_u32(r, &param, err);
        if (rc == 0 && ((int64_t)param <= previous || !offered(handles, param)))
            rc = err_set(err, NUMRPC_EPROTO, "the MPI job holds parameter %u, which the call did not offer", param);
        if (rc == 0) shapes[param].held = 1;
        previous = param;
    }
    if (rc == 0) rc = wire_expect_end(r, err);
    return rc;
}

/* ---- MPI_ARRAYS ---- */

int msg_mpi_write_arrays(wire_writer *w, uint32_t call_id, const iface_t *f, void *const *argv,
                         const iface_shape *shapes, err_t *err)
{
    int rc = wire_begin(w, PROTO_MPI_ARRAYS, call_id);
    if (rc == 0) rc = marshal_write_arrays(w, f, argv, shapes, MARSHAL_REQUEST, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_mpi_read_arrays(wire_reader *r, msg_mpi_call *c, err_t *err)
{
    int rc = marshal_read_arrays(r, &c->f, c->argv, c->shapes, MARSHAL_REQUEST, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    return rc;
}

/* ---- MPI_REPLY ---- */

int msg_mpi_write_reply(wire_writer *w, uint32_t call_id, int code, const char *detail,
                        const msg_mpi_phases *ph, const iface_t *f, void *const *argv,
                        const iface_shape *shapes, err_t *err)
{
    int rc = wire_begin(w, PROTO_MPI_REPLY, call_id);
    if (rc == 0) rc = wire_put_u32(w, (uint32_t)code, err);
    if (rc == 0) rc = wire_put_string(w, code ? detail : "", err);
    if (rc == 0) rc = wire_pad8(w, err);
    if (rc == 0) rc = wire_put_double(w, ph->scatter_s, err);
    if (rc == 0) rc = wire_put_double(w, ph->compute_s, err);
    if (rc == 0) rc = wire_put_double(w, ph->gather_s, err);
    if (rc == 0 && code == 0) {
        iface_shape sent[IFACE_MAX_PARAMS];
        all_travel(f, shapes, sent);
        rc = marshal_write(w, f, argv, sent, MARSHAL_REPLY, err);
    }
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

/* A phase's seconds: finite, not negative, under a year. */
static int get_seconds(wire_reader *r, double *s, err_t *err)
{
    int rc = wire_get_double(r, s, err);
    if (rc == 0 && !(isfinite(*s) && *s >= 0 && *s < 3.2e7))
        rc = err_set(err, NUMRPC_EPROTO, "the MPI job reported a phase of %g seconds", *s);
    return rc;
}

int msg_mpi_read_reply(wire_reader *r, uint32_t want_id, const iface_t *f, void *const *argv,
                       const iface_shape *shapes, msg_mpi_phases *ph, err_t *call_err, err_t *err)
{
    uint32_t status = 0;
    char detail[ERR_DETAIL_MAX];
    err_clear(call_err);
    int rc = next_answer(r, PROTO_MPI_REPLY, "MPI_REPLY", want_id, err);
    if (rc == 0) rc = wire_get_u32(r, &status, err);
    if (rc == 0) rc = wire_get_string_into(r, detail, sizeof detail, ERR_DETAIL_MAX, err);
    if (rc == 0) rc = wire_skip_pad8(r, err);
    if (rc == 0) rc = get_seconds(r, &ph->scatter_s, err);
    if (rc == 0) rc = get_seconds(r, &ph->compute_s, err);
    if (rc == 0) rc = get_seconds(r, &ph->gather_s, err);
    if (rc != 0) return rc;
    int code = (int)(int32_t)status;
    if (code != 0) {
        if (code > 0 || !numrpc_error_valid(code))
            return err_set(err, NUMRPC_EPROTO, "the MPI job sent status %d", code);
        rc = wire_expect_end(r, err);
        if (rc == 0) err_set(call_err, code, "%s", detail);
        return rc;
    }
    iface_shape got[IFACE_MAX_PARAMS];
    all_travel(f, shapes, got);
    rc = marshal_read_scalars(r, f, argv, got, MARSHAL_REPLY, err);
    if (rc == 0) rc = marshal_read_arrays(r, f, argv, got, MARSHAL_REPLY, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    return rc;
}
