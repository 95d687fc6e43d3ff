/* serve.c -- one metaserver connection: the token exchange, then a server's
 * registration (JOIN, then routine lists, load and heartbeats), a client's
 * queries and reports, or a subscriber's events, each under its right. */
#include "metaserver.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "auth_accept.h"
#include "msg.h"
#include "sock.h"
#include "msg_meta.h"
#include "protocol.h"
#include "tls.h"
#include "transport.h"

#define MAX_RANKED 32
/* serve_one's answer after a refusal it has written: close the connection. */
#define SERVE_CLOSE 1

/* The answer to any request before a good AUTH, when tokens are on. */
#define META_NEED_TOKEN                                                                                    \
    "this metaserver requires a token (set NUMRPC_TOKEN_FILE, or --metaserver-token-file on a server)"

/* The answer to a plain client when TLS is on. */
#define META_NEED_TLS "this metaserver requires TLS (set NUMRPC_TLS_CA, or --metaserver-tls-ca on a server)"
/* The first byte of a TLS handshake record. */
#define TLS_HANDSHAKE_BYTE 0x16

/* One connection and what the metaserver knows of its peer. */
typedef struct serve_conn {
    msg_conn mc;
    int fd;             /* its socket, for the table (shut down on a drop) */
    const char *peer;   /* the client's address: who measured a throughput */
    uint32_t server_id; /* set once a server joined on this connection     */
    auth_peer access;   /* its token, once HELLO named one and AUTH proved it */
} serve_conn;

static int reply_error(serve_conn *c, uint32_t call_id, const err_t *e, err_t *err)
{
    return msg_reply_simple(&c->mc.writer, call_id, e->code, e->detail, err);
}

/* Who the peer is: its token's name with tokens, else its address. */
static const char *identity(const serve_conn *c)
{
    return rights_on() ? c->access.token : c->peer;
}

/* A refusal of the request (whose body is still unread, or read): the
 * reply, then the connection closes. */
static int refuse_closing(serve_conn *c, uint32_t call_id, const err_t *why, err_t *err)
{
    int rc = wire_reader_in_message(&c->mc.reader) ? wire_skip_message(&c->mc.reader, err) : 0;
    if (rc == 0) rc = reply_error(c, call_id, why, err);
    if (rc == 0 && !meta.opt->quiet) {
        printf("refused %s: %s\n", c->peer, why->detail);
        fflush(stdout);
    }
    table_note_error("refused %s: %s", c->peer, why->detail);
    return rc == 0 ? SERVE_CLOSE : rc;
}

static int serve_hello(serve_conn *c, uint32_t call_id, err_t *err)
{
    msg_hello h, answer;
    err_t e;
    int rc = msg_read_hello(&c->mc.reader, &h, err);
    if (rc != 0) return rc;
    if (h.version != PROTO_VERSION) {
        err_set(&e, NUMRPC_EVERSION, "client speaks protocol %u, metaserver %u", h.version,
                PROTO_VERSION);
        return reply_error(c, call_id, &e, err);
    }
    if (rights_hello(&h, META_NEED_TOKEN, &c->access, &answer, &e) != 0)
        return refuse_closing(c, call_id, &e, err);
    answer.version = PROTO_VERSION;
    answer.packet_size = PROTO_MAX_PACKET;
    snprintf(answer.peer, sizeof answer.peer, "numrpc-metaserver " PACKAGE_VERSION);
    return msg_write_hello_reply(&c->mc.writer, call_id, &answer, err);
}

static int serve_auth(serve_conn *c, uint32_t call_id, err_t *err)
{
    uint8_t proof[HMAC_SHA256_BYTES];
    err_t e;
    int rc = msg_read_auth(&c->mc.reader, proof, err);
    if (rc != 0) return rc;
    if (rights_proof(&c->access, proof, &e) != 0) return refuse_closing(c, call_id, &e, err);
    return msg_reply_simple(&c->mc.writer, call_id, NUMRPC_OK, "", err);
}

