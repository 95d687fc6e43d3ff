/* fuzz_meta.c -- libFuzzer target: the metaserver's messages (msg_meta.c)
 * read both ways: requests by the metaserver, replies by servers and clients. */
#include <stdlib.h>

#include "fuzz_support.h"
#include "msg.h"
#include "msg_meta.h"

/* Input: byte role (mod 4), then the peer's stream.  0: the metaserver
 * serving a connection (metaserver/serve.c: JOIN once, then ROUTINES and
 * LOAD; HELLO, LIST, GET_IFACE, HEARTBEAT, QUERY, REPORT, STATUS any time);
 * 1: a server reading its JOIN's reply; 2: a client reading a QUERY's
 * reply; 3: the CLI reading a META_STATUS reply (each to call id 1). */

#define CLIENT_MAX_SERVERS 16 /* client/config.h: ranked servers a client takes */
#define LABEL "127.0.0.1:7900"

/* One request as serve.c's serve_one reads it; 0 to go on. */
static int serve_one(wire_reader *r, int *joined, err_t *err)
{
    uint32_t type, call_id;
    char name[IFACE_MAX_NAME + 1];
    int rc = wire_next_message(r, &type, &call_id, err);
    if (rc != 0) return rc;
    if ((rc = fuzz_read_peer_request(r, type, name, err)) != 1) return rc;
    switch (type) {
    case PROTO_META_JOIN: {
        msg_meta_join j;
        if (*joined) return err_set(err, NUMRPC_EPROTO, "joined already");
        rc = msg_read_meta_join(r, &j, err);
        if (rc == 0) msg_meta_routines_free(j.routines, j.nroutines);
        *joined = rc == 0;
        return rc;
    }
    case PROTO_META_ROUTINES: {
        msg_meta_routine *list = NULL;
        uint32_t n = 0;
        if (!*joined) return err_set(err, NUMRPC_EPROTO, "ROUTINES before JOIN");
        rc = msg_read_meta_routines(r, &list, &n, err);
        msg_meta_routines_free(list, n);
        return rc;
    }
    case PROTO_META_LOAD: {
        msg_meta_load l;
        if (!*joined) return err_set(err, NUMRPC_EPROTO, "LOAD before JOIN");
        return msg_read_meta_load(r, &l, err);
    }
    case PROTO_META_HEARTBEAT: return msg_read_meta_heartbeat(r, err);
    case PROTO_META_QUERY: {
        msg_meta_query q;
        return msg_read_meta_query(r, &q, err);
    }
    case PROTO_META_REPORT: {
        msg_meta_call *calls = NULL;
        uint32_t n = 0;
        rc = msg_read_meta_report(r, &calls, &n, err);
        free(calls);
        return rc;
    }
    case PROTO_META_STATUS: {
        uint32_t format;
        return msg_read_meta_status(r, &format, err);
    }
    default: return wire_skip_message(r, err); /* refused, the connection goes on */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wire_reader *r = fuzz_reader(PROTO_MAX_PACKET); /* msg_conn_init's limit */
    fuzz_cursor c = {data, size};
    uint8_t role = fuzz_take_byte(&c) % 4;
    err_t err;
    fuzz_reader_feed(r, c.p, c.left);
    if (role == 0) {
        int joined = 0;
        while (serve_one(r, &joined, &err) == 0) continue;
    } else if (msg_read_reply(r, 1, LABEL, &err) == 0) {
        if (role == 1) {
            msg_meta_joined j;
            msg_read_meta_join_reply(r, &j, &err);
        } else if (role == 2) {
            msg_meta_ranked ranked[CLIENT_MAX_SERVERS];
            uint32_t lease_ms, n;
            msg_read_meta_query_reply(r, &lease_ms, ranked, CLIENT_MAX_SERVERS, &n, &err);
        } else {
            char *text = NULL;
            if (msg_read_meta_status_reply(r, &text, &err) == 0) free(text);
        }
    }
    fuzz_reader_close();
    return 0;
}
