/* place.c -- the client's side of handles in calls: a handle passed where
 * an array goes is checked, marked held, and decides where the call runs. */
#include "place.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iface_cache.h"
#include "init.h"
#include "marshal.h"
#include "meta.h"

/* "double 10 x 10 (100 elements)": the memory block of parameter p. */
static void describe_block(const iface_param *p, const iface_shape *s, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "%s ", iface_type_name(p->type));
    for (uint32_t d = 0; d < p->rank && used < len; d++)
        used += (size_t)snprintf(buf + used, len - used, "%s%lld", d ? " x " : "", (long long)s->size[d]);
    if (used < len) snprintf(buf + used, len - used, " (%llu elements)", (unsigned long long)s->mem_elems);
}

/* "double 4 x 4, ld 4 (16 elements)": what handle h holds. */
static void describe_handle(const msg_data_shape *h, char *buf, size_t len)
{
    snprintf(buf, len, "%s %llu x %llu, ld %llu (%llu elements)", iface_type_name(h->type),
             (unsigned long long)h->rows, (unsigned long long)h->cols, (unsigned long long)h->ld,
             (unsigned long long)msg_data_mem_elems(h));
}

static int check_handle(const iface_t *f, uint32_t i, const iface_shape *s, const handle_facts *h,
                        const char *label, err_t *err)
{
    const iface_param *p = &f->params[i];
    char hex[2 * MSG_DATA_ID_SIZE + 1], want[160], have[160];
    msg_data_id_hex(&h->id, hex);
    if (label && strcmp(label, h->server.label) != 0)
        return err_set(err, NUMRPC_EINVAL, "%s: handle %s (argument %s) is on %s, the call goes to %s: refused",
                       f->name, hex, p->name, h->server.label, label);
    if (h->shape.type == p->type && s->mem_elems <= msg_data_mem_elems(&h->shape)) return 0;
    describe_block(p, s, want, sizeof want);
    describe_handle(&h->shape, have, sizeof have);
    return err_set(err, NUMRPC_EINVAL, "%s: parameter %s needs %s, handle %s holds %s: refused before sending",
                   f->name, p->name, want, hex, have);
}

/* Parameter p's argument can be a handle: an array that travels. */
static int may_be_handle(const iface_param *p)
{
    return p->rank > 0 && p->mode != IFACE_WORK;
}

int place_bind_handles(call_obj *k, const iface_t *f, const char *label, err_t *err)
{
    k->nhandles = 0;
    int any = handles_count() > 0;
    for (uint32_t i = 0; i < f->nparams; i++) {
        k->shapes[i].held = 0;
        handle_facts h;
        if (!may_be_handle(&f->params[i])) continue;
        if (!any || !handles_lookup(k->argv[i], &h)) {
            if (handles_is_name(k->argv[i])) /* a handle's name, not memory: never followed */
                return err_set(err, NUMRPC_EINVAL, "%s: %s: handle %p was freed (or made by another process)",
                               f->name, f->params[i].name, k->argv[i]);
            continue;
        }
        if (moves_find(k->moves, k->argv[i], &h.id)) h.server = k->moves->target; /* its copy there */
        int rc = check_handle(f, i, &k->shapes[i], &h, label, err);
        if (rc != 0) return rc;
        k->shapes[i].held = 1;
        k->handles[k->nhandles].param = i;
        k->handles[k->nhandles].id = h.id;
        k->nhandles++;
    }
    return 0;
}

/* One handle a call names. */
typedef struct named_handle {
    const numrpc_data *h;
    handle_facts f;
    uint32_t param;
    int writes; /* an OUT or INOUT parameter */
} named_handle;

static uint64_t wire_bytes(const msg_data_shape *s)
{
    return msg_data_wire_elems(s) * iface_type_size(s->type);
}

/* The bytes of the n handles per server, each handle once, into held
 * (room for MSG_META_MAX_HELD servers; handles on more are left out). */
static uint32_t held_bytes(const named_handle *hs, int n, msg_meta_held *held)
{
    uint32_t nheld = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = hs[j].h == hs[i].h;
        uint32_t at = 0;
        while (at < nheld && strcmp(held[at].server, hs[i].f.server.label) != 0) at++;
        if (seen || (at == nheld && nheld == MSG_META_MAX_HELD)) continue;
        if (at == nheld) {
            snprintf(held[at].server, sizeof held[at].server, "%s", hs[i].f.server.label);
            held[at].bytes = 0;
            nheld++;
        }
        held[at].bytes += wire_bytes(&hs[i].f.shape);
    }
    return nheld;
}

/* For a call reading handles on two servers or more (k bound against f):
 * the handle whose server the metaserver ranks first among theirs, the
 * handles' bytes counted as already on their servers (an index into hs),
 * or -1 when it cannot say (no answer, or none of them ranked). */
