/* rawtcp.c -- raw TCP echo server (forked child, a thread per connection)
 * and client for the benchmark baseline: tuned, naive, and 8-byte ping-pong. */
#define _GNU_SOURCE
#include "rawtcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PING_FLAG (1ull << 63)
#define SINK_FLAG (1ull << 62) /* one-way: the server answers an 8-byte ack */
#define STAMP_FLAG (1ull << 61) /* with SINK_FLAG: the ack, then the time the last byte came */

/* The address listeners bind to and clients connect to: NUMRPC_BENCH_HOST
 * (an IPv4 address, e.g. the server end of a veth pair), else 127.0.0.1. */
static struct in_addr bench_host(void)
{
    struct in_addr a;
    const char *h = getenv("NUMRPC_BENCH_HOST");
    if (!h || inet_pton(AF_INET, h, &a) != 1) a.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

double rawtcp_sink_ack(const void *data, size_t n)
{
    size_t k = n / 8;
    if (k == 0) return 0.0;
    double first, mid, last;
    memcpy(&first, data, 8);
    memcpy(&mid, (const char *)data + k / 2 * 8, 8);
    memcpy(&last, (const char *)data + (k - 1) * 8, 8);
    return first + mid + last;
}

static void set_tuned(int fd)
{
    int one = 1, buf = RAWTCP_SOCKBUF;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void rawtcp_bufsizes(int fd, int *snd, int *rcv)
{
    socklen_t len = sizeof *snd;
    *snd = *rcv = -1;
    getsockopt(fd, SOL_SOCKET, SO_SNDBUF, snd, &len);
    len = sizeof *rcv;
    getsockopt(fd, SOL_SOCKET, SO_RCVBUF, rcv, &len);
}

/* Whole-buffer send/recv; chunk 0 = one call for everything that is left. */
static int send_all(int fd, const void *p, size_t n, size_t chunk)
{
    const char *c = p;
    while (n > 0) {
        size_t k = chunk && n > chunk ? chunk : n;
        ssize_t w = send(fd, c, k, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static int recv_all(int fd, void *p, size_t n, size_t chunk)
{
    char *c = p;
    while (n > 0) {
        size_t k = chunk && n > chunk ? chunk : n;
        ssize_t r = recv(fd, c, k, 0);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (r == 0) return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

static size_t mode_chunk(enum rawtcp_mode mode)
{
    return mode == RAWTCP_TUNED ? RAWTCP_CHUNK : 0;
}

struct conn_arg {
    int fd;
    enum rawtcp_mode mode;
};

static void *serve_conn(void *p)
{
    struct conn_arg a = *(struct conn_arg *)p;
    free(p);
    size_t chunk = mode_chunk(a.mode);
    char *buf = NULL;
    size_t cap = 0;
    for (;;) {
        uint64_t hdr;
        if (recv_all(a.fd, &hdr, sizeof hdr, 0) != 0) break;
        if (hdr & PING_FLAG) {
            if (send_all(a.fd, &hdr, sizeof hdr, 0) != 0) break;
            continue;
        }
        size_t n = (size_t)(hdr & ~(SINK_FLAG | STAMP_FLAG));
        if (n > cap) {
            char *nb = realloc(buf, n);
            if (!nb) break;
            buf = nb;
            cap = n;
        }
        if (recv_all(a.fd, buf, n, chunk) != 0) break;
        if (hdr & SINK_FLAG) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            double reply[2] = {rawtcp_sink_ack(buf, n), (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9};
            if (send_all(a.fd, reply, hdr & STAMP_FLAG ? sizeof reply : sizeof reply[0], 0) != 0) break;
            continue;
        }
        if (send_all(a.fd, buf, n, chunk) != 0) break;
    }
    free(buf);
    close(a.fd);
    return NULL;
}

static int listen_on(enum rawtcp_mode mode, int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    /* Buffer sizes set on the listener are inherited by accepted sockets
     * and count when the window scale is chosen at SYN time. */
    if (mode == RAWTCP_TUNED) set_tuned(fd);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr = bench_host();
    socklen_t len = sizeof sa;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 16) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

static void server_main(int lfd[2], int cpu)
{
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        sched_setaffinity(0, sizeof set, &set);
    }
    struct pollfd pf[2] = {{lfd[0], POLLIN, 0}, {lfd[1], POLLIN, 0}};
    for (;;) {
        if (poll(pf, 2, -1) < 0) {
            if (errno == EINTR) continue;
            _exit(1);
        }
        for (int m = 0; m < 2; m++) {
            if (!(pf[m].revents & POLLIN)) continue;
            int fd = accept4(lfd[m], NULL, NULL, SOCK_CLOEXEC);
            if (fd < 0) continue;
            if (m == RAWTCP_TUNED) { /* accepted sockets inherit buffers; NODELAY too */
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            }
            struct conn_arg *a = malloc(sizeof *a);
            if (!a) {
                close(fd);
                continue;
            }
            a->fd = fd;
            a->mode = (enum rawtcp_mode)m;
            pthread_t th;
            if (pthread_create(&th, NULL, serve_conn, a) != 0) {
                close(fd);
                free(a);
                continue;
            }
            pthread_detach(th);
        }
    }
}

int rawtcp_server_spawn(rawtcp_server *s, int cpu)
{
    int lfd[2];
    lfd[0] = listen_on(RAWTCP_TUNED, &s->port[0]);
    if (lfd[0] < 0) return -1;
    lfd[1] = listen_on(RAWTCP_NAIVE, &s->port[1]);
    if (lfd[1] < 0) {
        close(lfd[0]);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(lfd[0]);
        close(lfd[1]);
        return -1;
    }
    if (pid == 0) {
        signal(SIGTERM, SIG_DFL);
        server_main(lfd, cpu);
        _exit(0);
    }
    close(lfd[0]);
    close(lfd[1]);
    s->pid = pid;
    return 0;
}

void rawtcp_server_stop(rawtcp_server *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        waitpid(s->pid, NULL, 0);
        s->pid = 0;
    }
}

int rawtcp_connect(const rawtcp_server *s, enum rawtcp_mode mode)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (mode == RAWTCP_TUNED) set_tuned(fd);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr = bench_host();
    sa.sin_port = htons((uint16_t)s->port[mode]);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The header goes out in the same sendmsg as the first part of the data, so
 * that Nagle (on in the naive mode) never holds a lone small segment. */
static int send_hdr_data(int fd, uint64_t hdr, const char *p, size_t n, size_t chunk)
{
    size_t first = chunk && n > chunk ? chunk : n;
    size_t hdr_left = sizeof hdr, data_left = first;
    const char *h = (const char *)&hdr;
    while (hdr_left > 0) {
        struct iovec iov[2] = {{(void *)h, hdr_left}, {(void *)p, data_left}};
        struct msghdr mh;
        memset(&mh, 0, sizeof mh);
        mh.msg_iov = iov;
        mh.msg_iovlen = data_left ? 2 : 1;
        ssize_t w = sendmsg(fd, &mh, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        size_t uw = (size_t)w;
        if (uw >= hdr_left) {
            uw -= hdr_left;
            hdr_left = 0;
            p += uw;
            data_left -= uw;
            n -= uw;
        } else {
            h += uw;
            hdr_left -= uw;
        }
    }
    return send_all(fd, p, n, chunk);
}

int rawtcp_echo(int fd, enum rawtcp_mode mode, const void *src, void *dst, size_t n)
{
    size_t chunk = mode_chunk(mode);
    if (send_hdr_data(fd, (uint64_t)n, src, n, chunk) != 0) return -1;
    return recv_all(fd, dst, n, chunk);
}

int rawtcp_sink(int fd, enum rawtcp_mode mode, const void *src, size_t n, double *ack)
{
    if (send_hdr_data(fd, (uint64_t)n | SINK_FLAG, src, n, mode_chunk(mode)) != 0) return -1;
    return recv_all(fd, ack, sizeof *ack, 0);
}

int rawtcp_ping(int fd, unsigned long long word)
{
    uint64_t out = (uint64_t)word | PING_FLAG, in = 0;
    if (send_all(fd, &out, sizeof out, 0) != 0) return -1;
    if (recv_all(fd, &in, sizeof in, 0) != 0) return -1;
    return in == out ? 0 : -1;
}

int rawtcp_sink_at(int fd, enum rawtcp_mode mode, const void *src, size_t n, double *ack, double *arrived)
{
    double reply[2];
    if (send_hdr_data(fd, (uint64_t)n | SINK_FLAG | STAMP_FLAG, src, n, mode_chunk(mode)) != 0) return -1;
    if (recv_all(fd, reply, sizeof reply, 0) != 0) return -1;
    *ack = reply[0];
    *arrived = reply[1];
    return 0;
}

int rawtcp_sink_stream(int fd, enum rawtcp_mode mode, const void *src, size_t n, int count)
{
    double want = rawtcp_sink_ack(src, n), ack;
    for (int i = 0; i < count; i++)
        if (send_hdr_data(fd, (uint64_t)n | SINK_FLAG, src, n, mode_chunk(mode)) != 0) return -1;
    for (int i = 0; i < count; i++)
        if (recv_all(fd, &ack, sizeof ack, 0) != 0 || ack != want) return -1;
    return 0;
}

int rawtcp_ping_stream(int fd, int count)
{
    for (int i = 0; i < count; i++) {
        uint64_t out = (uint64_t)(i + 1) | PING_FLAG;
        if (send_all(fd, &out, sizeof out, 0) != 0) return -1;
    }
    for (int i = 0; i < count; i++) {
        uint64_t in = 0;
        if (recv_all(fd, &in, sizeof in, 0) != 0 || in != ((uint64_t)(i + 1) | PING_FLAG)) return -1;
    }
    return 0;
}