/* The right each message needs once tokens are on (0: none), and what the
 * refusal says the token may not do. */
static unsigned right_of(uint32_t type, const char **what)
{
    switch (type) {
    case PROTO_LIST:
    case PROTO_GET_IFACE:
    case PROTO_META_QUERY:
        *what = "query this metaserver";
        return TOKEN_CALL_ALL | TOKEN_CALL_SOME;
    case PROTO_META_JOIN:
    case PROTO_META_ROUTINES:
    case PROTO_META_LOAD:
    case PROTO_META_HEARTBEAT:
        *what = "join this metaserver";
        return TOKEN_JOIN;
    case PROTO_META_REPORT:
        *what = "report to this metaserver";
        return TOKEN_REPORT;
    case PROTO_META_STATUS:
        *what = "read this metaserver's status";
        return TOKEN_STATUS;
    case PROTO_META_SUBSCRIBE:
        *what = "subscribe to this metaserver's events";
        return TOKEN_STATUS;
    default:
        return 0;
    }
}

/* table_list's filter: the modules the connection's token may call. */
static int callable_by(const char *module, const void *access)
{
    err_t ignored;
    return rights_may_call(access, module, &ignored) == 0;
}

/* The routines this peer may call (all of them without tokens). */
static int serve_list(serve_conn *c, uint32_t call_id, err_t *err)
{
    msg_routine_entry *items = NULL;
    uint32_t count = 0;
    int rc = wire_expect_end(&c->mc.reader, err);
    if (rc == 0 && table_list(callable_by, &c->access, &items, &count) != 0)
        rc = err_set(err, NUMRPC_ENOMEM, "routine list");
    if (rc == 0) rc = msg_write_list_reply(&c->mc.writer, call_id, items, count, err);
    free(items);
    return rc;
}

static int serve_get_iface(serve_conn *c, uint32_t call_id, err_t *err)
{
    char name[IFACE_MAX_NAME + 1], module[IFACE_MAX_NAME + 1];
    uint8_t *blob = NULL;
    uint32_t len = 0;
    err_t e;
    int rc = msg_read_get_iface(&c->mc.reader, name, err);
    if (rc == 0 && table_descriptor(name, &blob, &len, module, &e) != 0) {
        rc = reply_error(c, call_id, &e, err);
    } else if (rc == 0 && rights_may_call(&c->access, module, &e) != 0) {
        rc = refuse_closing(c, call_id, &e, err);
    }
    else if (rc == 0)
        rc = msg_write_iface_reply(&c->mc.writer, call_id, blob, len, err);
    free(blob);
    return rc;
}

/* The table's routines from a list as read (which it empties: the
 * descriptors and interfaces move). */
static int routines_of(msg_meta_routine *list, uint32_t n, meta_routine **out, err_t *err)
{
    meta_routine *r = calloc(n + 1, sizeof *r);
    if (r == NULL) return err_set(err, NUMRPC_ENOMEM, "routine list");
    for (uint32_t i = 0; i < n; i++) {
        r[i].iface = list[i].iface;
        r[i].blob = list[i].blob;
        r[i].blob_len = list[i].len;
        r[i].calib = 1;
        memset(&list[i].iface, 0, sizeof list[i].iface);
        list[i].blob = NULL;
    }
    *out = r;
    return 0;
}

