/* fuzz_msg_server.c -- libFuzzer target: a client's bytes read by every
 * reader a server runs on them, in its order and with its default limits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "callmem.h"
#include "config.h"
#include "control.h"
#include "files.h"
#include "fuzz_support.h"
#include "marshal.h"
#include "msg.h"
#include "msg_control.h"
#include "msg_data.h"

/* Input: byte mode, then the client's stream.  Mode bit 0 set: the stream
 * is one packet the dispatcher reads itself (STATUS, HELLO, AUTH, ADMIN: control.c);
 * clear: a worker serves the connection message by message (session.c),
 * CALLs of the routines of stubs/ and tests/client/strmod.idl by name, the
 * call's memory judged by the server's own callmem.c.
 * The harness mirrors the server's sequence of readers and checks; it
 * writes no replies and runs no routine (an rfile's first block is read
 * as the routine's first read would fetch it). */

static server_config cfg; /* the limits a server starts with: defaults, normalised */

/* Larger blocks are mapped rather than malloc'd: untouched pages cost
 * nothing (calloc would clear them, and its limit under the fuzzer is 2 GiB),
 * and a guard page follows them. */
#define MALLOC_BLOCK_MAX (1u << 20)

typedef struct block {
    void *p;
    void *map; /* the mapping when mapped, else NULL */
    size_t map_len;
} block;

/* A zeroed array block of bytes, ending where the guard page starts. */
static int block_alloc(block *b, size_t bytes)
{
    memset(b, 0, sizeof *b);
    if (bytes <= MALLOC_BLOCK_MAX) {
        b->p = calloc(1, bytes ? bytes : 1);
        return b->p ? 0 : -1;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE), rounded = (bytes + page - 1) / page * page;
    b->map_len = rounded + page;
    b->map = mmap(NULL, b->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                  -1, 0);
    if (b->map == MAP_FAILED) return -1;
    mprotect((uint8_t *)b->map + rounded, page, PROT_NONE);
    b->p = (uint8_t *)b->map + (rounded - bytes);
    return 0;
}

static void block_free(block *b)
{
    if (b->map) munmap(b->map, b->map_len);
    else free(b->p);
    memset(b, 0, sizeof *b);
}

/* ---- One CALL (session.c serve_call) ---- */

typedef struct call {
    const iface_t *f;
    fuzz_args a;
    block blocks[IFACE_MAX_PARAMS];
    uint64_t rfile_size[IFACE_MAX_PARAMS];
    int has_rfile[IFACE_MAX_PARAMS];
} call;

static void call_free(call *k)
{
    const iface_t *f = k->f;
    for (uint32_t i = 0; f && i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (p->type == NUMRPC_T_STRING && p->rank == 0) free(k->a.scalars[i].s);
        if (p->type == NUMRPC_T_STRING && p->rank > 0 && k->a.argv[i]) {
            /* Only the entries that travel are set, in order: they are
             * freed up to the first unset one.  (free_call_args walks the
             * whole table: seconds for a table of 10^9 entries.) */
            const iface_shape *sh = &k->a.shapes[i];
            char **table = k->a.argv[i];
            for (uint64_t j = 0; j < sh->wire_elems; j++) {
                char **slot = &table[(uint64_t)sh->start[0] + j * (uint64_t)sh->stride[0]];
                if (*slot == NULL) break;
                free(*slot);
            }
        }
        block_free(&k->blocks[i]);
    }
}

/* The server's judgement of the call's memory before it allocates any
 * (callmem_measure, the real one), then the blocks and string tables. */
static int allocate(call *k, call_memory *m, err_t *call_err)
{
    const iface_t *f = k->f;
    int rc = callmem_measure(&cfg, f, k->a.shapes, m, call_err);
    for (uint32_t i = 0; rc == 0 && i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (p->rank == 0) continue;
        uint64_t elems = k->a.shapes[i].mem_elems;
        size_t bytes = (size_t)elems * (p->type == NUMRPC_T_STRING ? sizeof(char *) : iface_type_size(p->type));
        if (block_alloc(&k->blocks[i], bytes) != 0) return err_set(call_err, NUMRPC_ENOMEM, "array");
        k->a.argv[i] = k->blocks[i].p;
    }
    return rc;
}

