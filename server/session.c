/* session.c -- a worker's handling of one message on a borrowed connection:
 * hello, list, interface fetch and call (unmarshal, run, marshal back);
 * the handle messages go to data_call.c. */
#include "session.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "access.h"
#include "call_handles.h"
#include "callmem.h"
#include "data_call.h"
#include "files.h"
#include "files_call.h"
#include "log.h"
#include "marshal.h"
#include "mpi_call.h"
#include "progress.h"
#include "reply.h"
#include "sock.h"
#include "stats.h"

/* ---- A worker's record of the call it serves ---- */

/* Bytes consumed from the connection so far (read-ahead excluded). */
static uint64_t bytes_consumed(const session *s)
{
    return wire_reader_bytes(&s->conn.reader) - wire_reader_buffered(&s->conn.reader);
}

/* A CALL's header arrived (in0: reader bytes consumed before it). */
static void record_begin(session *s, uint64_t in0)
{
    s->rec.r = NULL;
    s->rec.done = 0;
    s->rec.has_phases = 0;
    s->rec.t0 = sock_now();
    s->rec.in0 = in0;
    s->rec.out0 = wire_writer_bytes(&s->conn.writer);
}

/* The CALL ends with code (detail for an error): counters and log line,
 * before its reply goes out (so a STATUS after the reply sees it). */
static void record_done(session *s, int code, const char *detail)
{
    if (s->rec.done) return;
    s->rec.done = 1;
    double seconds = sock_now() - s->rec.t0;
    uint64_t in = bytes_consumed(s) - s->rec.in0, out = wire_writer_bytes(&s->conn.writer) - s->rec.out0;
    if (code != NUMRPC_OK && wire_writer_idle(&s->conn.writer)) /* the error reply about to go out */
        out += PROTO_HEADER_SIZE + 4 + 4 + ((strlen(detail) + 3) & ~(size_t)3) + 8;
    const routine *r = s->rec.r;
    if (r) stats_record(server_stats, r->stat_index, code, in, out, seconds);
    if (r && s->rec.has_phases)
        stats_record_mpi(server_stats, r->stat_index, s->rec.phases, s->rec.mpi_kept, s->rec.mpi_kept_bytes,
                         s->rec.mpi_sent_bytes);
    server_log_call(s->cfg, r ? r->iface.name : "?", in, out, seconds, code, detail,
                    s->rec.has_phases ? s->rec.phases : NULL);
}

/* Drops the rest of the request, then answers with the error in *call_err. */
static int refuse(session *s, uint32_t call_id, const err_t *call_err, err_t *err)
{
    int rc = wire_reader_in_message(&s->conn.reader) ? wire_skip_message(&s->conn.reader, err) : 0;
    if (rc != 0) return rc;
    if (s->last_type == PROTO_CALL) record_done(s, call_err->code, call_err->detail);
    return reply_error(&s->conn.writer, call_id, call_err->code, call_err->detail, err);
}

static int serve_list(session *s, uint32_t call_id, err_t *err)
{
    const registry *reg = s->reg;
    int rc = wire_expect_end(&s->conn.reader, err);
    if (rc != 0) return rc;
    msg_routine_entry *entries = calloc(reg->count ? reg->count : 1, sizeof *entries); /* freed here */
    if (entries == NULL)
        return reply_error(&s->conn.writer, call_id, NUMRPC_ENOMEM, "list of routines", err);
    uint32_t n = 0; /* the routines this connection's token may call */
    for (size_t i = 0; i < reg->count; i++) {
        err_t ignored;
        if (access_may_call(s->tokens, s->identity, reg->items[i].iface.module, &ignored) != 0) continue;
        snprintf(entries[n].name, sizeof entries[n].name, "%s", reg->items[i].iface.name);
        entries[n++].hash = reg->items[i].iface.hash;
    }
    rc = msg_write_list_reply(&s->conn.writer, call_id, entries, n, err);
    free(entries);
    return rc;
}

static void unknown_routine(const registry *reg, const char *name, err_t *e)
{
    err_set(e, NUMRPC_ENOENT, "unknown routine \"%s\" (%zu routines offered; `numrpc list` names them)",
            name, reg->count);
}

