/* iface_cache.c -- interfaces fetched from servers, cached by server and
 * routine name, shared by reference count, refetched when stale; each one
 * fetched passes the client's gate (trust.h) before anything uses it. */
#include "iface_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failover.h"
#include "trust.h"

static iface_ref *cache; /* guarded by client_lock */

static void unref_locked(iface_ref *ref)
{
    if (--ref->refs == 0) {
        iface_free(&ref->iface);
        free(ref);
    }
}

static int fetch(client_conn *c, const char *name, iface_t *f, err_t *err)
{
    uint32_t call_id = client_next_call_id();
    uint8_t *blob = NULL;
    uint32_t len = 0;
    int rc = msg_write_get_iface(&c->m.writer, call_id, name, err);
    if (rc == 0) rc = conn_finish_hello(c, err);
    if (rc == 0) rc = msg_read_iface_reply(&c->m.reader, call_id, c->m.label, &blob, &len, err);
    if (rc == 0) rc = iface_decode(blob, len, f, err);
    if (rc == 0) {
        rc = trust_admit(f, name, blob, len, c->m.label, err); /* pins, the first binding */
        if (rc != 0) iface_free(f);
    }
    free(blob);
    return rc;
}

int iface_cache_get(client_conn *c, const char *name, iface_ref **out, err_t *err)
{
    pthread_mutex_lock(&client_lock);
    for (iface_ref *r = cache; r; r = r->next) {
        if (!r->stale && strcmp(r->label, c->m.label) == 0 && strcmp(r->iface.name, name) == 0) {
            r->refs++;
            pthread_mutex_unlock(&client_lock);
            *out = r;
            return 0;
        }
    }
    pthread_mutex_unlock(&client_lock);

    iface_ref *ref = calloc(1, sizeof *ref);
    if (ref == NULL) return err_set(err, NUMRPC_ENOMEM, "interface cache");
    int rc = fetch(c, name, &ref->iface, err);
    if (rc != 0) {
        free(ref);
        return rc;
    }
    snprintf(ref->label, sizeof ref->label, "%s", c->m.label);
    ref->refs = 2; /* the cache's and the caller's */
    pthread_mutex_lock(&client_lock);
    ref->next = cache;
    cache = ref;
    pthread_mutex_unlock(&client_lock);
    *out = ref;
    return 0;
}

iface_ref *iface_cache_peek(const char *label, const char *name)
{
    iface_ref *found = NULL;
    pthread_mutex_lock(&client_lock);
    for (iface_ref *r = cache; r && !found; r = r->next) {
        if (!r->stale && strcmp(r->label, label) == 0 && strcmp(r->iface.name, name) == 0) {
            r->refs++;
            found = r;
        }
    }
    pthread_mutex_unlock(&client_lock);
    return found;
}

void iface_cache_put(iface_ref *ref)
{
    pthread_mutex_lock(&client_lock);
    unref_locked(ref);
    pthread_mutex_unlock(&client_lock);
}

void iface_cache_invalidate(iface_ref *ref)
{
    pthread_mutex_lock(&client_lock);
    for (iface_ref **p = &cache; *p; p = &(*p)->next) {
        if (*p == ref) {
            *p = ref->next;
            ref->stale = 1;
            unref_locked(ref);
            break;
        }
    }
    pthread_mutex_unlock(&client_lock);
}

void iface_cache_clear(void)
{
    pthread_mutex_lock(&client_lock);
    iface_ref *list = cache;
    cache = NULL;
    while (list) {
        iface_ref *next = list->next;
        list->stale = 1;
        unref_locked(list);
        list = next;
    }
    pthread_mutex_unlock(&client_lock);
}

int iface_lookup(const endpoint *eps, int n, const char *routine, double deadline, iface_ref **out, int *at,
                 err_t *err)
{
    int rc = err_set(err, NUMRPC_ENOSERVER, "%s: no server to ask", routine);
    for (int i = 0; i < n; i++) {
        client_conn *c = NULL;
        rc = conn_acquire(&eps[i], deadline, &c, err);
        if (rc == 0) rc = iface_cache_get(c, routine, out, err);
        if (rc != 0 && c) rc = conn_explain_failure(c, rc, err); /* a refused TLS certificate: EAUTH */
        conn_done(c, rc);
        if (rc == 0 && at) *at = i;
        failover_facts facts = {rc, 0, 0, 0};
        if (rc == 0 || failover_decide(&facts) != FAILOVER_NEXT) break; /* the calls' rule */
    }
    return rc;
}

int iface_find(const endpoint *eps, int n, const char *routine, double deadline, iface_ref **out, err_t *err)
{
    for (int i = 0; i < n; i++)
        if ((*out = iface_cache_peek(eps[i].label, routine)) != NULL) return 0;
    return iface_lookup(eps, n, routine, deadline, out, NULL, err);
}
