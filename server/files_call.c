/* files_call.c -- a call's files on the server: staged files' private directory,
 * remote files read through the connection (cached blocks, stdio streams), the
 * routine services, and what they leave for the worker (shared with its children). */
#define _GNU_SOURCE
#include "files_call.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "files.h"
#include "marshal.h"
#include "progress.h"

/* ---- What a routine leaves for the worker ----
 * The routine's failure and the state of its remote-file exchanges live in
 * one page shared (MAP_SHARED) with every child process the routine forks
 * (SDPA solves in one): what a read in a child did to the connection is
 * the worker's to act on after the routine.  One page per worker process,
 * made at its first call; one call at a time uses it. */
typedef struct routine_state {
    err_t failure;      /* the routine's (stub_services.fail, a failed remote read) */
    err_t broken;       /* code != 0: an exchange broke, or was cut short: the
                           connection is out of step and must be closed   */
    uint64_t child_in;  /* bytes a child of the routine read from and wrote  */
    uint64_t child_out; /*   to the connection: the worker's counters missed them */
} routine_state;

static routine_state *state; /* the page; NULL before the worker's first call */
static pid_t state_owner;    /* the worker process that made it               */

/* Makes this worker's page (a page inherited from another process is
 * dropped: its processes must not see this worker's calls). */