static int serve_join(serve_conn *c, uint32_t call_id, err_t *err)
{
    msg_meta_join j;
    meta_routine *routines = NULL;
    memset(&j, 0, sizeof j);
    int rc = c->server_id ? err_set(err, NUMRPC_EPROTO, "this connection joined already")
                          : msg_read_meta_join(&c->mc.reader, &j, err);
    if (rc == 0) rc = routines_of(j.routines, j.nroutines, &routines, err);
    if (rc != 0) goto done;
    meta_server proto;
    memset(&proto, 0, sizeof proto);
    proto.fd = c->fd;
    /* An empty host means "the address this connection comes from". */
    snprintf(proto.host, sizeof proto.host, "%s", j.host[0] ? j.host : c->peer);
    proto.port = (int)j.port;
    snprintf(proto.label, sizeof proto.label, "%s:%d", proto.host, proto.port);
    snprintf(proto.name, sizeof proto.name, "%s", j.name);
    snprintf(proto.owner, sizeof proto.owner, "%s", identity(c));
    snprintf(proto.from, sizeof proto.from, "%s", c->peer);
    snprintf(proto.fingerprint, sizeof proto.fingerprint, "%s", j.fingerprint);
    proto.slots = (int)j.slots;
    proto.curve = j.curve;
    err_t e;
    uint32_t id = 0;
    int joined = table_join(&proto, routines, j.nroutines, &id, &e); /* takes the routines */
    if (joined != 0) {
        rc = refuse_closing(c, call_id, &e, err); /* a server that failed to join leaves */
    } else {
        c->server_id = id;
        msg_meta_joined ok = {.server_id = id,
                              .heartbeat_ms = (uint32_t)(meta.opt->drop_after * 1000 / 3)};
        rc = msg_write_meta_join_reply(&c->mc.writer, call_id, &ok, err);
    }
done:
    msg_meta_routines_free(j.routines, j.nroutines);
    return rc;
}

static int serve_routines(serve_conn *c, err_t *err)
{
    msg_meta_routine *list = NULL;
    meta_routine *routines = NULL;
    uint32_t n = 0;
    int rc = c->server_id ? msg_read_meta_routines(&c->mc.reader, &list, &n, err)
                          : err_set(err, NUMRPC_EPROTO, "ROUTINES before JOIN");
    if (rc == 0) rc = routines_of(list, n, &routines, err);
    if (rc == 0) table_set_routines(c->server_id, routines, n); /* takes them */
    msg_meta_routines_free(list, n);
    return rc;
}

static int serve_load(serve_conn *c, err_t *err)
{
    msg_meta_load l;
    int rc = c->server_id ? msg_read_meta_load(&c->mc.reader, &l, err)
                          : err_set(err, NUMRPC_EPROTO, "LOAD before JOIN");
    if (rc == 0) table_set_load(c->server_id, l.in_flight, l.queued, l.draining, l.loadavg);
    return rc;
}

static int serve_heartbeat(serve_conn *c, err_t *err)
{
    int rc = msg_read_meta_heartbeat(&c->mc.reader, err);
    if (rc == 0 && c->server_id) table_heard(c->server_id);
    return rc;
}

static int serve_query(serve_conn *c, uint32_t call_id, err_t *err)
{
    msg_meta_query q;
    int rc = msg_read_meta_query(&c->mc.reader, &q, err);
    if (rc != 0) return rc;
    msg_meta_ranked ranked[MAX_RANKED];
    int n = table_rank(&q, c->peer, identity(c), ranked,
                       q.max_servers == 0 || q.max_servers > MAX_RANKED ? MAX_RANKED
                                                                        : (int)q.max_servers);
    if (n == 0) {
        err_t e;
        if (q.routine[0] == '\0') err_set(&e, NUMRPC_ENOSERVER, "no server has joined the metaserver");
        else
            err_set(&e, NUMRPC_ENOSERVER, "no server known to the metaserver offers \"%s\"%s", q.routine,
                    q.hash ? " in this version" : "");
        return reply_error(c, call_id, &e, err);
    }
    return msg_write_meta_query_reply(&c->mc.writer, call_id, (uint32_t)meta.opt->lease_ms, ranked,
                                      (uint32_t)n, err);
}

static int serve_report(serve_conn *c, err_t *err)
{
    msg_meta_call *calls = NULL;
    uint32_t n = 0;
    int rc = msg_read_meta_report(&c->mc.reader, &calls, &n, err);
    for (uint32_t i = 0; rc == 0 && i < n; i++)
        table_report(c->peer, identity(c), &calls[i]);
    free(calls);
    return rc;
}

