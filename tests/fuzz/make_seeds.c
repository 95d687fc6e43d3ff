/* make_seeds.c -- writes the fuzz targets' seed corpora (tests/fuzz/corpus)
 * with the real message writers: make_seeds CORPUS_DIR. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "expr.h"
#include "files.h"
#include "fuzz_support.h"
#include "marshal.h"
#include "msg.h"
#include "msg_control.h"
#include "msg_meta.h"

static const char *corpus;
static transport_bytes sink = {.max = 64u << 20};
static transport sink_tp; /* for the empty messages sent straight */
static wire_writer w;
static err_t err;
static char data_file[64]; /* a small file the calls' file parameters name */

static void check(int rc)
{
    if (rc != 0) {
        fprintf(stderr, "make_seeds: %s\n", err.detail);
        exit(1);
    }
}

/* Writes prefix (n bytes) then the sink's bytes to CORPUS/target/name, and
 * empties the sink. */
static void seed(const char *target, const char *name, const uint8_t *prefix, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", corpus, target);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof path, "%s/%s/%s", corpus, target, name);
    FILE *out = fopen(path, "wb");
    if (out == NULL || fwrite(prefix, 1, n, out) != n || fwrite(sink.p, 1, sink.len, out) != sink.len ||
        fclose(out) != 0) {
        perror(path);
        exit(1);
    }
    sink.len = 0;
}

static void seed1(const char *target, const char *name, uint8_t first)
{
    seed(target, name, &first, 1);
}

/* ---- Requests a server reads ---- */

/* A CALL of f with the arguments fuzz_args_fill makes from bytes of value
 * v (ints v, chars "NVULTA"[v % 6]); *used: bytes it took.  -1 when those
 * shapes fail. */
static int write_call(const iface_t *f, uint8_t v, uint32_t id, size_t *used, fuzz_args *a)
{
    uint8_t bytes[IFACE_MAX_PARAMS];
    memset(bytes, v, sizeof bytes);
    fuzz_cursor c = {bytes, sizeof bytes};
    if (fuzz_args_fill(f, &c, data_file, a) != 0) return -1;
    *used = sizeof bytes - c.left;
    msg_call_header h = {.hash = f->hash, .nargs = f->nparams};
    snprintf(h.name, sizeof h.name, "%s", f->name);
    check(msg_write_call_header(&w, id, &h, &err));
    check(marshal_write(&w, f, a->argv, a->shapes, MARSHAL_REQUEST, &err));
    check(files_write(&w, f, a->argv, MARSHAL_REQUEST, &err));
    check(wire_end(&w, &err));
    return 0;
}

static int has_rfile(const iface_t *f)
{
    for (uint32_t i = 0; i < f->nparams; i++)
        if (f->params[i].type == NUMRPC_T_RFILE) return 1;
    return 0;
}