/* OUT and INOUT strings get their buffers of bound + 1 bytes
 * (fit_output_strings; callmem_measure counted them).  No reader runs on
 * them: the harness makes them only when the call's strings take at most
 * STRINGS_MAX bytes, to stay fast (a server makes one calloc per string). */
#define STRINGS_MAX (64u << 10)

static int fit_strings(call *k, const call_memory *m, err_t *call_err)
{
    const iface_t *f = k->f;
    if (m->string_bytes > STRINGS_MAX) return 0;
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        const iface_shape *s = &k->a.shapes[i];
        if (p->type != NUMRPC_T_STRING || !iface_param_in_reply(p)) continue;
        uint64_t n = p->rank ? s->wire_elems : 1;
        for (uint64_t j = 0; j < n; j++) {
            char **slot = p->rank ? &((char **)k->a.argv[i])[(uint64_t)s->start[0] + j * (uint64_t)s->stride[0]]
                                  : &k->a.scalars[i].s;
            char *buf = calloc((size_t)s->bound + 1, 1);
            if (buf == NULL) return err_set(call_err, NUMRPC_ENOMEM, "string");
            if (*slot) memcpy(buf, *slot, strlen(*slot));
            free(*slot);
            *slot = buf;
        }
    }
    return 0;
}

static int on_rfile(void *ctx, uint32_t index, uint64_t size, err_t *call_err)
{
    call *k = ctx;
    (void)call_err;
    k->has_rfile[index] = 1;
    k->rfile_size[index] = size;
    return 0;
}

/* The routine's first read of each rfile: FILE_DATA for block 0
 * (files_call.c fetch_block, without its check that nothing else is
 * buffered: here the whole stream always is). */
static int read_rfiles(call *k, wire_reader *r, uint32_t call_id, err_t *err)
{
    for (uint32_t i = 0; i < k->f->nparams; i++) {
        if (!k->has_rfile[i] || k->rfile_size[i] == 0) continue;
        uint64_t want = k->rfile_size[i] < FILES_BLOCK ? k->rfile_size[i] : FILES_BLOCK, n = 0;
        err_t client_err;
        int rc = msg_read_file_data_head(r, call_id, want, &n, &client_err, err);
        if (rc == 0 && client_err.code != 0) return 0; /* the call fails, the connection goes on */
        if (rc == 0 && n != want) rc = err_set(err, NUMRPC_EPROTO, "file data of the wrong length");
        uint8_t *data = rc == 0 ? malloc((size_t)want) : NULL;
        if (rc == 0 && data == NULL) rc = err_set(err, NUMRPC_ENOMEM, "block");
        if (rc == 0) rc = wire_get(r, data, (size_t)want, err);
        if (rc == 0) rc = wire_skip_pad8(r, err);
        if (rc == 0) rc = wire_expect_end(r, err);
        free(data);
        if (rc != 0) return rc;
    }
    return 0;
}

