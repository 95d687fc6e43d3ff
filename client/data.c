/* data.c -- numrpc_data_put/new/get/free: arrays kept on a server between
 * calls, each handle registered (handles.c) and its lease renewed (lease.c). */
#include "data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "call.h"
#include "dataio.h"
#include "handles.h"
#include "init.h"
#include "lasterr.h"
#include "lease.h"
#include "meta.h"
#include "place.h"
#include "protocol.h"
#include "sock.h"

#define FINALIZE_SECONDS 2.0 /* numrpc_finalize waits this long per server */
#define MAX_HANDLE_BYTES (1ull << 62)

/* The deadline of a data request: the calls' time limit (numrpc_set_timeout). */
static double request_deadline(void)
{
    double limit = call_timeout();
    return limit > 0 ? sock_now() + limit : 0;
}

/* Checks what the caller asks for and fills *s. */
static int check_request(const char *api, numrpc_data **h, int type, size_t rows, size_t cols, size_t ld,
                         msg_data_shape *s, err_t *err)
{
    uint64_t elems, bytes;
    if (h == NULL) return err_set(err, NUMRPC_EINVAL, "%s: h is NULL", api);
    if (type < NUMRPC_T_CHAR || type > NUMRPC_T_DCOMPLEX)
        return err_set(err, NUMRPC_EINVAL, "%s: type %d is not a numeric NUMRPC_T_* (char to double complex)", api,
                       type);
    if (rows == 0 || cols == 0 || ld < rows)
        return err_set(err, NUMRPC_EINVAL, "%s: a %zu x %zu array with leading dimension %zu (rows, cols >= 1, "
                       "ld >= rows)", api, rows, cols, ld);
    if (__builtin_mul_overflow((uint64_t)ld, (uint64_t)cols, &elems) ||
        __builtin_mul_overflow(elems, (uint64_t)iface_type_size((uint32_t)type), &bytes) || bytes > MAX_HANDLE_BYTES)
        return err_set(err, NUMRPC_EINVAL, "%s: %zu x %zu elements are too many", api, ld, cols);
    *s = (msg_data_shape){(uint32_t)type, rows, cols, ld};
    return 0;
}

/* Where a new handle of bytes goes: server, else the metaserver's pick,
 * else the first configured server (or one the metaserver named lately;
 * when there is none, the metaserver's reason is the error). */
static int pick_server(const char *api, const char *server, uint64_t bytes, endpoint *ep, err_t *err)
{
    endpoint eps[CLIENT_MAX_SERVERS];
    int rc, meta = server == NULL && meta_enabled();
    if (server) {
        rc = endpoint_set(ep, server, err);
    } else if (meta && meta_place_data(bytes, ep, err) == 0) {
        rc = 0;
    } else {
        err_t why = *err; /* the metaserver's reason, when it is asked */
        rc = client_servers(eps, err);
        if (rc > 0) *ep = eps[0];
        else if (meta) *err = why;
        rc = rc > 0 ? 0 : err->code;
    }
    if (rc != 0) err_prefix(err, api);
    return rc;
}

/* The end of a request on handle f (NULL for a new one) at ep: a failure
 * names the handle; a success's figures become the thread's last call info. */
static int finish(int rc, err_t *err, const handle_facts *f, const endpoint *ep, numrpc_call_info *info, double t0)
{
    if (rc != 0) {
        if (f) place_name_handle(err, f);
        return client_fail(err);
    }
    info->total_seconds = sock_now() - t0;
    call_set_server(info, ep->label);
    client_note_info(info);
    client_succeed();
    return 0;
}

static int make_handle(const char *api, numrpc_data **h, const char *server, int type, const void *a, size_t rows,
                       size_t cols, size_t ld)
{
    err_t err;
    numrpc_call_info info = {0};
    msg_data_shape s;
    endpoint ep;
    double t0 = sock_now();
    numrpc_data *d = NULL;
    err_clear(&err);
    int rc = check_request(api, h, type, rows, cols, ld, &s, &err);
    if (rc == 0) *h = NULL;
    if (rc == 0 && a == NULL && strcmp(api, "numrpc_data_put") == 0)
        rc = err_set(&err, NUMRPC_EINVAL, "%s: a is NULL", api);
    if (rc == 0) rc = client_ensure_init(&err);
    if (rc == 0) rc = pick_server(api, server, msg_data_wire_elems(&s) * iface_type_size(s.type), &ep, &err);
    if (rc == 0 && (d = calloc(1, sizeof *d)) == NULL) rc = err_set(&err, NUMRPC_ENOMEM, "%s: a handle", api);
    if (rc == 0) rc = dataio_put(&ep, &s, a, request_deadline(), &d->id, &d->lease_ms, &info, &err);
    if (rc != 0) {
        free(d);
        return finish(rc, &err, NULL, &ep, &info, t0);
    }
    d->shape = s;
    d->server = ep;
    d->owner = getpid();
    *h = handles_insert(d); /* its name: never d's address */
    lease_start();
    return finish(0, &err, NULL, &ep, &info, t0);
}