static int routine_state_make(err_t *call_err)
{
    if (state != NULL && state_owner == getpid()) return 0;
    if (state != NULL) munmap(state, sizeof *state);
    state = mmap(NULL, sizeof *state, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (state == MAP_FAILED) {
        state = NULL;
        return err_set(call_err, NUMRPC_ESERVER, "no shared page for the routine's state: %s", strerror(errno));
    }
    memset(state, 0, sizeof *state);
    state_owner = getpid();
    return 0;
}

/* ---- Routine services (stubmod.h) ---- */

static void service_fail(int code, const char *detail)
{
    if (state == NULL || state->failure.code != 0) return; /* no call runs, or it failed already */
    if (code == NUMRPC_OK || !numrpc_error_valid(code)) code = NUMRPC_ESERVER; /* a failure of the list */
    err_set(&state->failure, code, "%s", detail ? detail : "the routine failed");
}

/* progress: progress.c (the call's slot, shared with the routine's children). */
const stub_services server_stub_services = {service_fail, progress_service};

void files_routine_begin(void)
{
    if (state != NULL) memset(state, 0, sizeof *state);
}

int files_routine_failed(err_t *call_err)
{
    if (state == NULL || state->failure.code == 0) return 0;
    *call_err = state->failure;
    return 1;
}

/* ---- Remote files ---- */

typedef struct rfile_impl {
    numrpc_rfile pub;
    files_call *fc;     /* the call it belongs to (outlives it) */
    uint32_t index;
    uint8_t **blocks;   /* FILES_BLOCK bytes each (the last one shorter); NULL = not fetched */
    size_t nblocks;
} rfile_impl;

/* Takes the connection from the dispatcher's keepalives and cancel checks,
 * and from the routine's other readers (its threads, its children): the
 * slot's state goes from COMPUTING to FILEIO for one holder at a time, so
 * two readers never write on the stream (nor seal with one sequence
 * number) at once.  Released by setting COMPUTING again.  0, or -1 when
 * the call is over (the routine returned: the stream is the reply's). */
static int hold_connection(worker_slot *slot)
{
    int expected = SLOT_COMPUTING;
    while (!atomic_compare_exchange_weak(&slot->state, &expected, SLOT_FILEIO)) {
        if (expected != SLOT_KEEPALIVE && expected != SLOT_FILEIO && expected != SLOT_COMPUTING) return -1;
        expected = SLOT_COMPUTING;
        usleep(50);
    }
    return 0;
}

/* The bytes of the connection's stream its reader has used up. */
static uint64_t bytes_consumed(const wire_reader *r)
{
    return wire_reader_bytes(r) - wire_reader_buffered(r);
}

/* One FILE_READ and its FILE_DATA into block (want bytes).  A failure of
 * the client's (it cannot read its file) is in *client_err, rc 0. */
static int exchange(rfile_impl *rf, uint64_t offset, uint64_t want, uint8_t *block,
                    err_t *client_err, err_t *err)
{
    files_call *fc = rf->fc;
    wire_reader *r = &fc->conn->reader;
    wire_writer *w = &fc->conn->writer;
    msg_file_read q = {rf->index, offset, (uint32_t)want};
    uint64_t n = 0;
    if (wire_reader_buffered(r) > 0)
        return err_set(err, NUMRPC_EPROTO, "bytes of another request wait on this connection");
    int rc = msg_write_file_read(w, fc->call_id, &q, err);
    if (rc == 0) rc = msg_read_file_data_head(r, fc->call_id, want, &n, client_err, err);
    if (rc != 0 || client_err->code != 0) return rc;
    if (n != want)
        return err_set(err, NUMRPC_EPROTO, "file %s: %llu bytes sent, %llu asked", rf->pub.name,
                       (unsigned long long)n, (unsigned long long)want);
    rc = wire_get(r, block, (size_t)want, err);
    if (rc == 0) rc = wire_skip_pad8(r, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    /* Bytes a child read ahead die with it: the worker would never see them. */
    if (rc == 0 && getpid() != state_owner && wire_reader_buffered(r) > 0)
        rc = err_set(err, NUMRPC_EPROTO, "bytes of another request came with the data of file %s, "
                     "read ahead by a child process of the routine", rf->pub.name);
    return rc;
}

/* Asks the client for block b and caches it.  The exchange counts as
 * broken (state->broken) until it has ended in step, so one cut short by
 * the death of the process that made it closes the connection too. */
static int fetch_block(rfile_impl *rf, size_t b, err_t *err)
{
    files_call *fc = rf->fc;
    if (hold_connection(fc->slot) != 0)
        return err_set(err, NUMRPC_EIO, "file %s read after the routine returned", rf->pub.name);
    if (rf->blocks[b] != NULL) { /* another reader fetched it meanwhile */
        atomic_store(&fc->slot->state, SLOT_COMPUTING);
        return 0;
    }
    if (state->broken.code != 0) {
        atomic_store(&fc->slot->state, SLOT_COMPUTING);
        return err_set(err, NUMRPC_EIO, "file %s: an earlier exchange broke the connection: %s", rf->pub.name,
                       state->broken.detail);
    }
    uint64_t offset = (uint64_t)b * FILES_BLOCK;
    uint64_t want = rf->pub.size - offset < FILES_BLOCK ? rf->pub.size - offset : FILES_BLOCK;
    uint8_t *block = malloc(want ? want : 1); /* goes to rf->blocks, or freed here */
    if (block == NULL) {
        atomic_store(&fc->slot->state, SLOT_COMPUTING);
        return err_set(err, NUMRPC_ENOMEM, "remote file block");
    }
    uint64_t in0 = bytes_consumed(&fc->conn->reader), out0 = wire_writer_bytes(&fc->conn->writer);
    err_t client_err;
    err_clear(&client_err);
    err_set(&state->broken, NUMRPC_EIO, "the exchange for file %s was cut short", rf->pub.name);
    int rc = exchange(rf, offset, want, block, &client_err, err);
    if (rc != 0) state->broken = *err;
    else err_clear(&state->broken);
    if (getpid() != state_owner) {
        state->child_in += bytes_consumed(&fc->conn->reader) - in0;
        state->child_out += wire_writer_bytes(&fc->conn->writer) - out0;
    }
    /* The client could not read it: the call fails, the connection goes on. */
    if (rc == 0 && client_err.code != 0) rc = err_set(err, NUMRPC_EIO, "%s", client_err.detail);
    if (rc == 0) rf->blocks[b] = block;
    else free(block);
    atomic_store(&fc->slot->state, SLOT_COMPUTING); /* the next reader's turn */
    return rc;
}

static long rfile_pread(numrpc_rfile *pub, void *buf, size_t len, uint64_t offset)
{
    rfile_impl *rf = pub->impl;
    if (offset >= pub->size || len == 0) return 0;
    if (len > pub->size - offset) len = (size_t)(pub->size - offset);
    if (len > LONG_MAX) len = LONG_MAX;
    size_t done = 0;
    while (done < len) {
        uint64_t at = offset + done;
        size_t b = (size_t)(at / FILES_BLOCK);
        err_t err;
        if (rf->blocks[b] == NULL && fetch_block(rf, b, &err) != 0) {
            service_fail(NUMRPC_EIO, err.detail);
            errno = EIO;
            return -1;
        }
        size_t in = (size_t)(at % FILES_BLOCK);
        size_t block_len = b + 1 == rf->nblocks ? (size_t)(pub->size - (uint64_t)b * FILES_BLOCK)
                                                : FILES_BLOCK;
        size_t k = block_len - in < len - done ? block_len - in : len - done;
        memcpy((uint8_t *)buf + done, rf->blocks[b] + in, k);
        done += k;
    }
    return (long)done;
}

/* One stdio stream: a position over the shared handle. */
typedef struct rfile_stream {
    numrpc_rfile *rf;
    uint64_t pos;
} rfile_stream;

static ssize_t stream_read(void *cookie, char *buf, size_t size)
{
    rfile_stream *st = cookie;
    long k = rfile_pread(st->rf, buf, size, st->pos);
    if (k > 0) st->pos += (uint64_t)k;
    return k;
}

static int stream_seek(void *cookie, off64_t *offset, int whence)
{
    rfile_stream *st = cookie;
    int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? (int64_t)st->pos
                                                               : (int64_t)st->rf->size;
    int64_t to = base + *offset;
    if (to < 0) {
        errno = EINVAL;
        return -1;
    }
    st->pos = (uint64_t)to;
    *offset = to;
    return 0;
}

static int stream_close(void *cookie)
{
    free(cookie);
    return 0;
}

static void *rfile_open_stream(numrpc_rfile *rf)
{
    rfile_stream *st = malloc(sizeof *st);
    if (st == NULL) return NULL;
    st->rf = rf;
    st->pos = 0;
    cookie_io_functions_t io = {stream_read, NULL, stream_seek, stream_close};
    FILE *fp = fopencookie(st, "r", io);
    if (fp == NULL) free(st);
    return fp;
}

/* ---- A call's files ---- */

/* files_read's callback: makes the handle of rfile index. */
static int make_rfile(void *ctx, uint32_t index, uint64_t size, err_t *call_err)
{
    files_call *fc = ctx;
    rfile_impl *rf = calloc(1, sizeof *rf);
    size_t nblocks = (size_t)((size + FILES_BLOCK - 1) / FILES_BLOCK);
    if (rf) rf->blocks = calloc(nblocks ? nblocks : 1, sizeof *rf->blocks);
    if (rf == NULL || rf->blocks == NULL) {
        free(rf);
        return err_set(call_err, NUMRPC_ENOMEM, "%s: remote file table", fc->f->name);
    }
    rf->pub = (numrpc_rfile){fc->f->params[index].name, size, rfile_pread, rfile_open_stream, rf};
    rf->fc = fc;
    rf->index = index;
    rf->nblocks = nblocks;
    fc->rfiles[index] = rf;
    *(numrpc_rfile **)fc->argv[index] = &rf->pub;
    return 0;
}

int files_call_begin(files_call *fc, msg_conn *conn, worker_slot *slot, uint64_t max_bytes,
                     uint32_t call_id, const iface_t *f, void **argv, err_t *call_err)
{
    memset(fc, 0, sizeof *fc);
    fc->conn = conn;
    fc->slot = slot;
    fc->max_bytes = max_bytes;
    fc->call_id = call_id;
    fc->f = f;
    fc->argv = argv;
    if (routine_state_make(call_err) != 0) return call_err->code;
    int staged = 0;
    for (uint32_t i = 0; i < f->nparams; i++) {
        if (f->params[i].type == NUMRPC_T_FILE) staged = 1;
        if (iface_type_is_file(f->params[i].type)) *(char **)argv[i] = NULL;
    }
    if (!staged) return 0;
    const char *tmp = getenv("TMPDIR");
    snprintf(fc->dir, sizeof fc->dir, "%s/numrpc-call-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(fc->dir) == NULL) { /* mode 0700 */
        int e = errno;
        fc->dir[0] = '\0';
        return err_set(call_err, NUMRPC_ESERVER, "%s: no private directory for the call's files: %s",
                       f->name, strerror(e));
    }
    for (uint32_t i = 0; i < f->nparams; i++) {
        if (f->params[i].type != NUMRPC_T_FILE) continue;
        char *path = malloc(strlen(fc->dir) + strlen(f->params[i].name) + 2);
        if (path == NULL) return err_set(call_err, NUMRPC_ENOMEM, "%s: file path", f->name);
        sprintf(path, "%s/%s", fc->dir, f->params[i].name);
        *(char **)argv[i] = path;
    }
    return 0;
}

int files_call_read(files_call *fc, err_t *call_err, err_t *err)
{
    return files_read(&fc->conn->reader, fc->f, fc->argv, MARSHAL_REQUEST, fc->max_bytes, make_rfile, fc,
                      call_err, err);
}

int files_call_broken(const files_call *fc, err_t *err)
{
    if (state == NULL || state->broken.code == 0) return 0;
    return err_set(err, NUMRPC_EIO, "%s: the connection failed while the routine read a remote file: %s",
                   fc->f->name, state->broken.detail);
}

void files_call_child_bytes(uint64_t *in, uint64_t *out)
{
    *in = state ? state->child_in : 0;
    *out = state ? state->child_out : 0;
}

/* Removes dir and everything the routine left in it (it may have made
 * subdirectories). */
static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *e;
        char path[PATH_MAX];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            if (e->d_type == DT_DIR) remove_tree(path);
            else unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

void files_call_end(files_call *fc)
{
    if (fc->f == NULL) return;
    for (uint32_t i = 0; i < fc->f->nparams; i++) {
        const iface_param *p = &fc->f->params[i];
        if (p->type == NUMRPC_T_FILE) {
            free(*(char **)fc->argv[i]);
            *(char **)fc->argv[i] = NULL;
        }
        rfile_impl *rf = fc->rfiles[i];
        if (rf == NULL) continue;
        for (size_t b = 0; b < rf->nblocks; b++) free(rf->blocks[b]);
        free(rf->blocks);
        free(rf);
        fc->rfiles[i] = NULL;
        *(char **)fc->argv[i] = NULL;
    }
    if (fc->dir[0]) remove_tree(fc->dir);
    fc->dir[0] = '\0';
    fc->f = NULL;
}
