/* conn.c -- the dispatcher's connections: watched idle in epoll, queued
 * for a worker, lent, answered without blocking, closed, or refused and
 * left to linger. */
#define _GNU_SOURCE
#include "conn.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <sys/socket.h>
#include <unistd.h>

#include "connio.h"
#include "log.h"
#include "reply.h"
#include "sock.h"

static uint64_t ev_data(int kind, int index)
{
    return ((uint64_t)kind << 32) | (uint32_t)index;
}

void conn_watch_events(dispatcher *d, int fd, uint32_t events, int kind, int index)
{
    struct epoll_event ev = {.events = events, .data.u64 = ev_data(kind, index)};
    epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev);
}

void conn_watch(dispatcher *d, int fd, int kind, int index)
{
    conn_watch_events(d, fd, EPOLLIN, kind, index);
}

void conn_unwatch(dispatcher *d, int fd)
{
    epoll_ctl(d->epfd, EPOLL_CTL_DEL, fd, NULL);
}

/* In epoll (IDLE, or WRITING with bytes the socket has not taken): its
 * registration goes before its socket. */
static int in_epoll(const conn *k)
{
    return k->state == CONN_IDLE || k->state == CONN_HANDSHAKE || (k->state == CONN_WRITING && k->out_watched);
}

tls_stream_state *conn_tls(const dispatcher *d, int c)
{
    return d->conns[c].tls;
}

/* Wipes and frees c's TLS state, once nothing of c uses it. */
static void conn_drop_tls(dispatcher *d, int c)
{
    conn *k = &d->conns[c];
    connio_state_free(k->tls, k->tls_fd);
    k->tls = NULL;
    k->tls_fd = -1;
}

/* Forgets c's state and frees its slot; its socket is closed by the caller. */
static void release(dispatcher *d, int c)
{
    conn *k = &d->conns[c];
    if (in_epoll(k)) conn_unwatch(d, k->fd);
    control_forget(&k->ctl);
    transport_bytes_free(&k->out);
    tls_acceptor_free(k->acceptor);
    k->acceptor = NULL;
    k->tls_look = 0;
    k->state = CONN_FREE;
    k->fd = -1;
    d->nconns_open--;
}

void conn_close(dispatcher *d, int c)
{
    int fd = d->conns[c].fd;
    release(d, c);
    /* An orderly end on TLS says so: a client tells it from a cut stream. */
    if (d->conns[c].tls != NULL) tls_record_close_notify(fd, d->conns[c].tls);
    close(fd);
    conn_drop_tls(d, c);
}

