/* files.c -- a call's files on the client: answering the server's reads of
 * remote files while the reply is awaited, and writing OUT files. */
#include "client.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "marshal.h"

void client_files_attach(client_conn *c, const iface_t *f, void *const *argv)
{
    c->rfile_iface = NULL;
    c->rfile_bytes = 0;
    for (uint32_t i = 0; i < f->nparams; i++)
        if (f->params[i].type == NUMRPC_T_RFILE) c->rfile_iface = f;
    c->rfile_argv = argv;
    c->rfile_fd = -1;
}

void client_files_detach(client_conn *c)
{
    if (c->rfile_iface != NULL && c->rfile_fd >= 0) close(c->rfile_fd);
    c->rfile_iface = NULL;
    c->rfile_argv = NULL;
    c->rfile_fd = -1;
}

/* Opens rfile index of the attached call (kept open for the next read). */
static int open_rfile(client_conn *c, uint32_t index, err_t *e)
{
    const iface_t *f = c->rfile_iface;
    if (index >= f->nparams || f->params[index].type != NUMRPC_T_RFILE)
        return err_set(e, NUMRPC_EPROTO, "%s: parameter %u is not a remote file", f->name, index);
    if (c->rfile_fd >= 0 && c->rfile_index == index) return 0;
    if (c->rfile_fd >= 0) close(c->rfile_fd);
    const char *path = *(char *const *)c->rfile_argv[index];
    c->rfile_fd = open(path, O_RDONLY | O_CLOEXEC);
    c->rfile_index = index;
    if (c->rfile_fd < 0)
        return err_set(e, NUMRPC_EIO, "%s: cannot read file %s (%s): %s", f->name,
                       f->params[index].name, path, strerror(errno));
    return 0;
}

int client_files_serve(client_conn *c, uint32_t call_id, err_t *err)
{
    uint32_t index, len;
    uint64_t offset;
    int rc = wire_get_u32(&c->reader, &index, err);
    if (rc == 0) rc = wire_get_u64(&c->reader, &offset, err);
    if (rc == 0) rc = wire_get_u32(&c->reader, &len, err);
    if (rc == 0) rc = wire_expect_end(&c->reader, err);
    if (rc != 0) return rc;
    if (len > FILES_MAX_READ)
        return err_set(err, NUMRPC_EPROTO, "%s asked for %u bytes of a file at once", c->label, len);
    /* Failures to read the file go back to the routine as the answer. */
    err_t fail;
    err_clear(&fail);
    uint8_t *buf = malloc(len ? len : 1);
    size_t got = 0;
    if (buf == NULL) err_set(&fail, NUMRPC_ENOMEM, "file read of %u bytes", len);
    if (fail.code == 0 && open_rfile(c, index, &fail) == 0) {
        while (got < len) {
            ssize_t k = pread(c->rfile_fd, buf + got, len - got, (off_t)(offset + got));
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) break;
            got += (size_t)k;
        }
        if (got < len)
            err_set(&fail, NUMRPC_EIO, "%s: file %s ended or failed at byte %llu (it changed during the call?)",
                    c->rfile_iface->name, c->rfile_iface->params[index].name,
                    (unsigned long long)(offset + got));
    }
    if (fail.code == NUMRPC_EPROTO) {
        free(buf);
        *err = fail;
        return fail.code;
    }
    wire_begin(&c->writer, PROTO_FILE_DATA, call_id);
    rc = wire_put_u32(&c->writer, (uint32_t)fail.code, err);
    if (rc == 0) rc = wire_put_string(&c->writer, fail.detail, err);
    if (fail.code == 0) {
        if (rc == 0) rc = wire_put_u64(&c->writer, len, err);
        if (rc == 0) rc = wire_put(&c->writer, buf, len, err);
        if (rc == 0) rc = wire_pad8(&c->writer, err);
    }
    if (rc == 0) rc = wire_end(&c->writer, err);
    if (rc == 0 && fail.code == 0) c->rfile_bytes += len;
    free(buf);
    return rc;
}

int client_files_read_reply(client_conn *c, const iface_t *f, void *const *argv, err_t *err)
{
    err_t call_err;
    err_clear(&call_err);
    int rc = files_read(&c->reader, f, argv, MARSHAL_REPLY, UINT64_MAX - 1, NULL, NULL, &call_err,
                        err);
    if (rc == 0 || call_err.code == 0) return rc;
    rc = wire_skip_message(&c->reader, err);
    if (rc != 0) return rc;
    *err = call_err;
    return call_err.code;
}
