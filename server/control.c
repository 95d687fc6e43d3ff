/* control.c -- the messages the dispatcher answers itself: HELLO and AUTH
 * (the handshake, tokens: access.c), STATUS (the server's counters) and ADMIN (remote
 * administration by challenge-response over a secret the administrator set;
 * only modules of the stub directory). */
#define _GNU_SOURCE
#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hmac.h"
#include "log.h"
#include "msg_control.h"
#include "persist.h"
#include "reply.h"
#include "sock.h"
#include "stats.h"

#define ADMIN_SECRET_MAX 4096
/* What the MAC covers before the nonce: binds it to this use. */
static const char admin_context[] = "numrpc-admin-v1";

void control_forget(control_state *cs)
{
    free(cs->buf);
    memset(cs, 0, sizeof *cs);
}

int control_next(transport *t, control_state *cs)
{
    uint32_t type, call_id, flags, len;
    err_t ignored;
    if (cs->buf == NULL) {
        uint8_t hdr[PROTO_HEADER_SIZE];
        long k = t->ops->look(t, hdr, sizeof hdr, 0);
        if (k < 0) return CONTROL_BROKEN;
        /* Not one of ours, or its header is not whole yet: a worker reads
         * it (and waits, if need be). */
        if (k < (long)sizeof hdr || wire_parse_header(hdr, &type, &call_id, &flags, &len, &ignored) != 0 ||
            (type != PROTO_STATUS && type != PROTO_ADMIN && type != PROTO_HELLO && type != PROTO_AUTH))
            return CONTROL_NONE;
        cs->buf = malloc(PROTO_HEADER_SIZE + CONTROL_MAX_PAYLOAD);
        if (cs->buf == NULL) return CONTROL_BROKEN;
        cs->got = 0;
        cs->type = type;
    }
    for (;;) {
        size_t want = PROTO_HEADER_SIZE;
        if (cs->got >= PROTO_HEADER_SIZE) {
            if (wire_parse_header(cs->buf, &type, &call_id, &flags, &len, &ignored) != 0 ||
                !(flags & PROTO_FLAG_END) || (flags & PROTO_FLAG_ABORT) || len > CONTROL_MAX_PAYLOAD)
                return CONTROL_BAD;
            want += len;
        }
        if (cs->got >= PROTO_HEADER_SIZE && cs->got == want) return CONTROL_READY;
        long k = t->ops->look(t, cs->buf + cs->got, want - cs->got, 1);
        if (k < 0) return CONTROL_BROKEN;
        if (k == 0) return CONTROL_PARTIAL;
        cs->got += (size_t)k;
    }
}

/* ---- Replies ---- */

static int refuse(control_ctx *ctx, uint32_t call_id, int code, const char *detail)
{
    err_t err;
    return reply_error(ctx->writer, call_id, code, detail, &err) == 0 ? 0 : -1;
}

static void load_average(double out[3])
{
    out[0] = out[1] = out[2] = 0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f == NULL) return;
    if (fscanf(f, "%lf %lf %lf", &out[0], &out[1], &out[2]) != 3) out[0] = out[1] = out[2] = 0;
    fclose(f);
}

/* The rows of STATUS: every ready entry of the shared counters, copied
 * once (workers may add entries meanwhile).  rows: STATS_MAX_ROUTINES. */
static uint32_t snapshot_routines(const stats_table *t, msg_status_routine *rows)
{
    unsigned newest = t ? atomic_load(&t->newest) : 0;
    uint32_t n = 0;
    for (int i = 0; t && i < STATS_MAX_ROUTINES; i++) {
        const routine_stats *r = &t->items[i];
        if (atomic_load(&r->state) != 2) continue;
        msg_status_routine *x = &rows[n++];
        snprintf(x->name, sizeof x->name, "%s", r->name);
        snprintf(x->module, sizeof x->module, "%s", r->module);
        x->hash = r->hash;
        x->offered = atomic_load(&r->generation) == newest;
        x->calls = atomic_load(&r->calls);
        x->errors = atomic_load(&r->errors);
        x->bytes_in = atomic_load(&r->bytes_in);
        x->bytes_out = atomic_load(&r->bytes_out);
        x->total_s = (double)atomic_load(&r->nanos) * 1e-9;
        x->p99_s = stats_p99(r);
        persist_origin(x->module, x->origin, sizeof x->origin);
    }
    return n;
}

/* STATUS: u32 protocol version -> the server's view, then one record per
 * routine version in the shared table (docs/protocol.md). */
