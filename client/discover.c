/* discover.c -- what a server offers: the routine list and a routine's
 * interface rendered as IDL (numrpc_list, numrpc_describe). */
#include "client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "marshal.h"

/* The endpoint for an optional "host:port" or URL, else the first server. */
static int pick_endpoint(const char *where, endpoint *ep, char *routine, size_t len, err_t *err)
{
    int rc = client_ensure_init(err);
    if (rc != 0) return rc;
    if (routine) {
        int is_url = client_parse_url(where, ep, routine, len, err);
        if (is_url != 0) return is_url < 0 ? is_url : 0;
    } else if (where) {
        return endpoint_set(ep, where, err);
    }
    endpoint eps[CLIENT_MAX_SERVERS];
    int n = client_servers(eps, err);
    if (n < 0) return n;
    *ep = eps[0];
    return 0;
}

static int read_list(client_conn *c, char **names_out, err_t *err)
{
    uint32_t call_id = client_next_call_id(), count;
    wire_begin(&c->writer, PROTO_LIST, call_id);
    int rc = wire_end(&c->writer, err);
    if (rc == 0) rc = conn_read_reply_status(c, call_id, err);
    if (rc == 0) rc = wire_get_u32(&c->reader, &count, err);
    if (rc != 0) return rc;
    size_t cap = 256, used = 0;
    char *out = malloc(cap);
    if (out == NULL) return err_set(err, NUMRPC_ENOMEM, "routine list");
    out[0] = '\0';
    for (uint32_t i = 0; rc == 0 && i < count; i++) {
        char *name = NULL;
        uint64_t hash;
        rc = wire_get_string(&c->reader, &name, IFACE_MAX_NAME, err);
        if (rc == 0) rc = wire_get_u64(&c->reader, &hash, err);
        if (rc == 0) {
            size_t need = used + strlen(name) + 2;
            if (need > cap) {
                char *grown = realloc(out, need * 2);
                if (grown == NULL) rc = err_set(err, NUMRPC_ENOMEM, "routine list");
                else {
                    out = grown;
                    cap = need * 2;
                }
            }
            if (rc == 0) used += (size_t)sprintf(out + used, "%s\n", name);
        }
        free(name);
    }
    if (rc == 0) rc = wire_expect_end(&c->reader, err);
    if (rc != 0) {
        free(out);
        return rc;
    }
    *names_out = out;
    return 0;
}

int numrpc_list(const char *server, char **names_out)
{
    err_t err;
    endpoint ep;
    client_conn *c = NULL;
    int rc = names_out ? pick_endpoint(server, &ep, NULL, 0, &err)
                       : err_set(&err, NUMRPC_EINVAL, "names_out is NULL");
    if (rc == 0) rc = conn_acquire(&ep, &c, &err);
    if (rc == 0) rc = read_list(c, names_out, &err);
    if (c) {
        if (rc == 0) conn_release(c);
        else conn_discard(c);
    }
    if (rc != 0) return client_fail(&err);
    client_succeed();
    return 0;
}

int numrpc_describe(const char *name, char **idl_out)
{
    err_t err;
    endpoint ep;
    char routine[IFACE_MAX_NAME + 1];
    client_conn *c = NULL;
    iface_ref *ref = NULL;
    int rc = name && idl_out ? pick_endpoint(name, &ep, routine, sizeof routine, &err)
                             : err_set(&err, NUMRPC_EINVAL, "name or idl_out is NULL");
    if (rc == 0) rc = conn_acquire(&ep, &c, &err);
    if (rc == 0) rc = iface_cache_get(c, routine, &ref, &err);
    if (rc == 0 && iface_render_idl(&ref->iface, idl_out) != 0)
        rc = err_set(&err, NUMRPC_ENOMEM, "rendering %s", routine);
    if (ref) iface_cache_put(ref);
    if (c) {
        if (rc == 0 || rc == NUMRPC_ENOENT) conn_release(c);
        else conn_discard(c);
    }
    if (rc != 0) return client_fail(&err);
    client_succeed();
    return 0;
}