static void server_seeds(void)
{
    const char *t = "fuzz_msg_server";
    msg_hello h = {.version = PROTO_VERSION, .packet_size = 4096, .peer = "libnumrpc seeds"};
    check(msg_write_hello(&w, 1, &h, &err));
    seed1(t, "hello", 0);
    check(msg_write_list(&w, 2, &err));
    seed1(t, "list", 0);
    check(msg_write_get_iface(&w, 3, "dgefa", &err));
    seed1(t, "get-iface", 0);
    check(msg_write_probe(&w, 4, 100, 300, &err));
    seed1(t, "probe", 0);
    check(wire_send_empty(&sink_tp, PROTO_CANCEL, 5, &err));
    seed1(t, "cancel", 0);
    for (uint32_t i = 0; i < fuzz_iface_count(); i++) {
        const iface_t *f = fuzz_iface_at(i);
        for (uint8_t v = 2; v <= 6; v += 4) {
            fuzz_args a;
            size_t used;
            char name[128];
            if (write_call(f, v, 7, &used, &a) == 0) {
                if (has_rfile(f)) /* the routine reads its first block */
                    check(msg_write_file_data(&w, 7, NUMRPC_OK, "", "0123456789abcdef\n", 17, &err));
                snprintf(name, sizeof name, "call-%s-%u", f->name, v);
                seed1(t, name, 0);
            }
            fuzz_args_free(f, &a);
        }
    }
    /* A connection's life: hello, a list, two pipelined calls. */
    fuzz_args a, b;
    size_t used;
    check(msg_write_hello(&w, 1, &h, &err));
    check(msg_write_list(&w, 2, &err));
    write_call(fuzz_iface_find("dgesl"), 3, 3, &used, &a);
    write_call(fuzz_iface_find("greet"), 3, 4, &used, &b);
    seed1(t, "session", 0);
    fuzz_args_free(fuzz_iface_find("dgesl"), &a);
    fuzz_args_free(fuzz_iface_find("greet"), &b);

    check(msg_write_status(&w, 1, &err));
    seed1(t, "control-status", 1);
    check(msg_write_hello(&w, 1, &h, &err));
    seed1(t, "control-hello", 1);
    msg_hello th = h; /* with a token: the client's name and nonce */
    th.has_token = 1;
    snprintf(th.token, sizeof th.token, "alice");
    memset(th.nonce, 0x5a, sizeof th.nonce);
    check(msg_write_hello(&w, 1, &th, &err));
    seed1(t, "control-hello-token", 1);
    uint8_t proof[HMAC_SHA256_BYTES] = {9, 8, 7};
    check(msg_write_auth(&w, 2, proof, &err));
    check(wire_flush(&w, &err)); /* AUTH is written held */
    seed1(t, "control-auth", 1);
    check(msg_write_admin_challenge(&w, 1, &err));
    seed1(t, "control-challenge", 1);
    uint8_t mac[HMAC_SHA256_BYTES] = {1, 2, 3};
    check(msg_write_admin_command(&w, 2, "register /tmp/x.so", mac, &err));
    seed1(t, "control-command", 1);
}

/* ---- Replies a client reads ---- */

static void client_seeds(void)
{
    const char *t = "fuzz_msg_client";
    msg_hello h = {.version = PROTO_VERSION, .packet_size = PROTO_MAX_PACKET, .peer = "numrpc-server seeds"};
    check(msg_write_hello_reply(&w, 1, &h, &err));
    seed1(t, "hello", 0);
    msg_hello th = h; /* a server's challenge and proof */
    th.has_token = th.has_proof = 1;
    snprintf(th.token, sizeof th.token, "alice");
    memset(th.nonce, 0xa5, sizeof th.nonce);
    memset(th.proof, 0x3c, sizeof th.proof);
    check(msg_write_hello_reply(&w, 1, &th, &err));
    seed1(t, "hello-token", 0);
    msg_routine_entry list[3] = {{"dgefa", 1}, {"dgesl", 2}, {"greet", 3}};
    check(msg_write_list_reply(&w, 1, list, 3, &err));
    seed1(t, "list", 1);
    uint8_t *blob;
    size_t len;
    check(iface_encode(fuzz_iface_find("dgefa"), &blob, &len, &err));
    check(msg_write_iface_reply(&w, 1, blob, (uint32_t)len, &err));
    free(blob);
    seed1(t, "iface", 2);
    check(msg_write_probe_reply(&w, 1, 100, &err));
    seed1(t, "probe", 3);
    check(msg_reply_simple(&w, 1, NUMRPC_ENOENT, "unknown routine", &err));
    seed1(t, "error", 3);
    msg_status_routine rows[2] = {{"dgefa", "linpack", 1, 10, 1, 100, 200, 1, 0.5, 0.1},
                                  {"greet", "strmod", 2, 3, 0, 30, 40, 0, 0.01, 0.002}};
    msg_status st = {"numrpc-server seeds", 12.5, {0.1, 0.2, 0.3}, 4, 32, 1, 0, 3, 0, 2, 0, rows};
    check(msg_write_status_reply(&w, 1, &st, &err));
    seed1(t, "status", 5);
    uint8_t nonce[32] = {9, 8, 7};
    check(msg_write_admin_challenge_reply(&w, 1, nonce, sizeof nonce, &err));
    check(msg_write_admin_command_reply(&w, 2, "registered x", &err));
    seed1(t, "admin", 6);
    for (uint32_t i = 0; i < fuzz_iface_count(); i++) {
        const iface_t *f = fuzz_iface_at(i);
        uint8_t prefix[2 + IFACE_MAX_PARAMS] = {4, (uint8_t)i};
        memset(prefix + 2, 6, IFACE_MAX_PARAMS);
        fuzz_cursor c = {prefix + 2, IFACE_MAX_PARAMS};
        fuzz_args a;
        if (fuzz_args_fill(f, &c, data_file, &a) == 0) {
            if (has_rfile(f)) {
                msg_file_read q = {0, 0, 17};
                check(msg_write_file_read(&w, 1, &q, &err));
            }
            msg_call_result res = {0.25, 1, 0};
            check(msg_reply_begin(&w, 1, NUMRPC_OK, "", &err));
            check(msg_write_call_result(&w, &res, &err));
            check(marshal_write(&w, f, a.argv, a.shapes, MARSHAL_REPLY, &err));
            check(files_write(&w, f, a.argv, MARSHAL_REPLY, &err));
            check(wire_end(&w, &err));
            char name[128];
            snprintf(name, sizeof name, "call-%s", f->name);
            seed(t, name, prefix, 2 + IFACE_MAX_PARAMS - c.left);
        }
        fuzz_args_free(f, &a);
    }
}