ssize_t conn_send_now(int fd, const void *bytes, size_t len)
{
    for (;;) {
        ssize_t k = send(fd, bytes, len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (k >= 0) return k;
        if (errno == EINTR) continue;
        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
    }
}

wire_writer *conn_writer(dispatcher *d, int c)
{
    conn *k = &d->conns[c];
    transport_bytes_free(&k->out);
    k->out.max = CONN_OUT_MAX;
    k->out_sent = 0;
    k->out_sealed = 0;
    wire_writer_attach(&d->notice, transport_memory_sink(&k->out));
    return &d->notice;
}

/* Bytes the kernel holds for the peer, sent or not, that it has not
 * acknowledged: what a peer that does not read lets pile up. */
static int unread_by_peer(int fd)
{
    int n = 0;
    return ioctl(fd, SIOCOUTQ, &n) == 0 ? n : 0;
}

/* c's framed reply as it goes on the socket: sealed once on TLS.  0, or
 * -1 (the stream failed). */
static int seal_out(dispatcher *d, int c)
{
    conn *k = &d->conns[c];
    err_t err;
    if (k->out_sealed) return 0;
    if (k->tp.ops->seal(&k->tp, &k->out, &err) != 0) {
        server_log(d->cfg, LOG_LEVEL_NOTICE, "closing connection %d: %s", c, err.detail);
        return -1;
    }
    k->out_sealed = 1;
    return 0;
}

void conn_send(dispatcher *d, int c)
{
    conn *k = &d->conns[c];
    if (seal_out(d, c) != 0) {
        conn_close(d, c);
        return;
    }
    while (k->out_sent < k->out.len) {
        ssize_t n = conn_send_now(k->fd, k->out.p + k->out_sent, k->out.len - k->out_sent);
        if (n < 0) {
            conn_close(d, c);
            return;
        }
        if (n == 0) break;
        k->out_sent += (size_t)n;
    }
    int unsent = k->out_sent < k->out.len;
    /* All sent, but the peer has not read what went before: it is neither
     * answered nor read from until it has (conn_tick looks again); the
     * kernel's buffers do not fill up for it. */
    if (unsent || unread_by_peer(k->fd) > (int)CONN_UNREAD_MAX) {
        if (k->state == CONN_IDLE) conn_unwatch(d, k->fd);
        if (k->state != CONN_WRITING) {
            k->state = CONN_WRITING;
            k->out_watched = 0;
            k->out_since = sock_now();
        }
        if (unsent != k->out_watched) { /* room for the rest is an event */
            if (unsent) conn_watch_events(d, k->fd, EPOLLOUT, EV_CONN, c);
            else conn_unwatch(d, k->fd);
            k->out_watched = unsent;
        }
        return;
    }
    if (k->state == CONN_WRITING && k->out_watched) conn_unwatch(d, k->fd);
    k->out_watched = 0;
    k->state = CONN_QUEUED; /* in the dispatcher's hands again */
    transport_bytes_free(&k->out);
    k->out_sent = 0;
    conn_back(d, c, sock_now());
}

/* Sends the last bytes fd gets if its socket takes them now, ends the
 * sending side, and keeps fd until the peer has read them and closed (or a
 * few seconds pass): a close at once could reset the connection under its
 * unread request and lose the reply. */
static void linger_after(dispatcher *d, int fd, const uint8_t *bytes, size_t len)
{
    if (len > 0) conn_send_now(fd, bytes, len);
    shutdown(fd, SHUT_WR);
    for (int i = 0; i < LINGER_MAX; i++) {
        if (d->linger_fd[i] >= 0) continue;
        d->linger_fd[i] = fd;
        d->linger_since[i] = sock_now();
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.u64 = ev_data(EV_LINGER, i)};
        epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev);
        return;
    }
    close(fd);
}

/* The call id in the packet header at bytes (len of them), or 0. */
static uint32_t call_id_of(const uint8_t *bytes, long len)
{
    uint32_t type, id, flags, size;
    err_t ignored;
    if (len < (long)PROTO_HEADER_SIZE || wire_parse_header(bytes, &type, &id, &flags, &size, &ignored) != 0)
        return 0;
    return id;
}

/* Answers call_id on the stream t (sealed on TLS) with an error, then
 * lingers on its socket. */
static void refuse_call(dispatcher *d, transport *t, uint32_t call_id, int code, const char *detail)
{
    err_t err;
    /* Framed in memory and sent if the socket takes it now: a peer that
     * does not read cannot hold the dispatcher. */
    transport_bytes refusal = {.max = CONN_OUT_MAX};
    wire_writer_attach(&d->notice, transport_memory_sink(&refusal));
    if (reply_error(&d->notice, call_id, code, detail, &err) == 0 && t->ops->seal(t, &refusal, &err) == 0)
        linger_after(d, t->fd, refusal.p, refusal.len);
    else linger_after(d, t->fd, NULL, 0);
    transport_bytes_free(&refusal);
    wire_writer_attach(&d->notice, transport_none());
}

/* Answers whatever the peer sent (or will send) first with an error, then
 * closes.  The call id comes from the first packet's header if it is there.
 * The request bytes are read away before close so that the reply is not
 * lost to a reset. */
void conn_refuse_fd(dispatcher *d, int fd, int code, const char *detail)
{
    uint8_t hdr[PROTO_HEADER_SIZE];
    transport t = transport_tcp(fd);
    refuse_call(d, &t, call_id_of(hdr, t.ops->look(&t, hdr, sizeof hdr, 0)), code, detail);
}