static int serve_status(control_ctx *ctx, control_state *cs, uint32_t call_id, const char *peer)
{
    uint32_t version;
    err_t err;
    if (msg_read_status(ctx->reader, &version, &err) != 0)
        return refuse(ctx, call_id, NUMRPC_EPROTO, "malformed STATUS request");
    if (access_may(ctx->tokens, &cs->access, TOKEN_STATUS, "read this server's status", &err) != 0) {
        server_log(ctx->cfg, LOG_LEVEL_NOTICE, "STATUS from %s refused: %s", peer, err.detail);
        int rc = refuse(ctx, call_id, err.code, err.detail);
        return rc == 0 && cs->access.state != AUTH_PEER_GRANTED ? CONTROL_CLOSE_AFTER : rc;
    }
    if (version != PROTO_VERSION) {
        char detail[96];
        snprintf(detail, sizeof detail, "client speaks protocol %u, server %u", version, PROTO_VERSION);
        return refuse(ctx, call_id, NUMRPC_EVERSION, detail);
    }
    const status_view *v = &ctx->view;
    msg_status st = {.uptime = v->uptime,
                     .workers = (uint32_t)v->workers,
                     .max_workers = (uint32_t)v->max_workers,
                     .restarts = v->restarts,
                     .in_flight = (uint32_t)v->in_flight,
                     .queued = (uint32_t)v->queued,
                     .connections = (uint32_t)v->connections,
                     .draining = (uint32_t)v->draining,
                     .security = (v->tls ? MSG_STATUS_TLS : 0u) | (v->tokens ? MSG_STATUS_TOKENS : 0u),
                     .handles = v->handles,
                     .handle_bytes = v->handle_bytes,
                     .pulled_bytes = v->pulled_bytes,
                     .lent_bytes = v->lent_bytes};
    snprintf(st.server, sizeof st.server, "numrpc-server " PACKAGE_VERSION);
    load_average(st.load);
    st.rows = calloc(STATS_MAX_ROUTINES, sizeof *st.rows); /* freed here */
    if (st.rows == NULL) return refuse(ctx, call_id, NUMRPC_ENOMEM, "status of the routines");
    st.nroutines = snapshot_routines(server_stats, st.rows);
    int rc = msg_write_status_reply(ctx->writer, call_id, &st, &err);
    if (rc != 0 && !wire_writer_idle(ctx->writer)) wire_abort(ctx->writer, &err);
    free(st.rows);
    return rc == 0 ? 0 : -1;
}

/* ---- Remote administration ---- */

int control_load_secret(const char *path, uint8_t *secret, size_t cap, size_t *len, err_t *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return err_set(err, NUMRPC_EAUTH, "cannot read the admin secret file %s: %s", path, strerror(errno));
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        rc = err_set(err, NUMRPC_EAUTH, "admin secret file %s is not a regular file", path);
    else if (st.st_mode & 077)
        rc = err_set(err, NUMRPC_EAUTH, "admin secret file %s may be read by others (mode %03o): chmod 600 it", path,
                     (unsigned)(st.st_mode & 0777));
    ssize_t k = rc == 0 ? read(fd, secret, cap) : 0;
    close(fd);
    if (rc != 0) return rc;
    size_t n = k > 0 ? (size_t)k : 0;
    while (n > 0 && (secret[n - 1] == '\n' || secret[n - 1] == '\r' || secret[n - 1] == ' ')) n--;
    if (n < 16) return err_set(err, NUMRPC_EAUTH, "admin secret in %s is shorter than 16 bytes", path);
    if (n == cap) return err_set(err, NUMRPC_EAUTH, "admin secret in %s is longer than %zu bytes", path, cap - 1);
    *len = n;
    return 0;
}

/* Only a file directly in the stub directory may be registered from afar:
 * the absolute path of name (a path relative to that directory, or an
 * absolute one) into abs, symbolic links resolved. */
static int module_in_stubs(const server_config *cfg, const char *name, char *abs, size_t len, err_t *err)
{
    char joined[CONFIG_PATH_MAX * 2 + 2], dir[PATH_MAX], file[PATH_MAX];
    if (name[0] == '/') snprintf(joined, sizeof joined, "%s", name);
    else snprintf(joined, sizeof joined, "%s/%s", cfg->stubs_dir, name);
    if (realpath(cfg->stubs_dir, dir) == NULL)
        return err_set(err, NUMRPC_ESERVER, "stub directory %s: %s", cfg->stubs_dir, strerror(errno));
    if (realpath(joined, file) == NULL)
        return err_set(err, NUMRPC_EINVAL, "%s: no such module in this server's stub directory", name);
    size_t dl = strlen(dir);
    if (strncmp(file, dir, dl) != 0 || file[dl] != '/' || strchr(file + dl + 1, '/') != NULL)
        return err_set(err, NUMRPC_EAUTH,
                       "%s is outside this server's stub directory: remote admin registers only modules "
                       "already there, it never uploads code",
                       name);
    if (strlen(file) >= len) return err_set(err, NUMRPC_EINVAL, "%s: path too long", name);
    memcpy(abs, file, strlen(file) + 1);
    return 0;
}

