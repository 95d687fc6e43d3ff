/* delay_proxy.c -- numrpc-delay-proxy: a TCP forwarder on 127.0.0.1 that holds
 * every chunk for a fixed time in each direction, to emulate WAN latency. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (64 * 1024)

typedef struct chunk {
    struct timespec due; /* when it may leave */
    size_t len;          /* 0 = the sender closed */
    struct chunk *next;
    char data[];
} chunk;

/* One direction of one connection: a reader queues, a writer delays. */
typedef struct pipe_dir {
    int from, to;
    long delay_ns;
    pthread_mutex_t lock;
    pthread_cond_t ready;
    chunk *head, *tail;
} pipe_dir;

static void add_ns(struct timespec *t, long ns)
{
    t->tv_nsec += ns % 1000000000L;
    t->tv_sec += ns / 1000000000L + t->tv_nsec / 1000000000L;
    t->tv_nsec %= 1000000000L;
}

static void push(pipe_dir *p, chunk *c)
{
    pthread_mutex_lock(&p->lock);
    if (p->tail) p->tail->next = c;
    else p->head = c;
    p->tail = c;
    pthread_cond_signal(&p->ready);
    pthread_mutex_unlock(&p->lock);
}

static void *reader(void *arg)
{
    pipe_dir *p = arg;
    for (;;) {
        chunk *c = malloc(sizeof *c + CHUNK);
        if (!c) break;
        ssize_t k = recv(p->from, c->data, CHUNK, 0);
        if (k < 0 && errno == EINTR) {
            free(c);
            continue;
        }
        c->len = k > 0 ? (size_t)k : 0;
        c->next = NULL;
        clock_gettime(CLOCK_MONOTONIC, &c->due);
        add_ns(&c->due, p->delay_ns);
        push(p, c);
        if (k <= 0) break;
    }
    return NULL;
}

static void *writer(void *arg)
{
    pipe_dir *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        while (!p->head) pthread_cond_wait(&p->ready, &p->lock);
        chunk *c = p->head;
        p->head = c->next;
        if (!p->head) p->tail = NULL;
        pthread_mutex_unlock(&p->lock);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &c->due, NULL) == EINTR) {}
        int done = c->len == 0;
        for (size_t off = 0; off < c->len;) {
            ssize_t k = send(p->to, c->data + off, c->len - off, MSG_NOSIGNAL);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) {
                done = 1;
                break;
            }
            off += (size_t)k;
        }
        free(c);
        if (done) {
            shutdown(p->to, SHUT_WR);
            return NULL;
        }
    }
}

typedef struct conn_args {
    int client, server;
    long delay_ns;
} conn_args;

static void *serve_conn(void *arg)
{
    conn_args *a = arg;
    pipe_dir up = {a->client, a->server, a->delay_ns, PTHREAD_MUTEX_INITIALIZER,
                   PTHREAD_COND_INITIALIZER, NULL, NULL};
    pipe_dir down = {a->server, a->client, a->delay_ns, PTHREAD_MUTEX_INITIALIZER,
                     PTHREAD_COND_INITIALIZER, NULL, NULL};
    pthread_t t[4];
    pthread_create(&t[0], NULL, reader, &up);
    pthread_create(&t[1], NULL, writer, &up);
    pthread_create(&t[2], NULL, reader, &down);
    pthread_create(&t[3], NULL, writer, &down);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    close(a->client);
    close(a->server);
    free(a);
    return NULL;
}

static int loopback_socket(int port, int listening)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    /* NUMRPC_BENCH_HOST (e.g. a veth address) for both ends, else loopback. */
    const char *host = getenv("NUMRPC_BENCH_HOST");
    if (!host || inet_pton(AF_INET, host, &sa.sin_addr) != 1)
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (listening) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 64) != 0) goto fail;
    } else if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        goto fail;
    }
    return fd;
fail:
    close(fd);
    return -1;
}

int main(int argc, char **argv)
{
    const char *port_file = NULL;
    int to = 0;
    double delay_ms = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--port-file") == 0) port_file = argv[i + 1];
        else if (strcmp(argv[i], "--to") == 0) to = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--delay-ms") == 0) delay_ms = atof(argv[i + 1]);
    }
    if (!port_file || to <= 0 || delay_ms < 0) {
        fprintf(stderr, "usage: numrpc-delay-proxy --port-file F --to PORT --delay-ms D\n"
                        "Forwards HOST:(chosen port) to HOST:PORT, holding each chunk\n"
                        "D ms in each direction (a round trip gains 2 D).  HOST: env\n"
                        "NUMRPC_BENCH_HOST (an IPv4 address), else 127.0.0.1.\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    int lfd = loopback_socket(0, 1);
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    if (lfd < 0 || getsockname(lfd, (struct sockaddr *)&sa, &sl) != 0) {
        perror("numrpc-delay-proxy: listen");
        return 1;
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
    FILE *f = fopen(tmp, "w");
    if (!f) return 1;
    fprintf(f, "%d\n", ntohs(sa.sin_port));
    fclose(f);
    rename(tmp, port_file);
    for (;;) {
        int c = accept(lfd, NULL, NULL);
        if (c < 0) {
            if (errno == EINTR) continue;
            return 1;
        }
        int s = loopback_socket(to, 0);
        if (s < 0) {
            close(c);
            continue;
        }
        conn_args *a = malloc(sizeof *a);
        if (!a) return 1;
        a->client = c;
        a->server = s;
        a->delay_ns = (long)(delay_ms * 1e6);
        pthread_t t;
        pthread_create(&t, NULL, serve_conn, a);
        pthread_detach(t);
    }
}
