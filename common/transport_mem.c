/* transport_mem.c -- streams in memory: a read-only one over bytes already
 * read (a whole packet the dispatcher read without blocking), parsed by a
 * reader; and a write-only sink a writer frames replies into. */
#include "transport.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The stream's state: malloc'd by transport_memory, freed by close. */
typedef struct mem_stream {
    const unsigned char *p; /* the caller's buffer: valid until close */
    size_t left;
} mem_stream;

static ssize_t mem_recv(transport *t, void *buf, size_t n)
{
    mem_stream *m = t->session;
    if (m == NULL) {
        errno = EBADF;
        return -1;
    }
    size_t k = n < m->left ? n : m->left;
    if (k > 0) /* an empty stream may have no buffer (NULL) */
        memcpy(buf, m->p, k);
    m->p += k;
    m->left -= k;
    return (ssize_t)k; /* 0 once every byte is read: the peer closed */
}

static ssize_t mem_send(transport *t, const void *buf, size_t n)
{
    (void)t;
    (void)buf;
    (void)n;
    errno = EBADF;
    return -1;
}

static int mem_start(transport *t, int server_side, err_t *err)
{
    (void)t;
    (void)server_side;
    (void)err;
    return 0;
}

static size_t mem_pending(const transport *t)
{
    const mem_stream *m = t->session;
    return m ? m->left : 0;
}

static void mem_close(transport *t)
{
    free(t->session);
    t->session = NULL;
}

/* A client's kinds: no look without blocking (transport.h). */
static const transport_ops transport_mem_ops = {"memory", mem_recv, mem_send, mem_start, mem_pending,
                                                mem_close, NULL, NULL, NULL, NULL, NULL};

transport transport_memory(const void *buf, size_t len)
{
    transport t = {&transport_mem_ops, -1, NULL};
    mem_stream *m = malloc(sizeof *m);
    if (m == NULL) return t; /* reads fail with EBADF */
    m->p = buf;
    m->left = len;
    t.session = m;
    return t;
}

/* ---- The sink ---- */

static ssize_t sink_recv(transport *t, void *buf, size_t n)
{
    (void)t;
    (void)buf;
    (void)n;
    errno = EBADF;
    return -1;
}

static ssize_t sink_send(transport *t, const void *buf, size_t n)
{
    transport_bytes *b = t->session;
    if (b == NULL) {
        errno = EBADF;
        return -1;
    }
    if (n > b->max || b->len > b->max - n) {
        errno = ENOBUFS;
        return -1;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n) cap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
        if (cap > b->max) cap = b->max;
        unsigned char *p = realloc(b->p, cap);
        if (p == NULL) {
            errno = ENOMEM;
            return -1;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, buf, n);
    b->len += n;
    return (ssize_t)n;
}

static size_t sink_pending(const transport *t)
{
    (void)t;
    return 0;
}

static void sink_close(transport *t)
{
    t->session = NULL; /* the bytes belong to their owner */
}

static const transport_ops transport_sink_ops = {"memory sink", sink_recv, sink_send, mem_start, sink_pending,
                                                 sink_close, NULL, NULL, NULL, NULL, NULL};

transport transport_memory_sink(transport_bytes *out)
{
    transport t = {&transport_sink_ops, -1, out};
    return t;
}

void transport_bytes_free(transport_bytes *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}
