/* transport_mem.c -- a read-only stream over bytes already in memory (a
 * whole packet the dispatcher read without blocking), parsed by a reader. */
#include "transport.h"

#include <errno.h>
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

static const transport_ops transport_mem_ops = {"memory", mem_recv, mem_send, mem_start, mem_pending,
                                                mem_close};

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