static int serve_get_iface(session *s, uint32_t call_id, err_t *err)
{
    char name[IFACE_MAX_NAME + 1];
    int rc = msg_read_get_iface(&s->conn.reader, name, err);
    if (rc != 0) return rc;
    const routine *r = registry_find(s->reg, name);
    if (r == NULL) {
        err_t e;
        unknown_routine(s->reg, name, &e);
        return reply_error(&s->conn.writer, call_id, e.code, e.detail, err);
    }
    err_t denied;
    if (access_may_call(s->tokens, s->identity, r->iface.module, &denied) != 0)
        return reply_error(&s->conn.writer, call_id, denied.code, denied.detail, err);
    return msg_write_iface_reply(&s->conn.writer, call_id, r->blob, (uint32_t)r->blob_len, err);
}

/* PROTO_PROBE: the payload is read and dropped, and as many bytes as asked
 * (at most PROTO_PROBE_MAX_BYTES each way) go back. */
static int serve_probe(session *s, uint32_t call_id, err_t *err)
{
    uint32_t reply_bytes = 0;
    uint64_t n = 0;
    int rc = msg_read_probe(&s->conn.reader, &reply_bytes, &n, err);
    if (rc != 0) return rc;
    if (n > PROTO_PROBE_MAX_BYTES || reply_bytes > PROTO_PROBE_MAX_BYTES) {
        err_t e;
        err_set(&e, NUMRPC_EINVAL, "a probe moves at most %u bytes each way", PROTO_PROBE_MAX_BYTES);
        return refuse(s, call_id, &e, err);
    }
    rc = msg_read_probe_payload(&s->conn.reader, n, err);
    if (rc == 0) rc = msg_write_probe_reply(&s->conn.writer, call_id, reply_bytes, err);
    return rc;
}

/* ---- Calls ---- */

/* Storage of one call's arguments on the server: argv[i] points into
 * scalars[i] or at a calloc'd array block.  Freed by free_call_args. */
typedef struct call_args {
    void *argv[IFACE_MAX_PARAMS];
    stub_scalar scalars[IFACE_MAX_PARAMS];
    iface_shape shapes[IFACE_MAX_PARAMS];
    const call_handles *handles; /* the data handles the call names */
} call_args;

static void free_call_args(const iface_t *f, call_args *a)
{
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (p->type != NUMRPC_T_STRING) continue;
        if (p->rank == 0) {
            free(a->scalars[i].s);
            continue;
        }
        char **table = a->argv[i];
        for (uint64_t k = 0; table && k < a->shapes[i].mem_elems; k++) free(table[k]);
        free(table);
        a->argv[i] = NULL;
    }
}

/* ---- Strings ---- */

/* Gives every string array a table of mem_elems char* (NULL until the
 * request's strings or fit_output_strings fill them); callmem_measure has
 * checked their sizes. */
static int allocate_string_tables(const iface_t *f, call_args *a, err_t *err)
{
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (p->type != NUMRPC_T_STRING || p->rank == 0) continue;
        uint64_t elems = a->shapes[i].mem_elems;
        a->argv[i] = calloc(elems ? elems : 1, sizeof(char *));
        if (a->argv[i] == NULL)
            return err_set(err, NUMRPC_ENOMEM, "%s: table of string array %s", f->name, p->name);
    }
    return 0;
}

/* Makes *slot a buffer of bound + 1 bytes that holds its old text (if any),
 * padded with NULs for C or blanks for Fortran (whose hidden CHARACTER length
 * is then the bound: the thunk passes strlen).  callmem_measure has counted
 * these buffers within the call's limits. */
static int fit_string(char **slot, int64_t bound, int fortran, err_t *err)
{
    size_t cap = (size_t)bound + 1;
    char *buf = calloc(cap, 1);
    if (buf == NULL) return err_set(err, NUMRPC_ENOMEM, "string of %zu bytes", cap);
    size_t len = *slot ? strlen(*slot) : 0;
    if (len > 0) memcpy(buf, *slot, len);
    if (fortran) memset(buf + len, ' ', (size_t)bound - len);
    free(*slot);
    *slot = buf;
    return 0;
}