/* A refused peer sent more (drop it) or closed (so do we). */
void conn_linger(dispatcher *d, int i, int force)
{
    int fd = d->linger_fd[i];
    if (fd < 0) return;
    char sink[4096];
    ssize_t k = 0;
    while (!force && (k = recv(fd, sink, sizeof sink, MSG_DONTWAIT)) > 0) {
    }
    if (!force && k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    conn_unwatch(d, fd);
    close(fd);
    d->linger_fd[i] = -1;
}

void conn_send_last(dispatcher *d, int c)
{
    conn *k = &d->conns[c];
    int fd = k->fd;
    if (seal_out(d, c) != 0) transport_bytes_free(&k->out);
    transport_bytes out = k->out; /* taken from c before release frees it */
    memset(&k->out, 0, sizeof k->out);
    release(d, c);
    linger_after(d, fd, out.p, out.len);
    transport_bytes_free(&out);
    conn_drop_tls(d, c);
}

void conn_refuse(dispatcher *d, int c, int code, const char *detail)
{
    conn *k = &d->conns[c];
    transport t = k->tp; /* tcp until a handshake is over: then answered plain */
    uint8_t hdr[PROTO_HEADER_SIZE];
    long got;
    if (k->acceptor != NULL) { /* its TLS handshake is not over: answered plain, */
        const unsigned char *p; /* by what the acceptor read */
        got = (long)tls_acceptor_received(k->acceptor, &p);
        if (got > (long)sizeof hdr) got = (long)sizeof hdr;
        memcpy(hdr, p, (size_t)got);
    } else {
        got = t.ops->look(&t, hdr, sizeof hdr, 0);
    }
    release(d, c);
    refuse_call(d, &t, call_id_of(hdr, got), code, detail);
    conn_drop_tls(d, c);
}

int conn_readable(const dispatcher *d, int c)
{
    transport *t = (transport *)&d->conns[c].tp;
    return t->ops->ready(t) > 0;
}

void conn_make_idle(dispatcher *d, int c, double since)
{
    d->conns[c].state = CONN_IDLE;
    d->conns[c].since = since;
    d->conns[c].edge = 0;
    conn_watch(d, d->conns[c].fd, EV_CONN, c);
    /* Bytes a worker (or the handshake) left in the TLS state wake no
     * epoll event: the loop looks at c itself. */
    if (d->conns[c].tp.ops->pending(&d->conns[c].tp) > 0) {
        d->conns[c].tls_look = 1;
        d->tls_looks++;
    }
}

/* The bytes stay unread in the socket, so a level-triggered watch would
 * fire at once forever: each new segment (or the peer's FIN) wakes it. */
void conn_wait_arrival(dispatcher *d, int c)
{
    conn *k = &d->conns[c];
    k->state = CONN_IDLE;
    k->edge = 1;
    if (k->request_since == 0) k->request_since = sock_now();
    conn_watch_events(d, k->fd, EPOLLIN | EPOLLRDHUP | EPOLLET, EV_CONN, c);
}

void conn_enqueue(dispatcher *d, int c)
{
    d->conns[c].request_since = 0;
    d->queue[(d->qhead + d->qlen) % d->nconns_cap] = c;
    d->qlen++;
    d->conns[c].state = CONN_QUEUED;
}

peer_key conn_peer_key(const struct sockaddr_storage *sa)
{
    peer_key k;
    memset(&k, 0, sizeof k);
    if (sa->ss_family == AF_INET) {
        k.bytes[0] = 4;
        memcpy(k.bytes + 1, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    } else if (sa->ss_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a)) {
            k.bytes[0] = 4;
            memcpy(k.bytes + 1, a->s6_addr + 12, 4);
        } else {
            k.bytes[0] = 6;
            memcpy(k.bytes + 1, a->s6_addr, 8);
        }
    }
    return k;
}