/* 0 when the connection goes on (a refused call too). */
static int serve_call(wire_reader *r, uint32_t call_id, err_t *err)
{
    msg_call_header h;
    err_t call_err;
    int rc = msg_read_call_header(r, &h, err);
    if (rc != 0) return rc;
    call k;
    memset(&k, 0, sizeof k);
    k.f = fuzz_iface_find(h.name);
    const iface_t *f = k.f;
    if (f == NULL || (h.hash != 0 && h.hash != f->hash) || h.nargs != f->nparams)
        return wire_skip_message(r, err); /* refused */
    msg_call_handle named[IFACE_MAX_PARAMS];
    uint32_t nhandles = 0;
    if ((h.flags & PROTO_CALL_HANDLES) &&
        (rc = msg_read_call_handles(r, h.nargs, named, IFACE_MAX_PARAMS, &nhandles, err)) != 0)
        return rc;
    for (uint32_t i = 0; i < f->nparams; i++) k.a.argv[i] = &k.a.scalars[i];
    rc = marshal_read_scalars(r, f, k.a.argv, NULL, MARSHAL_REQUEST, err);
    if (rc != 0) goto done;
    for (uint32_t i = 0; i < f->nparams; i++)
        if (f->params[i].rank > 0) k.a.argv[i] = NULL;
        else if (iface_type_is_file(f->params[i].type)) k.a.scalars[i].s = NULL;
    call_memory m;
    /* The harness keeps no handles: a call naming one is refused
     * (NUMRPC_ENOHANDLE) once its shapes are known, as the server's. */
    if (marshal_eval_shapes(f, k.a.argv, k.a.shapes, &call_err) != 0 || nhandles > 0 ||
        allocate(&k, &m, &call_err) != 0) {
        rc = wire_skip_message(r, err); /* refused */
        goto done;
    }
    for (uint32_t i = 0; i < f->nparams; i++) /* a staged file: written, then gone */
        if (f->params[i].type == NUMRPC_T_FILE) k.a.scalars[i].s = "/dev/null";
    rc = marshal_read_arrays(r, f, k.a.argv, k.a.shapes, MARSHAL_REQUEST, err);
    err_clear(&call_err);
    if (rc == 0 && files_read(r, f, k.a.argv, MARSHAL_REQUEST, cfg.max_call_bytes, on_rfile, &k, &call_err, err) != 0)
        rc = call_err.code != 0 ? wire_skip_message(r, err) : err->code;
    else if (rc == 0)
        rc = wire_expect_end(r, err);
    for (uint32_t i = 0; i < f->nparams; i++)
        if (f->params[i].type == NUMRPC_T_FILE) k.a.scalars[i].s = NULL;
    if (rc != 0 || call_err.code != 0) goto done;
    if (marshal_check_strings(f, k.a.argv, k.a.shapes, MARSHAL_REQUEST, &call_err) != 0 ||
        fit_strings(&k, &m, &call_err) != 0)
        goto done; /* refused: the request was read whole */
    marshal_complexity(f, k.a.argv); /* is the call cheap? */
    rc = read_rfiles(&k, r, call_id, err);
done:
    call_free(&k);
    return rc;
}

/* ---- The handle messages (data_call.c) ---- */

/* DATA_PUT: the shape judged against the default --handle-bytes before
 * any memory, then the elements read into a block of the handle's size. */
