/* seeds_rawring.c -- a ring of k raw TCP relays (forked), the socket limit of
 * a handle passed server to server: store-and-forward, one message at a time. */
#define _GNU_SOURCE
#include "seeds_rawring.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rawtcp.h"

enum { CMD_PUT = 1, CMD_GO = 2, CMD_GET = 3 };

static int put_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = send(fd, c, n > RAWTCP_CHUNK ? RAWTCP_CHUNK : n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static int take_all(int fd, void *p, size_t n)
{
    char *c = p;
    while (n > 0) {
        ssize_t r = recv(fd, c, n > RAWTCP_CHUNK ? RAWTCP_CHUNK : n, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

static void tune(int fd)
{
    int one = 1, buf = RAWTCP_SOCKBUF;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Grows *buf to n bytes.  0 or -1. */
static int room(char **buf, size_t *cap, size_t n)
{
    if (n <= *cap) return 0;
    char *b = realloc(*buf, n);
    if (!b) return -1;
    *buf = b;
    *cap = n;
    return 0;
}

/* A relay: each message (8-byte length, then the bytes) read whole from in,
 * then written to out, until in ends. */
static void relay_main(int in, int out)
{
    char *buf = NULL;
    size_t cap = 0;
    uint64_t n;
    while (take_all(in, &n, sizeof n) == 0 && room(&buf, &cap, n) == 0 && take_all(in, buf, n) == 0 &&
           put_all(out, &n, sizeof n) == 0 && put_all(out, buf, n) == 0)
        ;
    _exit(0);
}

/* Node 0: obeys the control socket; a GO sends its bytes around the ring. */
static void origin_main(int ctl, int in, int out)
{
    char *buf = NULL, *back = NULL;
    size_t cap = 0, bcap = 0;
    uint64_t cmd[2]; /* what, bytes */
    while (take_all(ctl, cmd, sizeof cmd) == 0) {
        uint64_t n = cmd[1], got = 0;
        if (room(&buf, &cap, n) != 0 || room(&back, &bcap, n) != 0) break;
        if (cmd[0] == CMD_PUT && take_all(ctl, buf, n) != 0) break;
        if (cmd[0] == CMD_GET && put_all(ctl, buf, n) != 0) break;
        if (cmd[0] == CMD_GO) {
            if (put_all(out, &n, sizeof n) != 0 || put_all(out, buf, n) != 0 ||
                take_all(in, &got, sizeof got) != 0 || got != n || take_all(in, back, n) != 0)
                break;
            char *t = buf;
            buf = back;
            back = t;
            size_t c = cap;
            cap = bcap;
            bcap = c;
            if (put_all(ctl, &got, sizeof got) != 0) break;
        }
    }
    _exit(0);
}

int rawring_start(rawring *r, int k, int cpu)
{
    int lfd[16], port[16], sv[2];
    memset(r, 0, sizeof *r);
    r->ctl = -1;
    if (k < 2 || k > 16 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return -1;
    int made = 0, rc = 0;
    for (; made < k && rc == 0; made++) {
        struct sockaddr_in sa;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof sa;
        lfd[made] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (lfd[made] >= 0) tune(lfd[made]); /* inherited by the accepted socket */
        if (lfd[made] < 0 || bind(lfd[made], (struct sockaddr *)&sa, sizeof sa) != 0 ||
            listen(lfd[made], 4) != 0 || getsockname(lfd[made], (struct sockaddr *)&sa, &len) != 0)
            rc = -1;
        port[made] = ntohs(sa.sin_port);
    }
    for (int i = 0; i < k && rc == 0; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            rc = -1;
            break;
        }
        if (pid == 0) {
            signal(SIGTERM, SIG_DFL);
            if (cpu >= 0) {
                cpu_set_t set;
                CPU_ZERO(&set);
                CPU_SET(cpu, &set);
                sched_setaffinity(0, sizeof set, &set);
            }
            struct sockaddr_in sa;
            memset(&sa, 0, sizeof sa);
            sa.sin_family = AF_INET;
            sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            sa.sin_port = htons((uint16_t)port[(i + 1) % k]);
            int out = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (out < 0) _exit(1);
            tune(out);
            if (connect(out, (struct sockaddr *)&sa, sizeof sa) != 0) _exit(1);
            int in = accept4(lfd[i], NULL, NULL, SOCK_CLOEXEC);
            if (in < 0) _exit(1);
            int one = 1;
            setsockopt(in, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            for (int j = 0; j < k; j++) close(lfd[j]);
            close(sv[0]);
            if (i == 0) origin_main(sv[1], in, out);
            close(sv[1]);
            relay_main(in, out);
        }
        r->pid[i] = pid;
        r->k = i + 1;
    }
    for (int j = 0; j < made; j++)
        if (lfd[j] >= 0) close(lfd[j]);
    close(sv[1]);
    r->ctl = sv[0];
    if (rc != 0) rawring_stop(r);
    return rc;
}

static int command(rawring *r, uint64_t what, size_t n)
{
    uint64_t cmd[2] = {what, (uint64_t)n};
    return r->ctl >= 0 ? put_all(r->ctl, cmd, sizeof cmd) : -1;
}

int rawring_put(rawring *r, const void *src, size_t n)
{
    return command(r, CMD_PUT, n) == 0 ? put_all(r->ctl, src, n) : -1;
}

int rawring_trip(rawring *r, size_t n)
{
    uint64_t got = 0;
    if (command(r, CMD_GO, n) != 0 || take_all(r->ctl, &got, sizeof got) != 0) return -1;
    return got == n ? 0 : -1;
}

int rawring_get(rawring *r, void *dst, size_t n)
{
    return command(r, CMD_GET, n) == 0 ? take_all(r->ctl, dst, n) : -1;
}

void rawring_stop(rawring *r)
{
    if (r->ctl >= 0) close(r->ctl);
    r->ctl = -1;
    for (int i = 0; i < r->k; i++) {
        int done = 0;
        for (int t = 0; t < 200 && !done; t++) {
            done = waitpid(r->pid[i], NULL, WNOHANG) == r->pid[i];
            if (!done) usleep(10000);
        }
        if (!done) {
            kill(r->pid[i], SIGKILL);
            waitpid(r->pid[i], NULL, 0);
        }
    }
    r->k = 0;
}