int conn_count_peer(const dispatcher *d, const peer_key *k)
{
    int n = 0;
    for (int c = 0; c < d->nconns_cap; c++)
        n += d->conns[c].state != CONN_FREE && memcmp(&d->conns[c].peer, k, sizeof *k) == 0;
    return n;
}

int conn_peer_limit(const server_config *cfg)
{
    if (cfg->max_connections_per_peer > 0) return cfg->max_connections_per_peer;
    return cfg->max_connections / 4 > 1 ? cfg->max_connections / 4 : 1;
}

/* A connection came back from a worker (or its call was answered by the
 * dispatcher): it waits in epoll, or is turned away while draining. */
void conn_call_due(dispatcher *d, int c)
{
    if (d->conns[c].request_since == 0) d->conns[c].request_since = sock_now();
}

void conn_back(dispatcher *d, int c, double since)
{
    d->conns[c].request_since = 0;
    if (!d->stopping) {
        conn_make_idle(d, c, since);
        return;
    }
    if (d->conns[c].calls == 0) { /* accepted before the signal; its call is due */
        conn_make_idle(d, c, since);
        conn_call_due(d, c);
        return;
    }
    d->conns[c].state = CONN_QUEUED; /* not in epoll */
    if (conn_readable(d, c)) conn_refuse(d, c, NUMRPC_EBUSY, "server shutting down");
    else conn_close(d, c);
}

/* A request due whole by now that is not: a peer that sent nothing since
 * it connected is closed; one that sent part of a request hears why. */
static void request_overdue(dispatcher *d, int c)
{
    conn *k = &d->conns[c];
    int ms = d->cfg->request_timeout_ms;
    if (!k->edge && k->ctl.buf == NULL) {
        server_log(d->cfg, LOG_LEVEL_INFO, "closing connection %d: no request in %d ms (--request-timeout)", c, ms);
        conn_close(d, c);
        return;
    }
    char detail[160];
    snprintf(detail, sizeof detail,
             "request not received whole within %d ms (--request-timeout); the server closes the connection", ms);
    server_log(d->cfg, LOG_LEVEL_NOTICE, "connection %d: %s", c, detail);
    conn_refuse(d, c, NUMRPC_ETIMEDOUT, detail);
}

void conn_tick(dispatcher *d, double now)
{
    double idle = d->cfg->idle_timeout_ms / 1000.0, due = d->cfg->request_timeout_ms / 1000.0;
    double io = d->cfg->io_timeout_ms / 1000.0;
    for (int i = 0; i < LINGER_MAX; i++)
        if (d->linger_fd[i] >= 0 && now - d->linger_since[i] > LINGER_SECONDS) conn_linger(d, i, 1);
    for (int c = 0; c < d->nconns_cap; c++) {
        conn *k = &d->conns[c];
        if (k->state == CONN_WRITING && io > 0 && now - k->out_since > io) {
            server_log(d->cfg, LOG_LEVEL_NOTICE, "closing connection %d: its peer read no reply for %.0f s (--io-timeout)",
                       c, now - k->out_since);
            conn_close(d, c);
        } else if (k->state == CONN_WRITING && !k->out_watched && d->stopping) {
            conn_close(d, c); /* its reply is with the kernel; nothing more comes */
        } else if (k->state == CONN_WRITING && !k->out_watched) {
            conn_send(d, c); /* has the peer read its backlog? */
        } else if (k->state == CONN_HANDSHAKE && now - k->request_since > due) {
            server_log(d->cfg, LOG_LEVEL_NOTICE, "closing connection %d: TLS handshake not finished within %d ms (--request-timeout)",
                       c, d->cfg->request_timeout_ms);
            conn_close(d, c);
        } else if (k->state != CONN_IDLE) {
            continue;
        } else if (k->request_since > 0 && now - k->request_since > due) {
            request_overdue(d, c);
        } else if (idle > 0 && now - k->since > idle) {
            server_log(d->cfg, LOG_LEVEL_NOTICE, "closing connection %d: idle for %.0f s (--idle-timeout)", c,
                       now - k->since);
            conn_close(d, c);
        }
    }
}
