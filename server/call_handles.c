/* call_handles.c -- the data handles one CALL names: checked against its
 * shapes, mapped in place of the arrays, and the results kept on success. */
#include "call_handles.h"

#include <stdio.h>
#include <string.h>

void call_handles_init(call_handles *ch)
{
    memset(ch, 0, sizeof *ch);
}

int call_handles_read(call_handles *ch, wire_reader *r, uint32_t nargs, err_t *err)
{
    return msg_read_call_handles(r, nargs, ch->named, IFACE_MAX_PARAMS, &ch->n, err);
}

/* "ld x cols" of a handle, and "d0 x d1 ..." of a parameter's memory. */
static void describe_param(const iface_param *p, const iface_shape *sh, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (uint32_t d = 0; d < p->rank && at < len; d++)
        at += (size_t)snprintf(out + at, len - at, "%s%lld", d ? " x " : "", (long long)sh->size[d]);
}

/* Whether named handle k may stand for its parameter: 0, or EINVAL. */
static int check_fit(const iface_t *f, const msg_call_handle *named, const handle_ref *ref,
                     const iface_shape *shapes, err_t *err)
{
    const iface_param *p = &f->params[named->param];
    const iface_shape *sh = &shapes[named->param];
    char hex[2 * MSG_DATA_ID_SIZE + 1], dims[96];
    msg_data_id_hex(&named->id, hex);
    if (p->rank == 0 || p->type == NUMRPC_T_STRING || p->mode == IFACE_WORK)
        return err_set(err, NUMRPC_EINVAL, "%s: argument %s is %s %s; a handle (%s) stands only for an IN, OUT or "
                       "INOUT numeric array", f->name, p->name, p->rank ? "an array of" : "a scalar",
                       iface_type_name(p->type), hex);
    describe_param(p, sh, dims, sizeof dims);
    if (p->type != ref->shape.type || sh->mem_elems > msg_data_mem_elems(&ref->shape))
        return err_set(err, NUMRPC_EINVAL,
                       "%s: argument %s is %s[%s] (%llu elements); handle %s holds %s[%llu x %llu] (rows %llu) "
                       "and must hold at least as many of the same type",
                       f->name, p->name, iface_type_name(p->type), dims, (unsigned long long)sh->mem_elems, hex,
                       iface_type_name(ref->shape.type), (unsigned long long)ref->shape.ld,
                       (unsigned long long)ref->shape.cols, (unsigned long long)ref->shape.rows);
    return 0;
}

int call_handles_bind(call_handles *ch, const char *owner, const iface_t *f, iface_shape *shapes, void **argv,
                      err_t *err)
{
    for (uint32_t k = 0; k < ch->n; k++) {
        const msg_call_handle *named = &ch->named[k];
        const iface_param *p = &f->params[named->param];
        call_handle *b = &ch->bound[k];
        int writes = p->mode == IFACE_INOUT || p->mode == IFACE_OUT;
        int rc = writes ? handles_claim(server_handles, owner, &named->id, &b->ref, err)
                        : handles_find(server_handles, owner, &named->id, &b->ref, err);
        if (rc != 0) return rc;
        b->writes = writes; /* claimed: call_handles_end lets go */
        if (check_fit(f, named, &b->ref, shapes, err) != 0) return err->code;
        b->map = handles_map(server_handles, &b->ref, writes ? HANDLE_MAP_NEXT : HANDLE_MAP_READ, err);
        if (b->map == NULL) return err->code;
        if (p->mode == IFACE_OUT) memset(b->map, 0, (size_t)shapes[named->param].mem_elems * iface_type_size(p->type));
        shapes[named->param].held = 1;
        argv[named->param] = b->map;
    }
    return 0;
}

/* Keeps out ascending by parameter as k is added at its end. */
static void insert_sorted(msg_mpi_handles *out, const msg_mpi_handle *h)
{
    uint32_t at = out->n++;
    while (at > 0 && out->h[at - 1].param > h->param) {
        out->h[at] = out->h[at - 1];
        at--;
    }
    out->h[at] = *h;
}

void call_handles_keys(const call_handles *ch, const iface_t *f, msg_mpi_handles *out)
{
    out->n = 0;
    for (uint32_t k = 0; k < ch->n; k++) {
        const call_handle *b = &ch->bound[k];
        uint32_t param = ch->named[k].param;
        int reads = f->params[param].mode != IFACE_OUT;
        msg_mpi_handle h = {.param = param};
        memcpy(h.key.id, b->ref.id.b, sizeof h.key.id);
        if (reads && b->ref.version != 0) {
            h.flags |= MSG_MPI_KEY_NOW;
            h.key.version = b->ref.version;
        }
        if (b->writes) {
            h.flags |= MSG_MPI_KEY_NEXT;
            h.next_version = b->ref.next_version;
        }
        if (h.flags != 0) insert_sorted(out, &h);
    }
}

int call_handles_commit(call_handles *ch, err_t *err)
{
    for (uint32_t k = 0; k < ch->n; k++) {
        const call_handle *b = &ch->bound[k];
        if (b->writes && b->map != NULL && handles_commit(server_handles, &b->ref, err) != 0) return err->code;
        ch->bound[k].committed = 1;
    }
    return 0;
}

void call_handles_end(call_handles *ch)
{
    for (uint32_t k = 0; k < ch->n; k++) {
        call_handle *b = &ch->bound[k];
        if (b->map != NULL) handles_unmap(server_handles, &b->ref, b->map);
        if (b->writes && b->map != NULL && !b->committed) handles_abandon(server_handles, &b->ref);
        if (b->writes) handles_unclaim(server_handles, &b->ref);
        memset(b, 0, sizeof *b);
    }
    ch->n = 0;
}