int numrpc_data_put(numrpc_data **h, const char *server, int type, const void *a, size_t rows, size_t cols,
                    size_t ld)
{
    return make_handle("numrpc_data_put", h, server, type, a, rows, cols, ld);
}

int numrpc_data_new(numrpc_data **h, const char *server, int type, size_t rows, size_t cols, size_t ld)
{
    return make_handle("numrpc_data_new", h, server, type, NULL, rows, cols, ld);
}

static int not_a_handle(const char *api, const numrpc_data *h)
{
    err_t err;
    err_set(&err, NUMRPC_EINVAL, "%s: %p is not a live handle of this process (freed, or not made by "
            "numrpc_data_put or numrpc_data_new)", api, (const void *)h);
    return client_fail(&err);
}

int numrpc_data_get(numrpc_data *h, void *a, size_t ld)
{
    err_t err;
    handle_facts f;
    numrpc_call_info info = {0};
    double t0 = sock_now();
    if (!handles_lookup(h, &f)) return not_a_handle("numrpc_data_get", h);
    int rc = 0;
    if (a == NULL) rc = err_set(&err, NUMRPC_EINVAL, "numrpc_data_get: a is NULL");
    else if (ld < f.shape.rows)
        rc = err_set(&err, NUMRPC_EINVAL, "numrpc_data_get: leading dimension %zu is less than the handle's %llu rows",
                     ld, (unsigned long long)f.shape.rows);
    if (rc == 0) rc = dataio_get(&f.server, &f.id, &f.shape, a, ld, request_deadline(), &info, &err);
    return finish(rc, &err, &f, &f.server, &info, t0);
}

int numrpc_data_free(numrpc_data *h)
{
    err_t err;
    numrpc_call_info info = {0};
    double t0 = sock_now();
    numrpc_data *d = handles_remove(h);
    if (d == NULL) return not_a_handle("numrpc_data_free", h);
    handle_facts f = {d->id, d->shape, d->server};
    int32_t status = 0;
    uint32_t lease_ms;
    int rc = dataio_ids(&f.server, PROTO_DATA_FREE, &f.id, 1, &status, &lease_ms, request_deadline(), &info, &err);
    if (rc == 0 && status != 0)
        rc = err_set(&err, status, "not there any more: freed, expired, or the server restarted");
    free(d);
    return finish(rc, &err, &f, &f.server, &info, t0);
}

void data_finalize(void)
{
    lease_stop();
    numrpc_data *list = handles_take_all();
    pid_t self = getpid();
    while (list) {
        /* The handles of the first one's server leave together. */
        endpoint ep = list->server;
        uint32_t n = 0;
        for (numrpc_data *h = list; h; h = h->next) n += h->owner == self && strcmp(h->server.label, ep.label) == 0;
        msg_data_id *ids = n ? malloc(n * sizeof *ids) : NULL;
        int32_t *statuses = n ? malloc(n * sizeof *statuses) : NULL;
        uint32_t got = 0, lease_ms;
        numrpc_data **link = &list;
        while (*link) {
            numrpc_data *h = *link;
            if (strcmp(h->server.label, ep.label) != 0) {
                link = &h->next;
                continue;
            }
            if (ids && h->owner == self) ids[got++] = h->id;
            *link = h->next;
            free(h);
        }
        numrpc_call_info info = {0};
        err_t err;
        if (ids && statuses && got > 0)
            (void)dataio_ids(&ep, PROTO_DATA_FREE, ids, got, statuses, &lease_ms, sock_now() + FINALIZE_SECONDS,
                             &info, &err); /* best effort: their leases end them otherwise */
        free(ids);
        free(statuses);
    }
}
