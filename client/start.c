/* start.c -- starting a call object, blocking or asynchronous alike: a URL,
 * the handles it names, the metaserver or the list; the one bind. */
#include "start.h"

#include "iface_cache.h"
#include "init.h"
#include "meta.h"
#include "place.h"

/* Captures an asynchronous call against the routine's interface: cached
 * for any of eps, else fetched from the first that answers (a cold call's
 * extra round trip). */
static int capture(call_obj *k, const endpoint *eps, int n, arg_source *src, err_t *err)
{
    iface_ref *ref = NULL;
    int rc = iface_find(eps, n, k->routine, k->deadline, &ref, err);
    if (rc == 0) {
        rc = call_capture(k, &ref->iface, src, err);
        iface_cache_put(ref);
    }
    return rc;
}

int call_start(call_obj *k, const char *name, arg_source *src, int async, endpoint *eps, handle_moves *moves,
               int *placed, handle_facts *named, err_t *err)
{
    *placed = 0;
    if (name == NULL) return err_set(err, NUMRPC_EINVAL, "routine name is NULL");
    int rc = client_ensure_init(err);
    if (rc != 0) return rc;
    int is_url = client_parse_url(name, &eps[0], k->routine, sizeof k->routine, err);
    if (is_url < 0) return is_url;
    int handles = is_url ? 0 : place_call(k, src, &eps[0], named, moves, err);
    if (handles < 0) return handles; /* a call naming handles runs where they are, and only there */
    *placed = handles;
    int n = 1;
    k->pinned = is_url || handles;
    if (k->pinned) k->pin = eps[0];
    else n = meta_enabled() ? meta_servers_for(k, src, eps, async, err) : client_servers(eps, err);
    if (n < 0) return n;
    if (async && (rc = capture(k, eps, n, src, err)) != 0) return rc;
    return n;
}
