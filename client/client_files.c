/* client_files.c -- a call's files on the client: answering the server's reads of
 * remote files while the reply is awaited, and writing OUT files. */
#include "client_files.h"

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
    /* Only what the call's admitted interface says is an IN rfile is served. */
    if (f == NULL || index >= f->nparams || f->params[index].type != NUMRPC_T_RFILE ||
        f->params[index].mode != IFACE_IN)
        return err_set(e, NUMRPC_EPROTO, "%s asked to read parameter %u, which is no IN rfile of the "
                       "call: refused, no file opened", c->m.label, index);
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

/* Answers one FILE_READ (its header read) from the attached call's file. */
static int serve_read(client_conn *c, uint32_t call_id, err_t *err)
{
    msg_file_read q;
    int rc = msg_read_file_read(&c->m.reader, &q, err);
    if (rc != 0) return rc;
    if (q.length > FILES_MAX_READ)
        return err_set(err, NUMRPC_EPROTO, "%s asked for %u bytes of a file at once", c->m.label, q.length);
    /* Failures to read the file go back to the routine as the answer. */
    err_t fail;
    err_clear(&fail);
    uint8_t *buf = malloc(q.length ? q.length : 1);
    size_t got = 0;
    if (buf == NULL) err_set(&fail, NUMRPC_ENOMEM, "file read of %u bytes", q.length);
    if (fail.code == 0 && open_rfile(c, q.param, &fail) == 0) {
        while (got < q.length) {
            ssize_t k = pread(c->rfile_fd, buf + got, q.length - got, (off_t)(q.offset + got));
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) break;
            got += (size_t)k;
        }
        if (got < q.length)
            err_set(&fail, NUMRPC_EIO, "%s: file %s ended or failed at byte %llu (it changed during the call?)",
                    c->rfile_iface->name, c->rfile_iface->params[q.param].name,
                    (unsigned long long)(q.offset + got));
    }
    if (fail.code == NUMRPC_EPROTO) {
        free(buf);
        *err = fail;
        return fail.code;
    }
    rc = msg_write_file_data(&c->m.writer, call_id, fail.code, fail.detail, buf, q.length, err);
    if (rc == 0 && fail.code == 0) c->rfile_bytes += q.length;
    free(buf);
    return rc;
}

int client_files_await_reply(client_conn *c, uint32_t call_id, err_t *err)
{
    uint32_t type, id;
    int rc = conn_finish_hello(c, err);
    if (rc == 0) rc = wire_next_message(&c->m.reader, &type, &id, err);
    /* The routine reads the call's remote files meanwhile. */
    while (rc == 0 && type == PROTO_FILE_READ && id == call_id) { /* refused unless an rfile's */
        rc = serve_read(c, call_id, err);
        if (rc == 0) rc = wire_next_message(&c->m.reader, &type, &id, err);
    }
    client_files_detach(c);
    if (rc == NUMRPC_EIO && strcmp(err->detail, "closed") == 0)
        err_set(err, NUMRPC_EIO, "%s closed the connection", c->m.label);
    if (rc != 0) return rc;
    return msg_reply_status(&c->m.reader, type, id, call_id, c->m.label, err);
}

int client_files_read_reply(client_conn *c, const iface_t *f, void *const *argv, err_t *err)
{
    err_t call_err;
    err_clear(&call_err);
    int rc = files_read(&c->m.reader, f, argv, MARSHAL_REPLY, UINT64_MAX - 1, NULL, NULL, &call_err,
                        err);
    if (rc == 0 || call_err.code == 0) return rc;
    rc = wire_skip_message(&c->m.reader, err);
    if (rc != 0) return rc;
    *err = call_err;
    return call_err.code;
}