static int serve_status(serve_conn *c, uint32_t call_id, err_t *err)
{
    uint32_t format;
    int rc = msg_read_meta_status(&c->mc.reader, &format, err);
    if (rc != 0) return rc;
    char *text = table_status(format == MSG_META_STATUS_JSON);
    if (text == NULL) {
        err_t e;
        err_set(&e, NUMRPC_ENOMEM, "status text");
        return reply_error(c, call_id, &e, err);
    }
    rc = msg_write_meta_status_reply(&c->mc.writer, call_id, text, err);
    free(text);
    return rc;
}

/* Sends slot's queued events as they come, with the SUBSCRIBE's call id,
 * and a keepalive after EV_KEEPALIVE_SECONDS of quiet; every send has a
 * deadline.  Returns when the subscriber closes or sends anything, a send
 * fails, or it was dropped (its queue overflowed): 0 or the error. */
#define EV_KEEPALIVE_SECONDS 5
#define EV_SEND_SECONDS 10
#define EV_BATCH 32
#define EV_SNDBUF (16 * 1024) /* bytes (the kernel doubles it) */
/* After a batch, the thread waits this long for more before it sends
 * again: a burst of events costs a few sends, not one each. */
#define EV_COALESCE_NS 10000000L
static int stream_events(serve_conn *c, uint32_t call_id, int slot, int wake, err_t *err)
{
    msg_event batch[EV_BATCH];
    double last_sent = sock_now();
    for (;;) {
        struct pollfd p[2] = {{.fd = wake, .events = POLLIN}, {.fd = c->fd, .events = POLLIN}};
        int n = poll(p, 2, EV_KEEPALIVE_SECONDS * 1000);
        if (n < 0 && errno != EINTR) return err_set(err, NUMRPC_EIO, "poll: %s", strerror(errno));
        if (n > 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
            return 0; /* a subscriber only listens: anything else ends it */
        uint64_t count;
        if (n > 0 && (p[0].revents & POLLIN) && read(wake, &count, sizeof count) < 0) { /* already read */
        }
        int dropped = 0, rc = 0, got, sent = 0;
        while (rc == 0 && (got = events_take(slot, batch, EV_BATCH, &dropped)) > 0) {
            sent = 1;
            wire_writer_set_deadline(&c->mc.writer, sock_now() + EV_SEND_SECONDS);
            for (int i = 0; rc == 0 && i < got; i++) rc = msg_write_meta_event(&c->mc.writer, call_id, &batch[i], err);
            if (rc == 0) rc = wire_flush(&c->mc.writer, err);
            last_sent = sock_now();
        }
        if (rc == 0 && dropped)
            rc = err_set(err, NUMRPC_ELIMIT, "its queue of %d events was full", EV_QUEUE);
        if (rc == 0 && sock_now() - last_sent >= EV_KEEPALIVE_SECONDS) {
            wire_writer_set_deadline(&c->mc.writer, sock_now() + EV_SEND_SECONDS);
            wire_begin(&c->mc.writer, PROTO_KEEPALIVE, call_id);
            rc = wire_end(&c->mc.writer, err);
            last_sent = sock_now();
        }
        if (rc != 0) return rc;
        struct timespec pause = {0, EV_COALESCE_NS};
        if (sent) nanosleep(&pause, NULL);
    }
}

/* SUBSCRIBE: the reply, then the events until the subscriber goes (the
 * connection serves nothing else). */
static int serve_subscribe(serve_conn *c, uint32_t call_id, err_t *err)
{
    uint32_t mask = 0;
    int slot = -1, wake = -1;
    err_t e;
    int rc = c->server_id ? err_set(err, NUMRPC_EPROTO, "a server's registration connection cannot subscribe")
                          : msg_read_meta_subscribe(&c->mc.reader, &mask, err);
    if (rc != 0) return rc; /* answered with its error by serve_connection */
    if (events_subscribe(mask, identity(c), c->fd, &slot, &wake, &e) != 0) return refuse_closing(c, call_id, &e, err);
    /* A small kernel buffer: a subscriber that stops reading is stuck,
     * then dropped, after a bounded number of events. */
    int sndbuf = EV_SNDBUF;
    setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    rc = msg_reply_simple(&c->mc.writer, call_id, NUMRPC_OK, "", err);
    if (rc == 0) rc = stream_events(c, call_id, slot, wake, &e);
    msg_event none;
    int dropped = 0;
    events_take(slot, &none, 0, &dropped); /* its send may have failed first */
    events_unsubscribe(slot);
    if (dropped) err_set(&e, NUMRPC_ELIMIT, "its queue of %d events was full", EV_QUEUE);
    if ((rc != 0 || dropped) && !meta.opt->quiet) {
        printf("subscriber %s dropped: %s\n", c->peer, e.detail);
        fflush(stdout);
    }
    if (dropped) table_note_error("event subscriber %s dropped: %s", c->peer, e.detail);
    return SERVE_CLOSE;
}

/* Serves one message; 0 to go on, SERVE_CLOSE after a refusal. */
static int serve_one(serve_conn *c, uint32_t type, uint32_t call_id, err_t *err)
{
    const char *what = "";
    unsigned right = right_of(type, &what);
    err_t why;
    if (right && rights_may(&c->access, right, what, META_NEED_TOKEN, &why) != 0) {
        /* A report has no reply: one without the right is dropped (a
         * client with only `call` still sends its reports with queries). */
        if (type == PROTO_META_REPORT && c->access.state == AUTH_PEER_GRANTED) {
            table_report_dropped();
            return wire_skip_message(&c->mc.reader, err);
        }
        return refuse_closing(c, call_id, &why, err);
    }
    switch (type) {
    case PROTO_HELLO:
        return serve_hello(c, call_id, err);
    case PROTO_AUTH:
        return serve_auth(c, call_id, err);
    case PROTO_LIST:
        return serve_list(c, call_id, err);
    case PROTO_GET_IFACE:
        return serve_get_iface(c, call_id, err);
    case PROTO_META_JOIN:
        return serve_join(c, call_id, err);
    case PROTO_META_ROUTINES:
        return serve_routines(c, err);
    case PROTO_META_LOAD:
        return serve_load(c, err);
    case PROTO_META_HEARTBEAT:
        return serve_heartbeat(c, err);
    case PROTO_META_QUERY:
        return serve_query(c, call_id, err);
    case PROTO_META_REPORT:
        return serve_report(c, err);
    case PROTO_META_STATUS:
        return serve_status(c, call_id, err);
    case PROTO_META_SUBSCRIBE:
        return serve_subscribe(c, call_id, err);
    default: {
        err_t e;
        err_set(&e, NUMRPC_EPROTO, "message type %u is not served by the metaserver", type);
        int rc = wire_skip_message(&c->mc.reader, err);
        return rc == 0 ? reply_error(c, call_id, &e, err) : rc;
    }
    }
}

/* Waits up to timeout_ms for the peer's first byte and peeks at it: 1 with
 * *byte set, 0 when the peer closed or stayed silent, -1 on an error. */
static int peek_first_byte(int fd, int timeout_ms, unsigned char *byte)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int n;
    double deadline = sock_now() + timeout_ms / 1000.0;
    while ((n = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
        timeout_ms = deadline > sock_now() ? (int)((deadline - sock_now()) * 1000) + 1 : 0;
    if (n <= 0) return n;
    ssize_t got;
    while ((got = recv(fd, byte, 1, MSG_PEEK)) < 0 && errno == EINTR) {
    }
    return got == 1 ? 1 : got == 0 ? 0 : -1;
}

/* With TLS: the handshake (the first byte within the idle limit, the rest
 * within META_IO_SECONDS), then c speaks through the record layer and its
 * token proofs cover the channel.  *st is malloc'd here and freed by the
 * caller after the stream.  0; SERVE_CLOSE once a plain client has had its
 * refusal, or the handshake failed (logged). */
static int start_tls(serve_conn *c, double idle_timeout, tls_stream_state **st)
{
    unsigned char first = 0;
    err_t err;
    int rc = peek_first_byte(c->fd, (int)(idle_timeout * 1000), &first);
    if (rc <= 0) return SERVE_CLOSE;
    if (first != TLS_HANDSHAKE_BYTE) {
        uint32_t type, call_id;
        err_t why;
        err_set(&why, NUMRPC_EAUTH, "%s", META_NEED_TLS);
        wire_reader_set_deadline(&c->mc.reader, sock_now() + META_IO_SECONDS);
        if (wire_next_message(&c->mc.reader, &type, &call_id, &err) == 0) refuse_closing(c, call_id, &why, &err);
        return SERVE_CLOSE;
    }
    *st = malloc(sizeof **st);
    rc = *st ? tls_accept_blocking(meta.tls, c->fd, META_IO_SECONDS * 1000, *st, &err)
             : err_set(&err, NUMRPC_ENOMEM, "TLS state");
    if (rc != 0) {
        if (!meta.opt->quiet) {
            printf("refused %s: TLS handshake failed: %s\n", c->peer, err.detail);
            fflush(stdout);
        }
        table_note_error("refused %s: TLS handshake failed: %s", c->peer, err.detail);
        return SERVE_CLOSE;
    }
    msg_conn_attach(&c->mc, tls_record_transport(c->fd, *st), c->peer);
    auth_accept_bind(&c->access, (*st)->binding);
    return 0;
}

void serve_connection(int fd, const char *peer, double idle_timeout)
{
    serve_conn c = {.fd = fd, .peer = peer};
    tls_stream_state *st = NULL; /* with TLS; outlives the stream below */
    err_t err;
    if (msg_conn_init(&c.mc, PROTO_DEFAULT_PACKET, &err) != 0) {
        close(fd);
        return;
    }
    msg_conn_attach(&c.mc, transport_tcp(fd), peer);
    sock_set_timeouts(fd, META_IO_SECONDS * 1000, 0); /* a reader that never reads */
    int started = meta.tls ? start_tls(&c, idle_timeout, &st) : 0;
    for (int first = 1; started == 0; first = 0) {
        uint32_t type, call_id;
        /* Between messages a connection may idle this long (a joined
         * server's heartbeats come far more often); inside one, a stall
         * ends it after META_IO_SECONDS. */
        wire_reader_set_deadline(&c.mc.reader, sock_now() + idle_timeout);
        int rc = wire_next_message(&c.mc.reader, &type, &call_id, &err);
        if (rc == NUMRPC_EPROTO && first) { /* a TLS client sees a numrpc packet: names the cause */
            err_t why;
            err_set(&why, NUMRPC_EPROTO, "%s", "this metaserver does not speak TLS (it has no --tls-cert)");
            reply_error(&c, 0, &why, &err);
        }
        if (rc != 0) break;
        wire_reader_set_deadline(&c.mc.reader, sock_now() + META_IO_SECONDS);
        rc = serve_one(&c, type, call_id, &err);
        if (rc == SERVE_CLOSE) break;
        /* A request (JOIN, QUERY) that is well framed but wrong gets its
         * error; anything else broken ends the connection. */
        if (rc != 0 && rc != NUMRPC_EIO && wire_writer_idle(&c.mc.writer) &&
            (type == PROTO_META_JOIN || type == PROTO_META_QUERY || type == PROTO_META_SUBSCRIBE)) {
            err_t e = err;
            rc = wire_reader_in_message(&c.mc.reader) ? wire_skip_message(&c.mc.reader, &err) : 0;
            if (rc == 0) rc = reply_error(&c, call_id, &e, &err);
            if ((type == PROTO_META_JOIN || type == PROTO_META_SUBSCRIBE) && rc == 0)
                rc = NUMRPC_EPROTO; /* a server that failed to join leaves, and a bad subscriber */
        }
        if (rc != 0) break;
    }
    if (c.server_id) table_leave(c.server_id, "connection closed");
    msg_conn_free(&c.mc); /* closes fd */
    free(st);
}
