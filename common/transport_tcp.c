/* transport_tcp.c -- the plain TCP entry of the transport table, and the
 * helpers every kind shares (connect, close). */
#include "transport.h"

#include <errno.h>
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

const transport_ops transport_tcp_ops = {"tcp", tcp_recv, tcp_send, tcp_start, tcp_pending, tcp_close};

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
