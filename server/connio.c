/* connio.c -- a connection's bytes as the dispatcher and the workers see
 * them: straight from its socket, or through its TLS stream state. */
#define _GNU_SOURCE
#include "connio.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "wire.h"

/* A plain socket's look at its bytes: recv with flags (MSG_PEEK or not). */
static long plain_read(int fd, void *buf, size_t n, int flags)
{
    for (;;) {
        ssize_t k = recv(fd, buf, n, flags | MSG_DONTWAIT);
        if (k > 0) return (long)k;
        if (k == 0) return -1; /* closed */
        if (errno == EINTR) continue;
        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
    }
}

/* Opens what the socket has: the plaintext ready, or -1 (failed, or the
 * peer finished and nothing is left). */
static long tls_ready(int fd, tls_stream_state *tls)
{
    err_t ignored;
    long k = tls_record_pull(fd, tls, &ignored);
    if (k < 0) return -1;
    return k == 0 && tls->eof ? -1 : k;
}

long connio_peek(int fd, tls_stream_state *tls, void *buf, size_t n)
{
    if (tls == NULL) return plain_read(fd, buf, n, MSG_PEEK);
    long k = tls_ready(fd, tls);
    if (k <= 0) return k;
    const unsigned char *p;
    size_t got = tls_record_peek(tls, &p);
    if (got > n) got = n;
    memcpy(buf, p, got);
    return (long)got;
}

long connio_take(int fd, tls_stream_state *tls, void *buf, size_t n)
{
    if (tls == NULL) return plain_read(fd, buf, n, 0);
    long k = connio_peek(fd, tls, buf, n);
    if (k > 0) tls_record_consume(tls, (size_t)k);
    return k;
}

long connio_ready(int fd, tls_stream_state *tls)
{
    if (tls != NULL) return tls_ready(fd, tls);
    int queued = 0;
    return ioctl(fd, FIONREAD, &queued) == 0 ? queued : -1;
}

size_t connio_window(const tls_stream_state *tls)
{
    return tls != NULL ? TLS_PLAINTEXT_MAX : SIZE_MAX;
}

int connio_buffered(const tls_stream_state *tls)
{
    if (tls == NULL || tls->broken) return 0;
    if (tls->plain_len > 0) return 1;
    if (tls->cipher_len < TLS_RECORD_HEADER) return 0;
    size_t len = (size_t)tls->cipher[3] << 8 | tls->cipher[4];
    return tls->cipher_len >= TLS_RECORD_HEADER + len;
}

int connio_seal(tls_stream_state *tls, transport_bytes *out, err_t *err)
{
    if (tls == NULL || out->len == 0) return 0;
    /* Each record adds its header, the inner type and the tag. */
    size_t records = (out->len + TLS_PLAINTEXT_MAX - 1) / TLS_PLAINTEXT_MAX;
    transport_bytes sealed = {.max = out->len + records * (TLS_CIPHERTEXT_MAX - TLS_PLAINTEXT_MAX + TLS_RECORD_HEADER)};
    int rc = tls_record_seal(tls, out->p, out->len, &sealed, err);
    if (rc != 0) {
        transport_bytes_free(&sealed);
        return rc;
    }
    transport_bytes_free(out);
    *out = sealed;
    return 0;
}

ssize_t connio_send_now(int fd, tls_stream_state *tls, const void *bytes, size_t len, size_t *size)
{
    transport_bytes sealed = {.max = SIZE_MAX};
    const void *p = bytes;
    tls_direction before = tls ? tls->out : (tls_direction){0}; /* key and number: a KeyUpdate may change both */
    err_t ignored;
    if (tls != NULL) {
        if (tls_record_seal(tls, bytes, len, &sealed, &ignored) != 0) {
            transport_bytes_free(&sealed);
            return -1;
        }
        p = sealed.p;
        len = sealed.len;
    }
    if (size) *size = len;
    ssize_t k;
    do {
        k = send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    } while (k < 0 && errno == EINTR);
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) k = 0;
    if (k == 0 && tls != NULL) tls->out = before; /* nothing went: the numbers (and the key) are free again */
    transport_bytes_free(&sealed);
    return k;
}

size_t connio_state_size(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (sizeof(tls_stream_state) + page - 1) / page * page;
}

tls_stream_state *connio_state_new(int *memfd, err_t *err)
{
    size_t len = connio_state_size();
    int fd = memfd_create("numrpc-tls-state", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return err_set(err, NUMRPC_ESERVER, "memfd_create: %s", strerror(errno)), NULL;
    /* Its size is fixed for good: a worker cannot shrink it under the
     * dispatcher's mapping (a SIGBUS here) nor grow it. */
    if (ftruncate(fd, (off_t)len) != 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        err_set(err, NUMRPC_ESERVER, "the TLS state's memory: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    tls_stream_state *st = connio_state_map(fd);
    if (st == NULL) {
        err_set(err, NUMRPC_ESERVER, "mmap (a TLS state): %s", strerror(errno));
        close(fd);
        return NULL;
    }
    *memfd = fd;
    return st;
}

void connio_state_free(tls_stream_state *tls, int memfd)
{
    if (tls != NULL) {
        explicit_bzero(tls, sizeof *tls); /* keys, sequence numbers, plaintext */
        connio_state_unmap(tls);
    }
    if (memfd >= 0) close(memfd);
}

tls_stream_state *connio_state_map(int memfd)
{
    struct stat st;
    if (fstat(memfd, &st) != 0 || (size_t)st.st_size != connio_state_size()) return NULL;
    void *p = mmap(NULL, connio_state_size(), PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    return p == MAP_FAILED ? NULL : p;
}

void connio_state_unmap(tls_stream_state *tls)
{
    if (tls != NULL) munmap(tls, connio_state_size());
}

transport connio_transport(int fd, tls_stream_state *tls)
{
    return tls != NULL ? tls_record_transport(fd, tls) : transport_tcp(fd);
}

void connio_give_back(transport *t)
{
    if (t->ops == &transport_tls_record_ops) t->session = NULL; /* no close_notify: the stream goes on */
    transport_close(t);
}
