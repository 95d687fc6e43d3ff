/* conn.c -- the dispatcher's connections: watched idle in epoll, queued
 * for a worker, lent, closed, or refused and left to linger. */
#define _GNU_SOURCE
#include "conn.h"

#include <errno.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "reply.h"
#include "sock.h"

static uint64_t ev_data(int kind, int index)
{
    return ((uint64_t)kind << 32) | (uint32_t)index;
}

void conn_watch(dispatcher *d, int fd, int kind, int index)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = ev_data(kind, index)};
    epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev);
}

void conn_unwatch(dispatcher *d, int fd)
{
    epoll_ctl(d->epfd, EPOLL_CTL_DEL, fd, NULL);
}

void conn_close(dispatcher *d, int c)
{
    if (d->conns[c].state == CONN_IDLE) conn_unwatch(d, d->conns[c].fd);
    control_forget(&d->conns[c].ctl);
    close(d->conns[c].fd);
    d->conns[c].state = CONN_FREE;
    d->conns[c].fd = -1;
    d->nconns_open--;
}

/* Answers whatever the peer sent (or will send) first with an error, then
 * closes.  The call id comes from the first packet's header if it is there;
 * a client reads a refusal of its HELLO whatever its id.  The request bytes
 * are read away before close so that the reply is not lost to a reset. */
void conn_refuse_fd(dispatcher *d, int fd, int code, const char *detail)
{
    uint8_t hdr[PROTO_HEADER_SIZE];
    uint32_t type, id, flags, len, call_id = 0;
    err_t err;
    if (recv(fd, hdr, sizeof hdr, MSG_PEEK | MSG_DONTWAIT) == (ssize_t)sizeof hdr &&
        wire_parse_header(hdr, &type, &id, &flags, &len, &err) == 0)
        call_id = id;
    sock_set_timeouts(fd, 200, 0);
    wire_writer_attach(&d->notice, transport_tcp(fd));
    reply_error(&d->notice, call_id, code, detail, &err);
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

void conn_refuse(dispatcher *d, int c, int code, const char *detail)
{
    if (d->conns[c].state == CONN_IDLE) conn_unwatch(d, d->conns[c].fd);
    control_forget(&d->conns[c].ctl);
    conn_refuse_fd(d, d->conns[c].fd, code, detail);
    d->conns[c].state = CONN_FREE;
    d->conns[c].fd = -1;
    d->nconns_open--;
}

int conn_readable(int fd)
{
    int n = 0;
    return ioctl(fd, FIONREAD, &n) == 0 && n > 0;
}

void conn_make_idle(dispatcher *d, int c, double since)
{
    d->conns[c].state = CONN_IDLE;
    d->conns[c].since = since;
    conn_watch(d, d->conns[c].fd, EV_CONN, c);
}

void conn_enqueue(dispatcher *d, int c)
{
    d->conns[c].fresh = 0;
    d->queue[(d->qhead + d->qlen) % d->nconns_cap] = c;
    d->qlen++;
    d->conns[c].state = CONN_QUEUED;
}

/* New connections still waiting for their first bytes. */
int conn_count_fresh(const dispatcher *d)
{
    int n = 0;
    for (int c = 0; c < d->nconns_cap; c++) n += d->conns[c].state == CONN_IDLE && d->conns[c].fresh;
    return n;
}

/* A connection came back from a worker (or its call was answered by the
 * dispatcher): it waits in epoll, or is turned away while draining. */
void conn_back(dispatcher *d, int c, double since)
{
    if (!d->stopping) {
        conn_make_idle(d, c, since);
        return;
    }
    if (d->conns[c].calls == 0) { /* accepted before the signal; its call is due */
        conn_make_idle(d, c, since);
        return;
    }
    d->conns[c].state = CONN_QUEUED; /* not in epoll */
    if (conn_readable(d->conns[c].fd)) conn_refuse(d, c, NUMRPC_EBUSY, "server shutting down");
    else conn_close(d, c);
}

void conn_tick(dispatcher *d, double now)
{
    double idle = d->cfg->idle_timeout_ms / 1000.0;
    for (int i = 0; i < LINGER_MAX; i++)
        if (d->linger_fd[i] >= 0 && now - d->linger_since[i] > LINGER_SECONDS) conn_linger(d, i, 1);
    if (idle > 0) {
        for (int c = 0; c < d->nconns_cap; c++) {
            if (d->conns[c].state != CONN_IDLE || now - d->conns[c].since <= idle) continue;
            server_log(d->cfg, LOG_LEVEL_NOTICE, "closing connection %d: idle for %.0f s (--idle-timeout)", c,
                       now - d->conns[c].since);
            conn_close(d, c);
        }
    }
}
