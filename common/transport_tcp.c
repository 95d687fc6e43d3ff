/* transport_tcp.c -- the plain TCP entry of the transport table, and the
 * helpers every kind shares (connect, close). */
#include "transport.h"

#include <errno.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sock.h"

static ssize_t tcp_recv(transport *t, void *buf, size_t n)
{
    return recv(t->fd, buf, n, 0);
}

static ssize_t tcp_send(transport *t, const void *buf, size_t n)
{
    return send(t->fd, buf, n, MSG_NOSIGNAL);
}

static int tcp_start(transport *t, int server_side, err_t *err)
{
    (void)t;
    (void)server_side;
    (void)err;
    return 0; /* nothing above the socket */
}

static size_t tcp_pending(const transport *t)
{
    (void)t;
    return 0; /* the kernel holds every byte: poll() sees them */
}

static void tcp_close(transport *t)
{
    if (t->fd >= 0) close(t->fd);
    t->fd = -1;
}

/* The socket's bytes, peeked (MSG_PEEK) or taken, without waiting. */
static long tcp_look(transport *t, void *buf, size_t n, int take)
{
    for (;;) {
        ssize_t k = recv(t->fd, buf, n, (take ? 0 : MSG_PEEK) | MSG_DONTWAIT);
        if (k > 0) return (long)k;
        if (k == 0) return -1; /* closed */
        if (errno == EINTR) continue;
        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
    }
}

static long tcp_ready(transport *t)
{
    int queued = 0;
    return ioctl(t->fd, FIONREAD, &queued) == 0 ? queued : -1;
}

static size_t tcp_window(const transport *t)
{
    (void)t;
    return SIZE_MAX; /* the socket's buffer */
}

static int tcp_seal(transport *t, transport_bytes *out, err_t *err)
{
    (void)t;
    (void)out;
    (void)err;
    return 0; /* plaintext is what goes */
}

static ssize_t tcp_send_now(transport *t, const void *bytes, size_t len, size_t *size)
{
    if (size) *size = len;
    ssize_t k;
    do k = send(t->fd, bytes, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    while (k < 0 && errno == EINTR);
    return k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : k;
}

const transport_ops transport_tcp_ops = {"tcp",    tcp_recv,  tcp_send,   tcp_start, tcp_pending, tcp_close,
                                         tcp_look, tcp_ready, tcp_window, tcp_seal,  tcp_send_now};

transport transport_tcp(int fd)
{
    transport t = {&transport_tcp_ops, fd, NULL};
    return t;
}

transport transport_none(void)
{
    return transport_tcp(-1);
}

int transport_connect(transport *t, const transport_ops *ops, const char *host, int port,
                      int timeout_ms, err_t *err)
{
    int fd = sock_connect(host, port, timeout_ms, err);
    if (fd < 0) return err->code;
    t->ops = ops;
    t->fd = fd;
    t->session = NULL;
    int rc = ops->start(t, 0, err);
    if (rc != 0) transport_close(t);
    return rc;
}

void transport_close(transport *t)
{
    if (t->ops != NULL && (t->fd >= 0 || t->session != NULL)) t->ops->close(t);
    t->fd = -1;
    t->session = NULL;
}