/* Gives every OUT and INOUT string (scalar or traveling element) its buffer. */
static int fit_output_strings(const iface_t *f, call_args *a, err_t *err)
{
    int fortran = f->lang == IFACE_LANG_FORTRAN;
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        const iface_shape *sh = &a->shapes[i];
        if (p->type != NUMRPC_T_STRING || !iface_param_in_reply(p)) continue;
        int rc = 0;
        if (p->rank == 0) rc = fit_string(&a->scalars[i].s, sh->bound, fortran, err);
        char **table = p->rank ? a->argv[i] : NULL;
        for (uint64_t j = 0; rc == 0 && table && j < sh->wire_elems; j++)
            rc = fit_string(&table[(uint64_t)sh->start[0] + j * (uint64_t)sh->stride[0]],
                            sh->bound, fortran, err);
        if (rc != 0) return rc;
    }
    return 0;
}

/* A Fortran routine blank-pads its CHARACTER results: drop the padding. */
static void trim_fortran_strings(const iface_t *f, call_args *a)
{
    if (f->lang != IFACE_LANG_FORTRAN) return;
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (p->type != NUMRPC_T_STRING || p->rank != 0 || !iface_param_in_reply(p)) continue;
        char *text = a->scalars[i].s;
        size_t len = strlen(text);
        while (len > 0 && text[len - 1] == ' ') text[--len] = '\0';
    }
}

/* Judges the call's memory (callmem.c) and reserves it, then places every
 * array in the worker's arena.  No byte of one caller may reach another:
 * memory that the request does not overwrite in full (out and work arrays,
 * arrays with gaps such as rows beyond n of an lda x n matrix) is zeroed
 * where an earlier call may have written it; the rest is fresh from the
 * kernel, zero already and not touched here. */
static int allocate_arrays(session *s, const iface_t *f, call_args *a, err_t *err)
{
    call_memory m;
    int rc = callmem_measure(s->cfg, f, a->shapes, &m, err);
    if (rc == 0) rc = callmem_reserve(s->cfg, s->slot, f, &m, err);
    if (rc == 0) rc = arena_reserve(&s->arena, (size_t)m.array_bytes, err);
    if (rc != 0) return rc;
    s->heap_bytes = m.string_bytes;
    size_t offset = 0;
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (p->rank == 0 || p->type == NUMRPC_T_STRING || a->shapes[i].held) continue; /* held: a handle's */
        size_t bytes = (size_t)a->shapes[i].mem_elems * iface_type_size(p->type);
        a->argv[i] = s->arena.base + offset;
        int overwritten = iface_param_in_request(p) && a->shapes[i].wire_elems == a->shapes[i].mem_elems;
        if (!overwritten) arena_clear(&s->arena, offset, bytes);
        offset += arena_round(bytes);
    }
    return 0;
}

/* The call's arrays are done with (its reply is encoded, or it failed): its
 * reservation goes back, and the arena keeps what it may (arena.c) while
 * the workers' calls and kept arenas stay within half the server's cap.
 * Before the reply goes out, so that its caller's next call, on any worker,
 * finds the memory given back. */
static void end_call_memory(session *s)
{
    arena_after_call(&s->arena);
    if (!callmem_may_keep(s->cfg, s->slot, arena_holding(&s->arena))) arena_release(&s->arena);
    slots_keep_memory(s->slot, arena_holding(&s->arena));
    s->trim_pending = 1;
}

/* The call's strings are freed: the heap gives its free pages back if they
 * were many. */
static void end_call_heap(session *s)
{
    if (s->heap_bytes >= SESSION_HEAP_TRIM_BYTES) malloc_trim(0);
    s->heap_bytes = 0;
}

int session_trim_pending(const session *s)
{
    return s->trim_pending;
}

void session_forget_caller(session *s)
{
    msg_conn_wipe(&s->conn);
    arena_forget(&s->arena);
    slots_keep_memory(s->slot, arena_holding(&s->arena));
}

void session_trim(session *s)
{
    arena_release(&s->arena);
    slots_keep_memory(s->slot, 0);
    malloc_trim(0);
    s->trim_pending = 0;
}

/* Sets the BLAS thread count of this worker's calls (once: it persists). */
static void set_blas_threads(const session *s)
{
    static int current = -1;
    int want = s->cfg->blas_threads;
    if (s->reg->set_blas_threads && want > 0 && want != current) {
        s->reg->set_blas_threads(want);
        current = want;
    }
}

/* The replies of cheap pipelined calls go out together (one write). */
static int is_cheap(const iface_t *f, void *const *argv)
{
    return f->complexity.nwords > 0 && marshal_complexity(f, argv) < PROTO_CHEAP_FLOPS;
}

