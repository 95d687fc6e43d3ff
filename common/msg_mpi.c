/* msg_mpi.c -- the writers and readers of MPI_START, MPI_CALL and MPI_REPLY
 * (worker <-> rank 0 of the MPI job); every field from the peer checked here. */
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

/* shapes with no array held: on the job every array travels. */
static void all_travel(const iface_t *f, const iface_shape *shapes, iface_shape *out)
{
    for (uint32_t i = 0; i < f->nparams; i++) {
        out[i] = shapes[i];
        out[i].held = 0;
    }
}

int msg_mpi_write_call(wire_writer *w, uint32_t call_id, const uint8_t *blob, uint32_t len, const iface_t *f,
                       void *const *argv, const iface_shape *shapes, err_t *err)
{
    iface_shape sent[IFACE_MAX_PARAMS];
    all_travel(f, shapes, sent);
    int rc = wire_begin(w, PROTO_MPI_CALL, call_id);
    if (rc == 0) rc = wire_put_opaque(w, blob, len, err);
    if (rc == 0) rc = wire_pad8(w, err);
    if (rc == 0) rc = marshal_write(w, f, argv, sent, MARSHAL_REQUEST, err);
    if (rc == 0) rc = wire_end(w, err);
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
    if (rc == 0) rc = allocate_blocks(c, err);
    if (rc == 0) rc = marshal_read_arrays(r, &c->f, c->argv, c->shapes, MARSHAL_REQUEST, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    if (rc != 0) msg_mpi_call_free(c);
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
    uint32_t type, id, status = 0;
    char detail[ERR_DETAIL_MAX];
    err_clear(call_err);
    int rc = wire_next_message(r, &type, &id, err);
    if (rc != 0) return rc;
    if (type != PROTO_MPI_REPLY || id != want_id)
        return err_set(err, NUMRPC_EPROTO, "the MPI job sent message type %u for call %u, not MPI_REPLY for %u",
                       type, id, want_id);
    rc = wire_get_u32(r, &status, err);
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