static int valid_module_name(const char *s)
{
    if (*s == '\0' || strlen(s) > IFACE_MAX_NAME) return 0;
    for (; *s; s++)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
            return 0;
    return 1;
}

/* The checked command line for admin_exec, or an error. */
static int admin_command_line(const server_config *cfg, const char *cmd, char *line, size_t len, err_t *err)
{
    char abs[CONFIG_PATH_MAX];
    if (strcmp(cmd, "list") == 0 || strcmp(cmd, "reload") == 0) {
        snprintf(line, len, "%s", cmd);
        return 0;
    }
    if (strncmp(cmd, "register ", 9) == 0) {
        if (module_in_stubs(cfg, cmd + 9, abs, sizeof abs, err) != 0) return err->code;
        snprintf(line, len, "register %s", abs);
        return 0;
    }
    if (strncmp(cmd, "unregister ", 11) == 0) {
        if (!valid_module_name(cmd + 11))
            return err_set(err, NUMRPC_EINVAL, "unregister wants a module name (letters, digits, _)");
        snprintf(line, len, "unregister %s", cmd + 11);
        return 0;
    }
    return err_set(err, NUMRPC_EINVAL, "unknown admin command \"%.64s\" (register FILE.so, unregister NAME, list, reload)",
                   cmd);
}

static int serve_admin(control_ctx *ctx, control_state *cs, uint32_t call_id, const char *peer)
{
    const server_config *cfg = ctx->cfg;
    uint32_t step;
    err_t err;
    if (msg_read_admin_step(ctx->reader, &step, &err) != 0)
        return refuse(ctx, call_id, NUMRPC_EPROTO, "malformed ADMIN request");
    if (cfg->admin_secret_file[0] == '\0') {
        server_log(cfg, LOG_LEVEL_WARN, "remote admin from %s refused: remote administration is off", peer);
        return refuse(ctx, call_id, NUMRPC_EAUTH,
                           "remote administration is off on this server (it has no admin-secret-file)");
    }
    if (step == MSG_ADMIN_CHALLENGE) {
        if (wire_expect_end(ctx->reader, &err) != 0)
            return refuse(ctx, call_id, NUMRPC_EPROTO, "malformed ADMIN challenge request");
        if (getrandom(cs->nonce, sizeof cs->nonce, 0) != (ssize_t)sizeof cs->nonce)
            return refuse(ctx, call_id, NUMRPC_ESERVER, "no random bytes for a challenge");
        cs->has_nonce = 1;
        return msg_write_admin_challenge_reply(ctx->writer, call_id, cs->nonce, sizeof cs->nonce, &err) == 0 ? 0 : -1;
    }
    if (step != MSG_ADMIN_COMMAND) return refuse(ctx, call_id, NUMRPC_EPROTO, "unknown ADMIN step");
    char raw[MSG_ADMIN_COMMAND_MAX + 1], cmd[MSG_ADMIN_COMMAND_MAX + 1];
    uint32_t cmd_len;
    uint8_t mac[HMAC_SHA256_BYTES];
    if (msg_read_admin_command(ctx->reader, raw, &cmd_len, mac, &err) != 0)
        return refuse(ctx, call_id, NUMRPC_EPROTO, "malformed ADMIN command");
    memcpy(cmd, raw, (size_t)cmd_len + 1);
    for (char *p = cmd; *p; p++)
        if ((unsigned char)*p < 0x20) *p = '?'; /* one log line per request */
    if (!cs->has_nonce) {
        server_log(cfg, LOG_LEVEL_WARN, "remote admin from %s refused (no challenge asked): %s", peer, cmd);
        return refuse(ctx, call_id, NUMRPC_EAUTH, "admin command without a challenge: ask for one first");
    }
    uint8_t secret[ADMIN_SECRET_MAX], expect[HMAC_SHA256_BYTES];
    size_t secret_len = 0;
    cs->has_nonce = 0; /* a challenge answers one command, right or wrong */
    if (control_load_secret(cfg->admin_secret_file, secret, sizeof secret, &secret_len, &err) != 0) {
        server_log(cfg, LOG_LEVEL_ERROR, "remote admin from %s refused: %s", peer, err.detail);
        return refuse(ctx, call_id, NUMRPC_EAUTH, "remote administration is misconfigured on this server");
    }
    hmac_sha256(secret, secret_len, admin_context, sizeof admin_context, cs->nonce, sizeof cs->nonce, raw,
                cmd_len, expect);
    memset(secret, 0, sizeof secret);
    if (!hmac_equal(expect, mac)) {
        server_log(cfg, LOG_LEVEL_WARN, "remote admin from %s refused (wrong secret): %s", peer, cmd);
        return refuse(ctx, call_id, NUMRPC_EAUTH,
                           "wrong secret: the answer to the challenge does not match this server's admin secret");
    }
    char line[CONFIG_PATH_MAX + 64], reply[8192];
    if (admin_command_line(cfg, cmd, line, sizeof line, &err) != 0) {
        server_log(cfg, LOG_LEVEL_WARN, "remote admin from %s refused: %s: %s", peer, cmd, err.detail);
        return refuse(ctx, call_id, err.code, err.detail);
    }
    int ok = ctx->admin_exec(ctx->owner, line, reply, sizeof reply) == 0;
    server_log(cfg, ok ? LOG_LEVEL_NOTICE : LOG_LEVEL_WARN, "remote admin from %s: %s: %s", peer, cmd, reply);
    if (!ok) return refuse(ctx, call_id, NUMRPC_EINVAL, strncmp(reply, "error ", 6) == 0 ? reply + 6 : reply);
    const char *text = strncmp(reply, "ok", 2) == 0 ? reply + 2 + (reply[2] == ' ') : reply;
    return msg_write_admin_command_reply(ctx->writer, call_id, text, &err) == 0 ? 0 : -1;
}