/* A routine of Backend "MPI" runs on the server's job (mpi_call.c); its
 * failure ends the call as a routine's own (stub_services.fail) would. */
static void run_on_mpi_job(session *s, const routine *r, call_args *a)
{
    mpi_call_figures fig;
    msg_mpi_handles keys;
    err_t e;
    call_handles_keys(a->handles, &r->iface, &keys);
    if (mpi_call_run(s->slot, &r->iface, r->blob, r->blob_len, a->argv, a->shapes, &keys, &fig, &e) != 0) {
        server_stub_services.fail(e.code, e.detail);
        return;
    }
    s->rec.has_phases = 1;
    s->rec.phases[0] = fig.ph.scatter_s;
    s->rec.phases[1] = fig.ph.compute_s;
    s->rec.phases[2] = fig.ph.gather_s;
    s->rec.mpi_kept = fig.kept;
    s->rec.mpi_kept_bytes = fig.kept_bytes;
    s->rec.mpi_sent_bytes = fig.sent_bytes;
}

static int run_routine(session *s, const routine *r, uint32_t call_id, call_args *a, double deadline,
                       uint32_t flags, double began, double *compute_s)
{
    worker_slot *slot = s->slot;
    slot->call_id = call_id;
    slot->conn_id = s->conn_id;
    /* Bytes of other calls in this worker (requests read ahead, replies
     * held) would die with it: the dispatcher then closes the connection. */
    slot->pipelined = wire_reader_buffered(&s->conn.reader) > 0 || wire_writer_holding(&s->conn.writer);
    snprintf(slot->routine, sizeof slot->routine, "%s", r->iface.name);
    set_blas_threads(s);
    /* The frames the call asked for, and its prediction (progress.c). */
    double flops = r->iface.complexity.nwords > 0 ? marshal_complexity(&r->iface, a->argv) : 0;
    const routine *probe = flags & PROTO_CALL_WANT_PROGRESS ? registry_find(s->reg, "dmmul") : NULL;
    progress_call_begin(slot, flags, began, flops, probe ? &probe->iface : NULL, probe ? probe->thunk : NULL);
    double t0 = sock_now();
    slot->started = slot->last_keepalive = t0;
    /* The caller's deadline, or the server's limit if that comes first. */
    int limit = s->cfg->max_call_seconds;
    slot->limit_deadline = limit > 0 && (deadline == 0 || t0 + limit < deadline);
    if (slot->limit_deadline) deadline = t0 + limit;
    slot->deadline = deadline;
    atomic_store(&slot->state, SLOT_COMPUTING);
    /* The dispatcher's loop wakes at least every 200 ms and then waits for
     * the soonest deadline: only one nearer than that needs a word. */
    int wake = atomic_exchange(&slot->wake_when_read, 0); /* and the request is read (pool.c) */
    if ((wake || (deadline > 0 && deadline - t0 < SESSION_DEADLINE_NEAR)) && s->wake_dispatcher) s->wake_dispatcher(s);
    if (r->iface.backend == IFACE_BACKEND_MPI)
        run_on_mpi_job(s, r, a);
    else
        r->thunk(a->argv);
    /* The dispatcher may be writing a keepalive packet: wait for it.  A
     * remote-file exchange a routine's child left cut short (it died) left
     * the slot reading files: the exchange is over, and marked broken. */
    int expected = SLOT_COMPUTING;
    while (!atomic_compare_exchange_weak(&slot->state, &expected, SLOT_REPLYING)) {
        if (expected == SLOT_FILEIO && atomic_compare_exchange_strong(&slot->state, &expected, SLOT_REPLYING)) break;
        expected = SLOT_COMPUTING;
        usleep(50);
    }
    *compute_s = sock_now() - t0;
    progress_call_end(slot, flops, *compute_s);
    return 0;
}

/* The call's deadline has passed (d: monotonic seconds, 0 = none). */
static int past(double d)
{
    return d > 0 && sock_now() >= d;
}

/* Answers a call whose deadline passed before its routine ran or before
 * its results went out (the routine's work, if any, is dropped). */
static int deadline_reply(session *s, uint32_t call_id, const char *name, const char *when, err_t *err)
{
    char detail[160];
    snprintf(detail, sizeof detail, "%s: the call's deadline passed %s", name, when);
    record_done(s, NUMRPC_ETIMEDOUT, detail);
    return reply_error(&s->conn.writer, call_id, NUMRPC_ETIMEDOUT, detail, err);
}

