/* connio.c -- a connection's stream as the dispatcher and the workers hold
 * it: its transport (tcp, or tls-record over its TLS state) and that state's memory. */
#define _GNU_SOURCE
#include "connio.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