/* ---- The metaserver's messages ---- */

static void meta_seeds(void)
{
    const char *t = "fuzz_meta";
    msg_meta_routine routines[2];
    memset(routines, 0, sizeof routines);
    const char *names[2] = {"dgefa", "greet"};
    for (int i = 0; i < 2; i++) {
        const iface_t *f = fuzz_iface_find(names[i]);
        size_t len;
        snprintf(routines[i].name, sizeof routines[i].name, "%s", f->name);
        routines[i].hash = f->hash;
        check(iface_encode(f, &routines[i].blob, &len, &err));
        routines[i].len = (uint32_t)len;
    }
    msg_meta_join j = {.host = "", .port = 7800, .name = "numrpc-server seeds", .slots = 4,
                       .curve = {3, {100, 400, 1000}, {1e9, 4e9, 6e9}}, .routines = routines, .nroutines = 2};
    msg_hello h = {.version = PROTO_VERSION, .packet_size = 4096, .peer = "numrpc-server seeds"};
    check(msg_write_hello(&w, 1, &h, &err));
    check(msg_write_meta_join(&w, 2, &j, &err));
    check(msg_write_meta_routines(&w, 3, routines, 2, &err));
    msg_meta_load l = {2, 1, 0, 0.75};
    check(msg_write_meta_load(&w, 4, &l, &err));
    check(msg_write_meta_heartbeat(&w, 5, &err));
    seed1(t, "server-session", 0);
    msg_meta_query q = {.routine = "dgefa", .flops = 2e9, .bytes_in = 80000, .bytes_out = 80000, .max_servers = 4};
    check(msg_write_meta_query(&w, 1, &q, &err));
    msg_meta_query held = {.routine = "dgefa", .flops = 2e9, .bytes_in = 80000, .bytes_out = 80000, .max_servers = 4,
                           .nheld = 2, .held = {{"127.0.0.1:7800", 60000}, {"10.0.0.2:7801", 8000}}};
    check(msg_write_meta_query(&w, 6, &held, &err));
    msg_meta_call calls[2] = {{"127.0.0.1:7800", "dgefa", 2e9, 80000, 80000, 0.5, 0.6, 0.4, 0},
                              {"127.0.0.1:7801", "", 0, 1000, 1000, 0, 0.001, 0, PROTO_REPORT_PROBE}};
    check(msg_write_meta_report(&w, 2, calls, 2, &err));
    check(msg_write_meta_status(&w, 3, MSG_META_STATUS_JSON, &err));
    check(msg_write_list(&w, 4, &err));
    check(msg_write_get_iface(&w, 5, "dgefa", &err));
    seed1(t, "client-session", 0);
    msg_meta_joined joined = {7, 1000};
    check(msg_write_meta_join_reply(&w, 1, &joined, &err));
    seed1(t, "join-reply", 1);
    msg_meta_ranked ranked[2] = {{"127.0.0.1", 7800, 4, 1, 1e-4, 1e9, 4e9, 1, 0.5, ""},
                                 {"10.0.0.2", 7800, 8, 0, 1e-3, 1e8, 8e9, 0.5, 0.9, ""}};
    check(msg_write_meta_query_reply(&w, 1, 30000, ranked, 2, &err));
    seed1(t, "query-reply", 2);
    check(msg_write_meta_status_reply(&w, 1, "{\"servers\": []}", &err));
    seed1(t, "status-reply", 3);
    for (int i = 0; i < 2; i++) free(routines[i].blob);
}