/* A CALL whose request began arriving at `began` (monotonic seconds); its
 * deadline goes to *deadline (0: none). */
static int serve_call_within(session *s, uint32_t call_id, double began, double *deadline, err_t *err)
{
    msg_call_header h;
    err_t call_err;
    err_clear(&call_err);
    int rc = msg_read_call_header(&s->conn.reader, &h, err);
    if (rc == 0) rc = wire_set_packet_size(&s->conn.writer, h.reply_packet ? h.reply_packet : s->cfg->packet_size, err);
    if (rc != 0) return rc;
    /* The caller's time left counts from the request's first byte: the
     * worker's waits for the rest of the request and for the socket to take
     * the results end there (serve_call lifts them), and the dispatcher
     * stops the routine there. */
    *deadline = h.deadline_ms ? began + h.deadline_ms / 1000.0 : 0;
    wire_reader_set_deadline(&s->conn.reader, *deadline);
    const routine *r = registry_find(s->reg, h.name);
    s->rec.r = r; /* counters and log line (stats.c) */
    s->slot->stat_index = r ? r->stat_index : -1;
    if (r == NULL) {
        unknown_routine(s->reg, h.name, &call_err);
        return refuse(s, call_id, &call_err, err);
    }
    const iface_t *f = &r->iface;
    if (access_may_call(s->tokens, s->identity, f->module, &call_err) != 0) return refuse(s, call_id, &call_err, err);
    if (h.hash != 0 && h.hash != f->hash) {
        err_set(&call_err, NUMRPC_ESTALE, "%s: the client's interface is out of date (server has version %016llx)",
                f->name, (unsigned long long)f->hash);
        return refuse(s, call_id, &call_err, err);
    }
    if (h.nargs != f->nparams) {
        err_set(&call_err, NUMRPC_EINVAL, "%s takes %u arguments, the call has %u", f->name,
                f->nparams, h.nargs);
        return refuse(s, call_id, &call_err, err);
    }

    call_handles ch; /* the data handles it names */
    call_handles_init(&ch);
    if ((h.flags & PROTO_CALL_HANDLES) && (rc = call_handles_read(&ch, &s->conn.reader, h.nargs, err)) != 0)
        return rc;
    call_args *a = calloc(1, sizeof *a);
    if (a == NULL) {
        err_set(&call_err, NUMRPC_ENOMEM, "%s: argument table", f->name);
        return refuse(s, call_id, &call_err, err);
    }
    a->handles = &ch;
    files_call fc; /* the call's files (files.c) */
    fc.f = NULL;
    for (uint32_t i = 0; i < f->nparams; i++) a->argv[i] = &a->scalars[i];
    rc = marshal_read_scalars(&s->conn.reader, f, a->argv, NULL, MARSHAL_REQUEST, err);
    if (rc != 0) goto broken;
    for (uint32_t i = 0; i < f->nparams; i++)
        if (f->params[i].rank > 0) a->argv[i] = NULL;
    if (marshal_eval_shapes(f, a->argv, a->shapes, &call_err) != 0 ||
        call_handles_bind(&ch, s->identity, f, a->shapes, a->argv, &call_err) != 0 ||
        allocate_arrays(s, f, a, &call_err) != 0 ||
        allocate_string_tables(f, a, &call_err) != 0 ||
        files_call_begin(&fc, &s->conn, s->slot, s->cfg->max_call_bytes, call_id, f, a->argv, &call_err) != 0) {
        files_call_end(&fc);
        call_handles_end(&ch);
        free_call_args(f, a);
        free(a);
        end_call_memory(s);
        end_call_heap(s);
        return refuse(s, call_id, &call_err, err);
    }
    rc = marshal_read_arrays(&s->conn.reader, f, a->argv, a->shapes, MARSHAL_REQUEST, err);
    if (rc == 0 && (rc = files_call_read(&fc, &call_err, err)) != 0 && call_err.code != 0) {
        files_call_end(&fc);
        end_call_memory(s);
        rc = refuse(s, call_id, &call_err, err); /* a file over the limit */
        goto broken;
    }
    if (rc == 0) rc = wire_expect_end(&s->conn.reader, err);
    if (rc != 0) goto broken;
    if (marshal_check_strings(f, a->argv, a->shapes, MARSHAL_REQUEST, &call_err) != 0 ||
        fit_output_strings(f, a, &call_err) != 0) {
        end_call_memory(s);
        rc = refuse(s, call_id, &call_err, err);
        goto broken;
    }

    /* Replies held for cheap calls go out before anything long runs. */
    int cheap = is_cheap(f, a->argv) && !iface_has_files(f);
    if (!cheap && (rc = wire_flush(&s->conn.writer, err)) != 0) goto broken;
    /* A CANCEL that came with the request was read ahead with it, where the
     * dispatcher cannot see it: the routine does not start. */
    if (wire_reader_next_is(&s->conn.reader, PROTO_CANCEL, call_id)) {
        uint32_t type, id;
        rc = wire_next_message(&s->conn.reader, &type, &id, err);
        if (rc == 0) rc = wire_expect_end(&s->conn.reader, err);
        files_call_end(&fc);
        end_call_memory(s);
        if (rc != 0) goto broken;
        err_set(&call_err, NUMRPC_ECANCELLED, "%s was cancelled by the client before it started", f->name);
        record_done(s, call_err.code, call_err.detail);
        rc = reply_error(&s->conn.writer, call_id, call_err.code, call_err.detail, err);
        goto broken;
    }
    if (past(*deadline)) {
        files_call_end(&fc);
        end_call_memory(s);
        rc = deadline_reply(s, call_id, f->name, "before its routine started", err);
        goto broken;
    }
    double compute_s = 0;
    files_routine_begin();
    run_routine(s, r, call_id, a, *deadline, h.flags, began, &compute_s);
    /* Exchanges a child of the routine made are the call's bytes too. */
    uint64_t child_in, child_out;
    files_call_child_bytes(&child_in, &child_out);
    s->rec.in0 -= child_in;
    s->rec.out0 -= child_out;
    if (files_call_broken(&fc, err)) {
        rc = err->code; /* the worker closes the connection, no reply */
        goto broken;
    }
    /* Results past the deadline reach no one: the caller stopped waiting. */
    if (past(*deadline)) {
        files_call_end(&fc);
        end_call_memory(s);
        rc = deadline_reply(s, call_id, f->name, "as its routine ended (its results are dropped)", err);
        goto broken;
    }
    /* A routine that failed (stub_services.fail) leaves its handles as they
     * were; one that succeeded stores its results in them first. */
    if (files_routine_failed(&call_err) || call_handles_commit(&ch, &call_err) != 0) {
        files_call_end(&fc);
        end_call_memory(s);
        record_done(s, call_err.code, call_err.detail);
        rc = reply_error(&s->conn.writer, call_id, call_err.code, call_err.detail, err);
        goto broken;
    }
    trim_fortran_strings(f, a);
    wire_writer_set_deadline(&s->conn.writer, *deadline);
    rc = msg_reply_begin(&s->conn.writer, call_id, NUMRPC_OK, "", err);
    if (rc == 0) rc = reply_put_result(&s->conn.writer, compute_s, s->slot, err);
    if (rc == 0) rc = marshal_write(&s->conn.writer, f, a->argv, a->shapes, MARSHAL_REPLY, err);
    if (rc == 0) rc = files_write(&s->conn.writer, f, a->argv, MARSHAL_REPLY, err);
    end_call_memory(s); /* the reply holds copies of the arrays now */
    files_call_end(&fc); /* the call's files are gone before the caller hears of it */
    /* Ended but held, the reply is counted whole before it goes out (a
     * STATUS after it sees the call); a cheap call's reply then waits for
     * the next request if that is here whole. */
    if (rc == 0) rc = wire_end_held(&s->conn.writer, err);
    if (rc == 0) record_done(s, NUMRPC_OK, "");
    if (rc == 0 && !(cheap && wire_reader_has_message(&s->conn.reader)))
        rc = wire_flush(&s->conn.writer, err);
    atomic_fetch_add(&s->slot->calls, 1);
broken:
    files_call_end(&fc);
    call_handles_end(&ch);
    free_call_args(f, a);
    free(a);
    end_call_memory(s);
    end_call_heap(s);
    return rc;
}