static int serve_data_put(wire_reader *r, err_t *err)
{
    msg_data_shape s;
    uint32_t flags;
    int rc = msg_read_data_put_header(r, &s, &flags, err);
    if (rc != 0) return rc == NUMRPC_EPROTO ? wire_skip_message(r, err) : rc;
    uint64_t bytes = msg_data_mem_elems(&s) * iface_type_size(s.type);
    if (bytes > cfg.handle_bytes_per_identity) return wire_skip_message(r, err); /* ELIMIT */
    if (flags & MSG_DATA_EMPTY) return wire_expect_end(r, err);
    block b;
    if (block_alloc(&b, (size_t)bytes) != 0) return wire_skip_message(r, err);
    iface_param p;
    iface_shape sh;
    msg_data_as_param(&s, &p, &sh);
    rc = marshal_read_block(r, &p, &sh, b.p, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    block_free(&b);
    return rc == NUMRPC_EPROTO && wire_reader_in_message(r) ? wire_skip_message(r, err) : rc;
}

static int serve_data(wire_reader *r, uint32_t type, err_t *err)
{
    if (type == PROTO_DATA_PUT) return serve_data_put(r, err);
    int rc;
    if (type == PROTO_DATA_GET || type == PROTO_DATA_GRANT) {
        msg_data_id id;
        rc = type == PROTO_DATA_GET ? msg_read_data_get(r, &id, err) : msg_read_data_grant(r, &id, err);
    } else if (type == PROTO_DATA_PULL) {
        msg_data_pull q;
        rc = msg_read_data_pull(r, &q, err);
    } else {
        msg_data_ids l;
        rc = msg_read_data_ids(r, &l, err);
        if (rc == 0) free(l.ids);
    }
    return rc == NUMRPC_EPROTO && wire_reader_in_message(r) ? wire_skip_message(r, err) : rc;
}

/* ---- The worker's loop (session.c session_serve_one) ---- */

static int serve_one(wire_reader *r, err_t *err)
{
    uint32_t type, call_id;
    char name[IFACE_MAX_NAME + 1];
    int rc = wire_next_message(r, &type, &call_id, err);
    if (rc != 0) return rc;
    if ((rc = fuzz_read_peer_request(r, type, name, err)) != 1) {
        if (rc == 0 && type == PROTO_GET_IFACE) fuzz_iface_find(name);
        return rc;
    }
    switch (type) {
    case PROTO_CALL: return serve_call(r, call_id, err);
    case PROTO_DATA_PUT:
    case PROTO_DATA_GET:
    case PROTO_DATA_FREE:
    case PROTO_DATA_RENEW:
    case PROTO_DATA_GRANT:
    case PROTO_DATA_PULL: return serve_data(r, type, err);
    case PROTO_PROBE: {
        uint32_t reply_bytes;
        uint64_t n;
        rc = msg_read_probe(r, &reply_bytes, &n, err);
        if (rc == 0 && (n > PROTO_PROBE_MAX_BYTES || reply_bytes > PROTO_PROBE_MAX_BYTES))
            return wire_skip_message(r, err); /* refused */
        return rc == 0 ? msg_read_probe_payload(r, n, err) : rc;
    }
    default: return wire_skip_message(r, err); /* CANCEL; others refused */
    }
}

/* ---- The dispatcher's control messages (control.c) ---- */

static void serve_control(wire_reader *r)
{
    uint32_t type, call_id, version, step, cmd_len;
    char cmd[MSG_ADMIN_COMMAND_MAX + 1];
    uint8_t mac[HMAC_SHA256_BYTES];
    err_t err;
    if (wire_next_message(r, &type, &call_id, &err) != 0) return;
    if (type == PROTO_STATUS) {
        msg_read_status(r, &version, &err);
    } else if (type == PROTO_HELLO) { /* reply_hello (a token block too) */
        msg_hello h;
        msg_read_hello(r, &h, &err);
    } else if (type == PROTO_AUTH) { /* the token proof */
        uint8_t proof[HMAC_SHA256_BYTES];
        msg_read_auth(r, proof, &err);
    } else if (type == PROTO_ADMIN && msg_read_admin_step(r, &step, &err) == 0) {
        if (step == MSG_ADMIN_CHALLENGE) wire_expect_end(r, &err);
        else if (step == MSG_ADMIN_COMMAND && msg_read_admin_command(r, cmd, &cmd_len, mac, &err) == 0 &&
                 strlen(cmd) != cmd_len)
            abort(); /* a command is refused if it holds a NUL */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static wire_reader control;
    if (cfg.max_call_bytes == 0) {
        err_t err;
        config_defaults(&cfg);
        config_normalise(&cfg);
        fuzz_iface_count();
        if (wire_reader_init(&control, -1, PROTO_HEADER_SIZE + CONTROL_MAX_PAYLOAD, &err) != 0) abort();
    }
    fuzz_cursor c = {data, size};
    uint8_t mode = fuzz_take_byte(&c);
    if (mode & 1) {
        fuzz_reader_feed(&control, c.p, c.left);
        serve_control(&control);
    } else {
        wire_reader *r = fuzz_reader(PROTO_MAX_PACKET); /* msg_conn_init's limit */
        fuzz_reader_feed(r, c.p, c.left);
        err_t err;
        while (serve_one(r, &err) == 0) continue;
    }
    fuzz_reader_close();
    return 0;
}