/* HELLO and AUTH: the token exchange (access.c), its refusals logged. */
static int serve_access(control_ctx *ctx, control_state *cs, uint32_t type, uint32_t call_id, const char *peer)
{
    err_t why;
    int rc = type == PROTO_HELLO
                 ? access_hello(ctx->tokens, ctx->reader, ctx->writer, call_id, &cs->access, &why)
                 : access_auth(ctx->tokens, ctx->reader, ctx->writer, call_id, &cs->access, &why);
    if (why.code != NUMRPC_OK) {
        for (char *p = why.detail; *p; p++)
            if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f) *p = '?'; /* one log line */
        server_log(ctx->cfg, LOG_LEVEL_NOTICE, "%s from %s refused: %s", type == PROTO_HELLO ? "HELLO" : "AUTH",
                   peer, why.detail);
    }
    return rc;
}

int control_serve(control_ctx *ctx, int fd, control_state *cs)
{
    char peer[NI_MAXHOST + NI_MAXSERV + 80] = "?", host[NI_MAXHOST], serv[NI_MAXSERV];
    struct sockaddr_storage sa;
    socklen_t sl = sizeof sa;
    if (getpeername(fd, (struct sockaddr *)&sa, &sl) == 0 &&
        getnameinfo((struct sockaddr *)&sa, sl, host, sizeof host, serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) == 0)
        snprintf(peer, sizeof peer, "%s:%s", host, serv);
    /* A client certificate (--tls-client-ca) names the peer in the log. */
    if (ctx->tls != NULL && strcmp(ctx->tls->peer.common_name, "none") != 0) {
        size_t used = strlen(peer);
        snprintf(peer + used, sizeof peer - used, " (CN %.64s)", ctx->tls->peer.common_name);
    }
    uint8_t *msg = cs->buf; /* the whole packet control_next read: freed here */
    cs->buf = NULL;
    if (msg == NULL) return -1;
    /* The packet is parsed by the same readers as any stream's. */
    transport req = transport_memory(msg, cs->got);
    uint32_t type, call_id;
    err_t err;
    int rc = -1;
    wire_reader_attach(ctx->reader, req);
    if (wire_next_message(ctx->reader, &type, &call_id, &err) == 0) {
        if (type == PROTO_STATUS) rc = serve_status(ctx, cs, call_id, peer);
        else if (type == PROTO_ADMIN) rc = serve_admin(ctx, cs, call_id, peer);
        else rc = serve_access(ctx, cs, type, call_id, peer);
    }
    wire_reader_attach(ctx->reader, transport_none());
    transport_close(&req);
    free(msg);
    return rc;
}