/* ---- Descriptors and expressions ---- */

/* One expression in fuzz_expr's compact form after its header. */
static void put_expr(uint8_t *out, size_t *n, const expr_t *e)
{
    for (uint32_t pc = 0; pc < e->nwords; pc++) {
        int64_t op = e->words[pc];
        out[(*n)++] = (uint8_t)(op + 1);
        if ((op == EXPR_CONST || op == EXPR_ARG) && pc + 1 < e->nwords) {
            int64_t v = e->words[++pc];
            if (v >= -127 && v <= 127) {
                out[(*n)++] = (uint8_t)(int8_t)v;
                continue;
            }
            out[(*n)++] = 0x80;
            for (int k = 7; k >= 0; k--) out[(*n)++] = (uint8_t)((uint64_t)v >> (8 * k));
        }
    }
}

static void expr_seed(const iface_t *f, const char *what, const expr_t *e)
{
    if (e->nwords == 0) return;
    uint8_t prog[16 + 9 * EXPR_MAX_WORDS] = {(uint8_t)f->nparams, 2, 0, 0, 0, 0, 0, 0, 0, 6,
                                             0, 0, 0, 0, 0, 0, 0, 3};
    size_t n = 18;
    char name[160];
    put_expr(prog, &n, e);
    snprintf(name, sizeof name, "%s-%s", f->name, what);
    seed("fuzz_expr", name, prog, n);
}

static void iface_seeds(void)
{
    for (uint32_t i = 0; i < fuzz_iface_count(); i++) {
        const iface_t *f = fuzz_iface_at(i);
        uint8_t *blob;
        size_t len;
        check(iface_encode(f, &blob, &len, &err));
        seed("fuzz_iface", f->name, blob, len);
        free(blob);
        expr_seed(f, "complexity", &f->complexity);
        for (uint32_t p = 0; p < f->nparams; p++) {
            char what[96];
            snprintf(what, sizeof what, "%s-size", f->params[p].name);
            if (f->params[p].rank > 0) expr_seed(f, what, &f->params[p].dims[0].size);
            snprintf(what, sizeof what, "%s-bound", f->params[p].name);
            expr_seed(f, what, &f->params[p].bound);
        }
    }
}

/* ---- Framing ---- */

static void wire_seeds(void)
{
    const char *t = "fuzz_wire";
    /* Read: next message, a u32, a string, the rest skipped, end; again. */
    uint8_t read_ops[] = {0, 5, 9, 0, 6, 0, 7, 40, 5, 0, 0, 0};
    msg_hello h = {.version = PROTO_VERSION, .packet_size = 4096, .peer = "libnumrpc seeds"};
    check(msg_write_hello(&w, 1, &h, &err));
    check(wire_send_empty(&sink_tp, PROTO_KEEPALIVE, 0, &err));
    check(msg_write_get_iface(&w, 2, "dgefa", &err));
    check(msg_write_probe(&w, 3, 64, 5000, &err)); /* several packets at 4096 */
    seed(t, "read-worker", read_ops, sizeof read_ops);
    read_ops[0] = 2; /* the dispatcher's control reader */
    check(msg_write_status(&w, 1, &err));
    seed(t, "read-control", read_ops, sizeof read_ops);
    uint8_t peek_ops[] = {0, 6, 9, 0, 4, 200, 1, 3, 3, 0, 2, 1, 0, 0};
    check(msg_write_probe(&w, 3, 64, 20000, &err));
    seed(t, "read-peek", peek_ops, sizeof peek_ops);
    /* Round trips: begin, puts across packets, pad, end or hold or abort. */
    uint8_t trips[][22] = {
        {1, 10, 0, 4, 1, 200, 3, 100, 2, 0, 1, 7, 5, 0, 0, 1, 4, 30, 6, 0, 9, 0},
        {1, 10, 8, 0, 0, 2, 1, 255, 1, 255, 7, 0, 0, 3, 4, 100, 5, 0, 10, 0, 8, 3},
        {1, 10, 8, 2, 0, 7, 3, 250, 6, 0, 0, 8, 1, 9, 6, 0, 0, 9, 7, 0, 9, 0},
    };
    for (size_t i = 0; i < sizeof trips / sizeof trips[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "round-trip-%zu", i);
        seed(t, name, trips[i], sizeof trips[i]);
    }
}

