/* handshake.c -- the dispatcher's TLS handshakes: each runs without
 * blocking in the event loop, within --request-timeout (conn_tick); a plain
 * client on the TLS port hears what to set. */
#include "handshake.h"

#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>

#include "connio.h"
#include "log.h"

#define HANDSHAKE_PLAIN_REFUSAL "this server requires TLS (set NUMRPC_TLS_CA)"

/* The handshake is over: the stream's state goes to the shared table, the
 * socket back to blocking (a worker's stream relies on its time limits). */
static int finish(dispatcher *d, int c)
{
    conn *k = &d->conns[c];
    err_t err;
    tls_stream_state *st = connio_state_new(&k->tls_fd, &err); /* this connection's alone */
    if (st == NULL) {
        server_log(d->cfg, LOG_LEVEL_ERROR, "connection %d: %s", c, err.detail);
        conn_close(d, c);
        return HANDSHAKE_ENDED;
    }
    k->tls = st;
    k->tp = connio_transport(k->fd, st);
    tls_acceptor_take_state(k->acceptor, st);
    tls_acceptor_free(k->acceptor);
    k->acceptor = NULL;
    fcntl(k->fd, F_SETFL, fcntl(k->fd, F_GETFL) & ~O_NONBLOCK);
    /* Token proofs on this connection cover the channel (auth.h). */
    auth_accept_bind(&k->ctl.access, st->binding);
    /* The client certificate's CN names the connection in later lines. */
    server_log(d->cfg, LOG_LEVEL_INFO, "connection %d: TLS up, client certificate CN %s", c, st->peer.common_name);
    return HANDSHAKE_DONE;
}

int handshake_step(dispatcher *d, int c)
{
    conn *k = &d->conns[c];
    err_t err;
    if (k->state == CONN_HANDSHAKE) conn_unwatch(d, k->fd);
    k->state = CONN_QUEUED; /* not in epoll */
    int rc = tls_accept_step(k->acceptor, k->fd, &err);
    if (rc == TLS_ACCEPT_WANT_READ || rc == TLS_ACCEPT_WANT_WRITE) {
        k->state = CONN_HANDSHAKE;
        conn_watch_events(d, k->fd, rc == TLS_ACCEPT_WANT_READ ? EPOLLIN : EPOLLOUT, EV_CONN, c);
        return HANDSHAKE_WAITING;
    }
    if (rc == TLS_ACCEPT_DONE) return finish(d, c);
    if (rc == TLS_ACCEPT_NOT_TLS) {
        server_log(d->cfg, LOG_LEVEL_INFO, "connection %d refused: a plain client on the TLS port", c);
        fcntl(k->fd, F_SETFL, fcntl(k->fd, F_GETFL) & ~O_NONBLOCK);
        conn_refuse(d, c, NUMRPC_EAUTH, HANDSHAKE_PLAIN_REFUSAL); /* in plain framing: no TLS yet */
        return HANDSHAKE_ENDED;
    }
    server_log(d->cfg, LOG_LEVEL_NOTICE, "connection %d: TLS handshake failed: %s", c, err.detail);
    conn_close(d, c);
    return HANDSHAKE_ENDED;
}

int handshake_start(dispatcher *d, int c)
{
    conn *k = &d->conns[c];
    err_t err;
    k->acceptor = tls_acceptor_new(d->tls, &err);
    if (k->acceptor == NULL) {
        server_log(d->cfg, LOG_LEVEL_ERROR, "connection %d closed: %s", c, err.detail);
        conn_close(d, c);
        return HANDSHAKE_ENDED;
    }
    fcntl(k->fd, F_SETFL, fcntl(k->fd, F_GETFL) | O_NONBLOCK);
    return handshake_step(d, c);
}
