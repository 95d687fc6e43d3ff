/* files.c -- the file section of a call's messages: whole files streamed
 * between the wire and disk, and the sizes of remote files. */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *slot_path(void *const *argv, uint32_t i)
{
    return argv[i] ? *(char *const *)argv[i] : NULL;
}

int files_check(const iface_t *f, void *const *argv, marshal_dir dir, err_t *err)
{
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (!iface_type_is_file(p->type) || p->mode == IFACE_WORK) continue;
        const char *path = slot_path(argv, i);
        /* A filename may be NULL: an IN one then arrives as a path where
         * no file is, an OUT one is not written. */
        if (path == NULL && p->type == NUMRPC_T_FILE) continue;
        if (path == NULL || path[0] == '\0')
            return err_set(err, NUMRPC_EINVAL, "%s: file %s needs a path, got %s", f->name,
                           p->name, path ? "\"\"" : "NULL");
        if (!marshal_travels(p, dir) || dir == MARSHAL_REPLY) continue;
        struct stat st;
        if (stat(path, &st) != 0)
            return err_set(err, NUMRPC_EINVAL, "%s: cannot read file %s (%s): %s", f->name,
                           p->name, path, strerror(errno));
        if (!S_ISREG(st.st_mode))
            return err_set(err, NUMRPC_EINVAL, "%s: file %s (%s) is not a regular file",
                           f->name, p->name, path);
    }
    return 0;
}

/* Streams the file at path into the message: u64 length, bytes, pad. */
static int write_whole_file(wire_writer *w, const iface_t *f, const iface_param *p,
                            const char *path, err_t *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0) close(fd);
        return wire_put_u64(w, FILES_ABSENT, err);
    }
    uint64_t size = (uint64_t)st.st_size, done = 0;
    int rc = wire_put_u64(w, size, err);
    while (rc == 0 && done < size) {
        uint8_t *dst;
        size_t avail;
        rc = wire_reserve(w, &dst, &avail, err);
        if (rc != 0) break;
        if (avail > size - done) avail = (size_t)(size - done);
        ssize_t k = read(fd, dst, avail);
        if (k <= 0) {
            rc = err_set(err, NUMRPC_EIO, "%s: file %s (%s) changed while it was sent", f->name,
                         p->name, path);
            break;
        }
        wire_commit(w, (size_t)k);
        done += (uint64_t)k;
    }
    close(fd);
    if (rc == 0) rc = wire_pad8(w, err);
    return rc;
}

int files_write(wire_writer *w, const iface_t *f, void *const *argv, marshal_dir dir,
                err_t *err)
{
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (!iface_type_is_file(p->type) || !marshal_travels(p, dir)) continue;
        const char *path = slot_path(argv, i);
        int rc;
        if (p->type == NUMRPC_T_FILE) {
            rc = write_whole_file(w, f, p, path ? path : "", err);
        } else {
            struct stat st;
            if (path == NULL || stat(path, &st) != 0)
                return err_set(err, NUMRPC_EINVAL, "%s: cannot read file %s (%s): %s", f->name,
                               p->name, path ? path : "NULL", strerror(errno));
            rc = wire_put_u64(w, (uint64_t)st.st_size, err);
            if (rc == 0) rc = wire_pad8(w, err);
        }
        if (rc != 0) return rc;
    }
    return 0;
}

/* Copies len bytes of the message into fd (or drops them when fd < 0). */
static int read_into_fd(wire_reader *r, int fd, uint64_t len, int *write_errno, err_t *err)
{
    uint64_t done = 0;
    while (done < len) {
        const uint8_t *src;
        size_t avail;
        int rc = wire_peek(r, &src, &avail, err);
        if (rc != 0) return rc;
        if (avail > len - done) avail = (size_t)(len - done);
        size_t off = 0;
        while (fd >= 0 && *write_errno == 0 && off < avail) {
            ssize_t k = write(fd, src + off, avail - off);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) *write_errno = k < 0 ? errno : ENOSPC;
            else off += (size_t)k;
        }
        wire_consume(r, avail);
        done += avail;
    }
    return wire_skip_pad8(r, err);
}

int files_read(wire_reader *r, const iface_t *f, void *const *argv, marshal_dir dir,
               uint64_t max_bytes, files_rfile_fn on_rfile, void *ctx, err_t *call_err,
               err_t *err)
{
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (!iface_type_is_file(p->type) || !marshal_travels(p, dir)) continue;
        uint64_t len;
        int rc = wire_get_u64(r, &len, err);
        if (rc != 0) return rc;
        if (p->type == NUMRPC_T_RFILE) {
            rc = wire_skip_pad8(r, err);
            if (rc != 0) return rc;
            if (len > max_bytes)
                return err_set(call_err, NUMRPC_ELIMIT,
                               "%s: file %s has %llu bytes, over the limit of %llu bytes per file",
                               f->name, p->name, (unsigned long long)len,
                               (unsigned long long)max_bytes);
            if (on_rfile == NULL || dir != MARSHAL_REQUEST)
                return err_set(err, NUMRPC_EPROTO, "%s: unexpected remote file %s", f->name, p->name);
            rc = on_rfile(ctx, i, len, call_err);
            if (rc != 0) return rc;
            continue;
        }
        if (len == FILES_ABSENT) continue;
        if (len > max_bytes)
            return err_set(call_err, NUMRPC_ELIMIT,
                           "%s: file %s has %llu bytes, over the limit of %llu bytes per file",
                           f->name, p->name, (unsigned long long)len,
                           (unsigned long long)max_bytes);
        const char *path = slot_path(argv, i);
        if (path == NULL) { /* not wanted: drop the bytes */
            int ignored = 0;
            rc = read_into_fd(r, -1, len, &ignored, err);
            if (rc != 0) return rc;
            continue;
        }
        int fd = path ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
        int write_errno = fd < 0 ? errno : 0;
        rc = read_into_fd(r, fd, len, &write_errno, err);
        if (fd >= 0) close(fd);
        if (rc != 0) return rc;
        if (write_errno != 0)
            return err_set(call_err, NUMRPC_EINVAL, "%s: cannot write file %s (%s): %s", f->name,
                           p->name, path ? path : "NULL", strerror(write_errno));
    }
    return 0;
}