/* ---- IDL text ---- */

#define IDL_SEED_MAX 1024 /* fuzz_idlc runs with -max_len=1024 */

static void idl_seeds(void)
{
    static const char *const files[] = {
        "stubs/linpack.idl", "stubs/blas.idl", "stubs/lapack.idl", "stubs/sdpa.idl",
        "tests/client/strmod.idl", "tests/async/asyncmod.idl", "tests/fortran/ftest.idl",
        "tests/server/faults.idl", "tests/idlc/cases/linpack_paper.idl", "tests/idlc/cases/optional.idl",
        "tests/idlc/cases/reorder.idl", "tests/idlc/cases/strings.idl", "tests/idlc/cases/err_syntax.idl",
        "tests/idlc/cases/err_many.idl", "tests/idlc/cases/err_strings.idl", "tests/idlc/cases/err_char_const.idl",
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[1024], name[256];
        snprintf(path, sizeof path, "%s/%s", FUZZ_SRCDIR, files[i]);
        FILE *in = fopen(path, "rb");
        if (in == NULL) {
            perror(path);
            exit(1);
        }
        uint8_t text[16384];
        size_t n = fread(text, 1, sizeof text, in);
        fclose(in);
        char base[256];
        snprintf(base, sizeof base, "%s", files[i]);
        for (char *p = base; *p; p++)
            if (*p == '/') *p = '-';
        if (n <= IDL_SEED_MAX) {
            seed("fuzz_idlc", base, text, n);
            continue;
        }
        /* A long file: its header (up to the first Define) with each Define. */
        text[n < sizeof text ? n : sizeof text - 1] = '\0';
        char *first = strstr((char *)text, "\nDefine");
        size_t head = first ? (size_t)(first - (char *)text) + 1 : 0;
        int part = 0;
        for (char *d = first; d != NULL; part++) {
            char *next = strstr(d + 1, "\nDefine");
            size_t len = (size_t)((next ? next : (char *)text + n) - (d + 1));
            uint8_t piece[IDL_SEED_MAX];
            size_t h = head < IDL_SEED_MAX ? head : IDL_SEED_MAX, k = len < IDL_SEED_MAX - h ? len : IDL_SEED_MAX - h;
            memcpy(piece, text, h);
            memcpy(piece + h, d + 1, k);
            snprintf(name, sizeof name, "%s-%d", base, part);
            seed("fuzz_idlc", name, piece, h + k);
            d = next;
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_seeds CORPUS_DIR\n");
        return 2;
    }
    corpus = argv[1];
    snprintf(data_file, sizeof data_file, "/tmp/numrpc-seed-%d.dat", (int)getpid());
    FILE *f = fopen(data_file, "w");
    if (f == NULL || fputs("3 1 2\n0.5 0.25\n", f) < 0 || fclose(f) != 0) {
        perror(data_file);
        return 1;
    }
    check(wire_writer_init(&w, -1, PROTO_DEFAULT_PACKET, &err));
    sink_tp = transport_memory_sink(&sink);
    wire_writer_attach(&w, sink_tp);
    server_seeds();
    client_seeds();
    meta_seeds();
    iface_seeds();
    wire_seeds();
    idl_seeds();
    wire_writer_free(&w);
    transport_bytes_free(&sink);
    unlink(data_file);
    return 0;
}