static int ranked_holder(const iface_t *f, call_obj *k, const named_handle *hs, int n)
{
    msg_meta_held held[MSG_META_MAX_HELD];
    endpoint eps[CLIENT_MAX_SERVERS];
    err_t ignored; /* the rule without the metaserver applies */
    uint32_t nheld = held_bytes(hs, n, held);
    if (nheld < 2 || marshal_eval_shapes(f, k->argv, k->shapes, &ignored) != 0) return -1;
    for (int i = 0; i < n; i++) k->shapes[hs[i].param].held = 1;
    int ranked = meta_rank_held(f, k, held, nheld, eps, &ignored);
    for (int r = 0; r < ranked; r++)
        for (int i = 0; i < n; i++)
            if (strcmp(eps[r].label, hs[i].f.server.label) == 0) return i;
    return -1;
}

/* Which of the n handles' servers the call runs on (an index into hs):
 * the one holding the written handles, else the metaserver's choice
 * (preferred, -1: none), else the one holding the most bytes (the first
 * named among equals).  EINVAL when written handles live on two servers. */
static int pick_target(const char *routine, const named_handle *hs, int n, int preferred, int *target, err_t *err)
{
    int writer = -1, best = 0;
    uint64_t best_bytes = 0;
    for (int i = 0; i < n; i++) {
        if (hs[i].writes && writer < 0) writer = i;
        else if (hs[i].writes && strcmp(hs[writer].f.server.label, hs[i].f.server.label) != 0) {
            char a[2 * MSG_DATA_ID_SIZE + 1], b[2 * MSG_DATA_ID_SIZE + 1];
            msg_data_id_hex(&hs[writer].f.id, a);
            msg_data_id_hex(&hs[i].f.id, b);
            return err_set(err, NUMRPC_EINVAL, "%s: the call writes handles on two servers (%s on %s, %s on %s): a "
                           "call runs where its written handles are, so they must be on one server",
                           routine, a, hs[writer].f.server.label, b, hs[i].f.server.label);
        }
        uint64_t bytes = 0;
        for (int j = 0; j < n; j++)
            if (strcmp(hs[j].f.server.label, hs[i].f.server.label) == 0) bytes += wire_bytes(&hs[j].f.shape);
        if (bytes > best_bytes) best = i, best_bytes = bytes;
    }
    *target = writer >= 0 ? writer : preferred >= 0 ? preferred : best;
    return 0;
}

/* The handles k's arguments (src, bound into k here: the call's one
 * bind) name for its routine's parameters, into hs (at most
 * IFACE_MAX_PARAMS); their count or an error.  When a metaserver is
 * configured and the call only reads its handles, *preferred is
 * ranked_holder's answer (else -1). */
static int named_handles(call_obj *k, arg_source *src, named_handle *hs, int *preferred, err_t *err)
{
    int ask_meta = 1;
    endpoint eps[2 * CLIENT_MAX_SERVERS];
    err_t ignored;
    int n = handles_servers(eps, CLIENT_MAX_SERVERS);
    int more = client_servers(eps + n, &ignored); /* when no handle's server answers */
    if (more > 0) n += more;
    iface_ref *ref = NULL;
    int rc = iface_find(eps, n, k->routine, k->deadline, &ref, err); /* for binding */
    if (rc == 0) rc = call_bind(k, &ref->iface, src, err);
    int found = 0;
    for (uint32_t i = 0; rc == 0 && i < ref->iface.nparams; i++) {
        const iface_param *p = &ref->iface.params[i];
        if (!may_be_handle(p) || !handles_lookup(k->argv[i], &hs[found].f)) continue;
        hs[found].h = k->argv[i];
        hs[found].param = i;
        hs[found].writes = p->mode == IFACE_OUT || p->mode == IFACE_INOUT;
        ask_meta &= !hs[found].writes;
        found++;
    }
    *preferred = rc == 0 && ask_meta && found > 1 && meta_enabled() ? ranked_holder(&ref->iface, k, hs, found) : -1;
    if (ref) iface_cache_put(ref);
    return rc != 0 ? rc : found;
}

int place_call(call_obj *k, arg_source *src, endpoint *ep, handle_facts *first, handle_moves *moves, err_t *err)
{
    if (handles_count() == 0) return 0;
    named_handle hs[IFACE_MAX_PARAMS];
    int preferred = -1, target = 0;
    int n = named_handles(k, src, hs, &preferred, err);
    if (n <= 0) return n;
    int rc = pick_target(k->routine, hs, n, preferred, &target, err);
    *ep = hs[target].f.server;
    *first = hs[target].f;
    for (int i = 0; rc == 0 && i < n; i++) {
        if (strcmp(hs[i].f.server.label, ep->label) == 0) continue;
        rc = move_handle(moves, ep, hs[i].h, &hs[i].f, k->deadline, err);
    }
    if (rc != 0) moves_release(moves);
    return rc != 0 ? rc : 1;
}

void place_name_handle(err_t *err, const handle_facts *h)
{
    char hex[2 * MSG_DATA_ID_SIZE + 1], prefix[2 * MSG_DATA_ID_SIZE + CLIENT_HOST_MAX + 32];
    msg_data_id_hex(&h->id, hex);
    snprintf(prefix, sizeof prefix, "handle %s on %s", hex, h->server.label);
    err_prefix(err, prefix);
}