/* A CALL (see serve_call_within); the call's deadline is lifted from the
 * connection after it, and a request cut short by it is named. */
static int serve_call(session *s, uint32_t call_id, double began, err_t *err)
{
    double deadline = 0;
    int rc = serve_call_within(s, call_id, began, &deadline, err);
    wire_reader_set_deadline(&s->conn.reader, 0);
    wire_writer_set_deadline(&s->conn.writer, 0);
    if (rc == NUMRPC_ETIMEDOUT && past(deadline) && wire_reader_in_message(&s->conn.reader))
        err_set(err, NUMRPC_ETIMEDOUT,
                "%s: the call's deadline (%.0f ms from its request's first byte) passed while the request was "
                "arriving (%llu bytes read)",
                s->rec.r ? s->rec.r->iface.name : "the call", (deadline - began) * 1000,
                (unsigned long long)(bytes_consumed(s) - s->rec.in0));
    return rc;
}

/* A HELLO on a connection this worker holds: the handshake again, without
 * a token (a token's challenge is the dispatcher's, on a new connection). */
static int serve_hello(session *s, uint32_t call_id, err_t *err)
{
    msg_hello h;
    int rc = msg_read_hello(&s->conn.reader, &h, err);
    if (rc != 0) return rc;
    if (h.has_token)
        return reply_error(&s->conn.writer, call_id, NUMRPC_EPROTO,
                           "a HELLO naming a token must be a connection's first message", err);
    return reply_hello(&s->conn.writer, call_id, &h, NULL, err);
}

