/* sock.c -- TCP listen/connect with tuning, host:port parsing, descriptor
 * passing over Unix sockets, and the monotonic clock. */
#include "sock.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

double sock_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int sock_parse_hostport(const char *text, char *host, size_t hostlen,
                        int *port, err_t *err)
{
    const char *colon;
    const char *h = text;
    size_t hlen;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (close == NULL || close[1] != ':')
            return err_set(err, NUMRPC_EINVAL, "bad address \"%s\" (want [v6addr]:port)", text);
        h = text + 1;
        hlen = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(text, ':');
        if (colon == NULL)
            return err_set(err, NUMRPC_EINVAL, "bad address \"%s\" (want host:port)", text);
        hlen = (size_t)(colon - text);
    }
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (hlen == 0 || hlen >= hostlen || *end != '\0' || p <= 0 || p > 65535)
        return err_set(err, NUMRPC_EINVAL, "bad address \"%s\" (want host:port)", text);
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    *port = (int)p;
    return 0;
}

/* Socket buffer size from NUMRPC_SOCKBUF (bytes; unset or 0 = the kernel's
 * default), for the benchmarks' buffer-size sweep.  Applied to fd if set. */
static void sock_apply_bufsize(int fd)
{
    const char *env = getenv("NUMRPC_SOCKBUF");
    int size = env ? atoi(env) : 0;
    if (size <= 0) return;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
}

void sock_tune(int fd)
{
    const char *nodelay_env = getenv("NUMRPC_TCP_NODELAY"); /* "0" turns Nagle back on */
    int one = 1, nodelay = nodelay_env && strcmp(nodelay_env, "0") == 0 ? 0 : 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof nodelay);
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    sock_apply_bufsize(fd);
}

void sock_set_timeouts(int fd, int send_ms, int recv_ms)
{
    struct timeval s = {send_ms / 1000, (send_ms % 1000) * 1000};
    struct timeval r = {recv_ms / 1000, (recv_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &s, sizeof s);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &r, sizeof r);
}

int sock_await(int fd, short events)
{
    struct timeval tv = {0, 0};
    socklen_t len = sizeof tv;
    getsockopt(fd, SOL_SOCKET, events == POLLIN ? SO_RCVTIMEO : SO_SNDTIMEO, &tv, &len);
    int ms = tv.tv_sec == 0 && tv.tv_usec == 0 ? -1 : (int)(tv.tv_sec * 1000 + tv.tv_usec / 1000) + 1;
    for (;;) {
        struct pollfd p = {fd, events, 0};
        int n = poll(&p, 1, ms);
        if (n > 0) return 0;
        if (n == 0) errno = EAGAIN;
        if (n == 0 || errno != EINTR) return -1;
    }
}

int sock_listen(const char *bind_addr, int port, int *port_out, err_t *err)
{
    struct addrinfo hints = {0}, *res = NULL;
    char portstr[16];
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    snprintf(portstr, sizeof portstr, "%d", port);
    int rc = getaddrinfo(bind_addr, portstr, &hints, &res);
    if (rc != 0)
        return err_set(err, NUMRPC_EINVAL, "cannot resolve %s: %s", bind_addr, gai_strerror(rc));
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) goto fail;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sock_apply_bufsize(fd); /* before listen: counts for the window scale */
    if (bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 512) != 0) goto fail;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    *port_out = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                               : ((struct sockaddr_in *)&ss)->sin_port);
    freeaddrinfo(res);
    return fd;
fail:
    err_set(err, NUMRPC_ECONNECT, "cannot listen on %s:%d: %s", bind_addr, port, strerror(errno));
    if (fd >= 0) close(fd);
    freeaddrinfo(res);
    return NUMRPC_ECONNECT;
}

static int connect_within(int fd, const struct sockaddr *sa, socklen_t len, int timeout_ms)
{
    int flags = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    int rc = connect(fd, sa, len);
    if (rc != 0 && errno == EINPROGRESS) {
        struct pollfd p = {fd, POLLOUT, 0};
        rc = poll(&p, 1, timeout_ms > 0 ? timeout_ms : -1);
        if (rc == 1) {
            int soerr = 0;
            socklen_t sl = sizeof soerr;
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
            errno = soerr;
            rc = soerr == 0 ? 0 : -1;
        } else {
            if (rc == 0) errno = ETIMEDOUT;
            rc = -1;
        }
    }
    fcntl(fd, F_SETFL, flags);
    return rc;
}

int sock_connect(const char *host, int port, int timeout_ms, err_t *err)
{
    struct addrinfo hints = {0}, *res = NULL;
    char portstr[16];
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    snprintf(portstr, sizeof portstr, "%d", port);
    int rc = getaddrinfo(host, portstr, &hints, &res);
    if (rc != 0)
        return err_set(err, NUMRPC_ECONNECT, "cannot resolve %s: %s", host, gai_strerror(rc));
    int saved = 0;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        int fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        if (connect_within(fd, a->ai_addr, a->ai_addrlen, timeout_ms) == 0) {
            freeaddrinfo(res);
            sock_tune(fd);
            return fd;
        }
        saved = errno;
        close(fd);
    }
    freeaddrinfo(res);
    return err_set(err, NUMRPC_ECONNECT, "cannot connect to %s:%d: %s", host, port, strerror(saved));
}

int sock_send_fds(int unix_fd, const int *fds, int nfds, const void *msg, size_t len)
{
    struct iovec iov = {(void *)(uintptr_t)msg, len};
    union {
        char buf[CMSG_SPACE(SOCK_FDS_MAX * sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr mh = {0};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (nfds > SOCK_FDS_MAX) return -1;
    if (nfds > 0) {
        memset(&control, 0, sizeof control);
        mh.msg_control = control.buf;
        mh.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
        memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
    }
    ssize_t k;
    do k = sendmsg(unix_fd, &mh, MSG_NOSIGNAL);
    while (k < 0 && errno == EINTR);
    return k == (ssize_t)len ? 0 : -1;
}

int sock_send_fd(int unix_fd, int fd_to_pass, const void *msg, size_t len)
{
    return sock_send_fds(unix_fd, &fd_to_pass, fd_to_pass >= 0, msg, len);
}

ssize_t sock_recv_fds(int unix_fd, int *fds, int nmax, void *msg, size_t len)
{
    struct iovec iov = {msg, len};
    union {
        char buf[CMSG_SPACE(SOCK_FDS_MAX * sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr mh = {0};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control.buf;
    mh.msg_controllen = sizeof control.buf;
    for (int i = 0; i < nmax; i++) fds[i] = -1;
    ssize_t k;
    do k = recvmsg(unix_fd, &mh, MSG_CMSG_CLOEXEC);
    while (k < 0 && errno == EINTR);
    if (k < 0) return k;
    /* Descriptors beyond nmax are closed: a peer cannot leave any here. */
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        int got[SOCK_FDS_MAX];
        size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        if (n > SOCK_FDS_MAX) n = SOCK_FDS_MAX;
        memcpy(got, CMSG_DATA(c), n * sizeof(int));
        for (size_t i = 0; i < n; i++) {
            if ((int)i < nmax && fds[i] < 0) fds[i] = got[i];
            else close(got[i]);
        }
    }
    return k;
}

ssize_t sock_recv_fd(int unix_fd, int *fd_out, void *msg, size_t len)
{
    return sock_recv_fds(unix_fd, fd_out, 1, msg, len);
}
