/* events.c -- numrpc_watch: subscribes to a metaserver's events (SUBSCRIBE)
 * and hands each EVENT, checked, to the caller's function in its thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "init.h"
#include "lasterr.h"
#include "msg_event.h"
#include "protocol.h"
#include "sock.h"

/* The metaserver sends a keepalive after 5 s of quiet: this much silence
 * means it is gone. */
#define WATCH_SILENCE_SECONDS 20.0
#define WATCH_CONNECT_SECONDS 10.0

/* Reads events from c (subscribed under call id sub) until fn stops it,
 * end passes (0: never) or the connection fails. */
static int read_events(client_conn *c, uint32_t sub, double end, numrpc_event_fn fn, void *arg, err_t *err)
{
    wire_reader *r = &c->m.reader;
    for (;;) {
        double now = sock_now(), limit = now + WATCH_SILENCE_SECONDS;
        int to_end = end > 0 && end < limit;
        uint64_t bytes0 = wire_reader_bytes(r);
        uint32_t type, id;
        wire_reader_set_deadline(r, to_end ? end : limit);
        int rc = wire_next_message(r, &type, &id, err);
        if (rc == NUMRPC_ETIMEDOUT && to_end) return 0;
        if (rc == NUMRPC_ETIMEDOUT && wire_reader_bytes(r) > bytes0) continue; /* keepalives came */
        if (rc == NUMRPC_ETIMEDOUT)
            return err_set(err, NUMRPC_ETIMEDOUT, "%s: the metaserver sent nothing for %.0f s, not even a keepalive",
                           c->m.label, WATCH_SILENCE_SECONDS);
        if (rc != 0) return rc;
        if (type != PROTO_META_EVENT || id != sub)
            return err_set(err, NUMRPC_EPROTO, "%s: message %u (call %u) in an event stream", c->m.label, type, id);
        msg_event e;
        rc = msg_read_meta_event(r, &e, err);
        if (rc != 0) return rc;
        numrpc_event pub = {.type = msg_event_type_name(e.type),
                            .time = e.time,
                            .server = e.server,
                            .name = e.name,
                            .routine = e.routine,
                            .detail = e.detail};
        if (fn(&pub, arg) != 0) return 0;
    }
}

int numrpc_watch(const char *metaserver, const char *types, numrpc_event_fn fn, void *arg, double seconds)
{
    err_t err;
    endpoint ep;
    uint32_t mask = 0;
    client_conn *c = NULL;
    const char *where = metaserver && *metaserver ? metaserver : getenv("NUMRPC_METASERVER");
    int rc = fn && seconds >= 0 && seconds < 1e9 ? 0 : err_set(&err, NUMRPC_EINVAL, "numrpc_watch: no function, or seconds < 0");
    if (rc == 0) rc = msg_event_mask_of(types, &mask, &err);
    if (rc == 0 && (where == NULL || *where == '\0'))
        rc = err_set(&err, NUMRPC_EINVAL, "numrpc_watch: no metaserver (pass one, or set NUMRPC_METASERVER)");
    if (rc == 0) rc = client_ensure_init(&err);
    if (rc == 0) rc = endpoint_set(&ep, where, &err);
    double start = sock_now();
    uint32_t id = client_next_call_id();
    int setup = rc;
    /* A pooled connection may have gone stale: then once more on a new one. */
    for (int attempt = 0; setup == 0 && attempt < 2; attempt++) {
        rc = conn_acquire(&ep, start + WATCH_CONNECT_SECONDS, &c, &err);
        if (rc == 0) rc = msg_write_meta_subscribe(&c->m.writer, id, mask, &err);
        if (rc == 0) rc = conn_read_reply_status(c, id, &err);
        if (rc == 0) rc = wire_expect_end(&c->m.reader, &err); /* a status-only reply */
        if (rc == 0 || c == NULL || !c->reused || rc != NUMRPC_EIO) break;
        conn_discard(c);
        c = NULL;
    }
    if (rc == 0) rc = read_events(c, id, seconds > 0 ? start + seconds : 0, fn, arg, &err);
    conn_discard(c); /* a subscribed connection never goes back to the pool */
    if (rc != 0) return client_fail(&err);
    client_succeed();
    return 0;
}