int session_serve_one(session *s, err_t *err)
{
    uint32_t type, call_id;
    uint64_t in0 = bytes_consumed(s);
    double began = s->next_began;
    s->next_began = 0;
    /* A request's time runs from its first byte, which the dispatcher saw. */
    if (began > 0) wire_reader_pace_from(&s->conn.reader, began);
    atomic_store(&s->slot->state, SLOT_READING); /* from its first byte (pool.c counts it) */
    int rc = wire_next_message(&s->conn.reader, &type, &call_id, err);
    if (rc != 0) {
        atomic_store(&s->slot->state, SLOT_IDLE); /* no request: the peer left, or sent too little */
        return rc;
    }
    if (began == 0) began = sock_now(); /* read ahead with the one before */
    s->last_type = type;
    if (type == PROTO_CALL) record_begin(s, in0);
    err_t denied;
    /* Lent without a token (cannot happen), or with one a reload removed. */
    int unknown = access_on(s->tokens) && tokens_find(s->tokens, s->identity) == NULL && type != PROTO_CANCEL;
    if (unknown) err_set(&denied, NUMRPC_EAUTH, "token %s was refused", s->identity[0] ? s->identity : "(none)");
    switch (unknown ? 0u : type) {
    case 0: rc = refuse(s, call_id, &denied, err); break;
    case PROTO_HELLO: rc = serve_hello(s, call_id, err); break;
    case PROTO_LIST: rc = serve_list(s, call_id, err); break;
    case PROTO_GET_IFACE: rc = serve_get_iface(s, call_id, err); break;
    case PROTO_CALL: rc = serve_call(s, call_id, began, err); break;
    case PROTO_PROBE: rc = serve_probe(s, call_id, err); break;
    case PROTO_DATA_PUT:
    case PROTO_DATA_GET:
    case PROTO_DATA_FREE:
    case PROTO_DATA_RENEW:
    case PROTO_DATA_GRANT:
    case PROTO_DATA_PULL: rc = data_call_serve(s, type, call_id, err); break;
    case PROTO_CANCEL: /* the call it names has already finished */
        rc = wire_skip_message(&s->conn.reader, err);
        break;
    default: {
        err_t e;
        err_set(&e, NUMRPC_EPROTO, "message type %u is not served here", type);
        rc = refuse(s, call_id, &e, err);
    }
    }
    if (type == PROTO_CALL && !s->rec.done) record_done(s, rc ? err->code : NUMRPC_OK, rc ? err->detail : "");
    /* Replies held for the next request go out unless it is here whole. */
    if (rc == 0 && wire_writer_holding(&s->conn.writer) && !wire_reader_has_message(&s->conn.reader))
        rc = wire_flush(&s->conn.writer, err);
    s->slot->last_active = sock_now();
    atomic_store(&s->slot->state, SLOT_IDLE);
    /* The dispatcher holds requests of this address until one is read
     * (pool.c next_eligible): it hears that now, not at its next tick. */
    if (atomic_exchange(&s->slot->wake_when_read, 0) && s->wake_dispatcher) s->wake_dispatcher(s);
    return rc;
}
