/* cli_status.c -- `numrpc status [--json] HOST:PORT` (a server's counters as
 * a table or JSON) and `numrpc admin --server HOST:PORT ...` (remote
 * administration: challenge-response over a shared secret, never sent). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "hmac.h"
#include "marshal.h"
#include "sock.h"
#include "wire.h"

#define CONNECT_MS 10000
#define IO_MS 30000

/* ---- One connection speaking to the dispatcher ---- */
typedef struct control_conn {
    wire_writer w;
    wire_reader r;
    int fd;
    char label[300];
} control_conn;

static int control_open(control_conn *c, const char *server, err_t *err)
{
    char host[256];
    int port = 0;
    memset(c, 0, sizeof *c);
    c->fd = -1;
    snprintf(c->label, sizeof c->label, "%s", server);
    if (sock_parse_hostport(server, host, sizeof host, &port, err) != 0) return err->code;
    c->fd = sock_connect(host, port, CONNECT_MS, err);
    if (c->fd < 0) return err->code;
    sock_set_timeouts(c->fd, IO_MS, IO_MS);
    int rc = wire_writer_init(&c->w, c->fd, PROTO_DEFAULT_PACKET, err);
    if (rc == 0) rc = wire_reader_init(&c->r, c->fd, PROTO_MAX_PACKET, err);
    return rc;
}

static void control_close(control_conn *c)
{
    if (c->fd >= 0) close(c->fd);
    wire_writer_free(&c->w);
    wire_reader_free(&c->r);
}

/* Reads the reply to call_id up to its status: 0 with the rest of the
 * reply to read, or the server's error in err. */
static int read_reply(control_conn *c, uint32_t call_id, err_t *err)
{
    uint32_t type, id, status;
    char *detail = NULL;
    int rc = wire_next_message(&c->r, &type, &id, err);
    if (rc == NUMRPC_EIO) return err_set(err, NUMRPC_EIO, "%s closed the connection without a reply", c->label);
    if (rc != 0) return rc;
    /* A connection refused before its request was read is answered with
     * call id 0 (server busy, shutting down). */
    if (type != PROTO_REPLY || (id != call_id && id != 0))
        return err_set(err, NUMRPC_EPROTO, "%s sent message %u for call %u, expected a reply to %u", c->label, type,
                       id, call_id);
    rc = wire_get_u32(&c->r, &status, err);
    if (rc == 0) rc = wire_get_string(&c->r, &detail, MARSHAL_MAX_STRING, err);
    if (rc == 0 && (int32_t)status != NUMRPC_OK) {
        int code = (int32_t)status;
        if (code > 0 || code < NUMRPC_EPENDING) code = NUMRPC_ESERVER;
        rc = err_set(err, code, "%s", detail);
    }
    free(detail);
    return rc;
}

static int fail(const char *what, const err_t *err)
{
    fprintf(stderr, "numrpc %s: %s: %s\n", what, numrpc_strerror(err->code), err->detail);
    return 1;
}

/* ---- numrpc status ---- */

typedef struct routine_row {
    char *name, *module;
    uint64_t hash, calls, errors, bytes_in, bytes_out;
    uint32_t offered;
    double total_s, p99_s;
} routine_row;

typedef struct status_reply {
    char *server;
    double uptime, load[3];
    uint32_t workers, max_workers, in_flight, queued, connections, draining, nroutines;
    uint64_t restarts;
    routine_row *rows;
} status_reply;

static void free_status(status_reply *s)
{
    for (uint32_t i = 0; s->rows && i < s->nroutines; i++) {
        free(s->rows[i].name);
        free(s->rows[i].module);
    }
    free(s->rows);
    free(s->server);
}

static int fetch_status(const char *server, status_reply *s, err_t *err)
{
    control_conn c;
    memset(s, 0, sizeof *s);
    int rc = control_open(&c, server, err);
    uint32_t id = 1;
    if (rc == 0) {
        wire_begin(&c.w, PROTO_STATUS, id);
        rc = wire_put_u32(&c.w, PROTO_VERSION, err);
        if (rc == 0) rc = wire_end(&c.w, err);
    }
    if (rc == 0) rc = read_reply(&c, id, err);
    if (rc == 0) rc = wire_get_string(&c.r, &s->server, IFACE_MAX_TEXT, err);
    if (rc == 0) rc = wire_get_double(&c.r, &s->uptime, err);
    for (int i = 0; rc == 0 && i < 3; i++) rc = wire_get_double(&c.r, &s->load[i], err);
    if (rc == 0) rc = wire_get_u32(&c.r, &s->workers, err);
    if (rc == 0) rc = wire_get_u32(&c.r, &s->max_workers, err);
    if (rc == 0) rc = wire_get_u64(&c.r, &s->restarts, err);
    if (rc == 0) rc = wire_get_u32(&c.r, &s->in_flight, err);
    if (rc == 0) rc = wire_get_u32(&c.r, &s->queued, err);
    if (rc == 0) rc = wire_get_u32(&c.r, &s->connections, err);
    if (rc == 0) rc = wire_get_u32(&c.r, &s->draining, err);
    uint32_t n = 0;
    if (rc == 0) rc = wire_get_u32(&c.r, &n, err);
    if (rc == 0 && n > 100000) rc = err_set(err, NUMRPC_EPROTO, "%s reports %u routines", server, n);
    if (rc == 0 && (s->rows = calloc(n ? n : 1, sizeof *s->rows)) == NULL) rc = err_set(err, NUMRPC_ENOMEM, "status");
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        routine_row *r = &s->rows[i];
        s->nroutines = i + 1;
        rc = wire_get_string(&c.r, &r->name, IFACE_MAX_NAME, err);
        if (rc == 0) rc = wire_get_string(&c.r, &r->module, IFACE_MAX_NAME, err);
        if (rc == 0) rc = wire_get_u64(&c.r, &r->hash, err);
        if (rc == 0) rc = wire_get_u32(&c.r, &r->offered, err);
        if (rc == 0) rc = wire_get_u64(&c.r, &r->calls, err);
        if (rc == 0) rc = wire_get_u64(&c.r, &r->errors, err);
        if (rc == 0) rc = wire_get_u64(&c.r, &r->bytes_in, err);
        if (rc == 0) rc = wire_get_u64(&c.r, &r->bytes_out, err);
        if (rc == 0) rc = wire_get_double(&c.r, &r->total_s, err);
        if (rc == 0) rc = wire_get_double(&c.r, &r->p99_s, err);
    }
    if (rc == 0) rc = wire_expect_end(&c.r, err);
    control_close(&c);
    if (rc != 0) free_status(s);
    return rc;
}

/* Names are identifiers, but a server is not to be trusted with JSON. */
static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') printf("\\%c", ch);
        else if (ch < 0x20) printf("\\u%04x", ch);
        else putchar(ch);
    }
    putchar('"');
}

static void print_json(const char *server, const status_reply *s)
{
    printf("{\"address\": ");
    json_string(server);
    printf(", \"server\": ");
    json_string(s->server);
    printf(",\n \"uptime_seconds\": %.3f, \"load\": [%.2f, %.2f, %.2f],\n", s->uptime, s->load[0], s->load[1],
           s->load[2]);
    printf(" \"workers\": %u, \"max_workers\": %u, \"worker_restarts\": %llu,\n", s->workers, s->max_workers,
           (unsigned long long)s->restarts);
    printf(" \"calls_in_flight\": %u, \"calls_queued\": %u, \"connections\": %u, \"draining\": %s,\n",
           s->in_flight, s->queued, s->connections, s->draining ? "true" : "false");
    printf(" \"routines\": [");
    for (uint32_t i = 0; i < s->nroutines; i++) {
        const routine_row *r = &s->rows[i];
        printf("%s\n  {\"name\": ", i ? "," : "");
        json_string(r->name);
        printf(", \"module\": ");
        json_string(r->module);
        printf(", \"version\": \"%016llx\", \"offered\": %s, \"calls\": %llu, \"errors\": %llu, "
               "\"bytes_in\": %llu, \"bytes_out\": %llu, \"mean_seconds\": %.9f, \"p99_seconds\": %.9f}",
               (unsigned long long)r->hash, r->offered ? "true" : "false", (unsigned long long)r->calls,
               (unsigned long long)r->errors, (unsigned long long)r->bytes_in, (unsigned long long)r->bytes_out,
               r->calls ? r->total_s / (double)r->calls : 0.0, r->p99_s);
    }
    printf("%s]}\n", s->nroutines ? "\n " : "");
}

static void human_bytes(uint64_t b, char *out, size_t len)
{
    if (b < 10000) snprintf(out, len, "%llu B", (unsigned long long)b);
    else if (b < 10000ULL << 10) snprintf(out, len, "%.1f KiB", b / 1024.0);
    else if (b < 10000ULL << 20) snprintf(out, len, "%.1f MiB", b / 1048576.0);
    else snprintf(out, len, "%.1f GiB", b / 1073741824.0);
}

static void human_seconds(double s, char *out, size_t len)
{
    if (s <= 0) snprintf(out, len, "-");
    else if (s < 1e-3) snprintf(out, len, "%.1f us", s * 1e6);
    else if (s < 1) snprintf(out, len, "%.2f ms", s * 1e3);
    else snprintf(out, len, "%.2f s", s);
}

static void print_table(const char *server, const status_reply *s)
{
    long up = (long)s->uptime;
    printf("%s at %s: up %ldd %02ld:%02ld:%02ld, load %.2f %.2f %.2f%s\n", s->server, server, up / 86400,
           up / 3600 % 24, up / 60 % 60, up % 60, s->load[0], s->load[1], s->load[2],
           s->draining ? ", SHUTTING DOWN" : "");
    printf("workers %u (at most %u), %llu restarted; calls in flight %u, queued %u; connections %u\n\n", s->workers,
           s->max_workers, (unsigned long long)s->restarts, s->in_flight, s->queued, s->connections);
    printf("%-20s %-12s %-16s %9s %7s %10s %10s %9s %9s\n", "ROUTINE", "MODULE", "VERSION", "CALLS", "ERRORS",
           "BYTES IN", "BYTES OUT", "MEAN", "P99");
    for (uint32_t i = 0; i < s->nroutines; i++) {
        const routine_row *r = &s->rows[i];
        char in[32], out[32], mean[32], p99[32], name[40];
        human_bytes(r->bytes_in, in, sizeof in);
        human_bytes(r->bytes_out, out, sizeof out);
        human_seconds(r->calls ? r->total_s / (double)r->calls : 0, mean, sizeof mean);
        human_seconds(r->p99_s, p99, sizeof p99);
        snprintf(name, sizeof name, "%s%s", r->name, r->offered ? "" : " (old)");
        printf("%-20s %-12s %016llx %9llu %7llu %10s %10s %9s %9s\n", name, r->module, (unsigned long long)r->hash,
               (unsigned long long)r->calls, (unsigned long long)r->errors, in, out, mean, p99);
    }
    printf("\nMEAN and P99: time in a worker from a request's first byte to its reply; P99 is\n"
           "the upper edge of a histogram bucket (buckets 19%% wide), not an exact sample.\n");
}

int cli_status(int argc, char **argv)
{
    int json = 0;
    const char *server = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) json = 1;
        else if (server == NULL && argv[i][0] != '-') server = argv[i];
        else server = NULL, i = argc;
    }
    if (server == NULL) server = getenv("NUMRPC_SERVER");
    if (server == NULL || argc > 2) {
        fprintf(stderr, "usage: numrpc status [--json] HOST:PORT\n");
        return 2;
    }
    char first[300];
    snprintf(first, sizeof first, "%.*s", (int)strcspn(server, ", "), server);
    status_reply s;
    err_t err;
    if (fetch_status(first, &s, &err) != 0) return fail("status", &err);
    if (json) print_json(first, &s);
    else print_table(first, &s);
    free_status(&s);
    return 0;
}

/* ---- numrpc admin --server HOST:PORT ---- */

/* The secret: the file's bytes without trailing blanks (as the server). */
static int read_secret(const char *path, uint8_t *buf, size_t cap, size_t *len, err_t *err)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) return err_set(err, NUMRPC_EAUTH, "cannot read the secret file %s: %s", path, strerror(errno));
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ')) n--;
    if (n == 0 || n == cap) return err_set(err, NUMRPC_EAUTH, "the secret file %s is empty or too long", path);
    *len = n;
    return 0;
}

static int remote_admin(const char *server, const char *secret_file, const char *command, err_t *err)
{
    uint8_t secret[4096], mac[HMAC_SHA256_BYTES], *nonce = NULL;
    size_t secret_len = 0;
    uint32_t nonce_len = 0;
    char *text = NULL;
    static const char context[] = "numrpc-admin-v1"; /* with its NUL, as the server */
    control_conn c;
    int rc = control_open(&c, server, err);
    if (rc == 0 && secret_file) rc = read_secret(secret_file, secret, sizeof secret, &secret_len, err);
    /* Step 1: the server's one-use random challenge. */
    if (rc == 0) {
        wire_begin(&c.w, PROTO_ADMIN, 1);
        rc = wire_put_u32(&c.w, 1, err);
        if (rc == 0) rc = wire_end(&c.w, err);
    }
    if (rc == 0) rc = read_reply(&c, 1, err);
    if (rc == 0) rc = wire_get_opaque(&c.r, &nonce, &nonce_len, 256, err);
    if (rc == 0) rc = wire_expect_end(&c.r, err);
    /* Step 2: the command and HMAC-SHA256(secret, context | nonce | command). */
    if (rc == 0) {
        hmac_sha256(secret, secret_len, context, sizeof context, nonce, nonce_len, command, strlen(command), mac);
        wire_begin(&c.w, PROTO_ADMIN, 2);
        rc = wire_put_u32(&c.w, 2, err);
        if (rc == 0) rc = wire_put_string(&c.w, command, err);
        if (rc == 0) rc = wire_put_opaque(&c.w, mac, sizeof mac, err);
        if (rc == 0) rc = wire_end(&c.w, err);
    }
    if (rc == 0) rc = read_reply(&c, 2, err);
    if (rc == 0) rc = wire_get_string(&c.r, &text, MARSHAL_MAX_STRING, err);
    if (rc == 0) rc = wire_expect_end(&c.r, err);
    if (rc == 0) printf("%s\n", text);
    memset(secret, 0, sizeof secret);
    free(nonce);
    free(text);
    control_close(&c);
    return rc;
}

int cli_admin(int argc, char **argv)
{
    const char *server = NULL, *secret_file = getenv("NUMRPC_ADMIN_SECRET_FILE");
    int i = 0;
    for (; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        if (strcmp(argv[i], "--server") == 0) server = argv[i + 1];
        else if (strcmp(argv[i], "--secret-file") == 0) secret_file = argv[i + 1];
        else break;
    }
    char command[1100];
    if (server && i + 1 == argc && strcmp(argv[i], "list") == 0)
        snprintf(command, sizeof command, "list");
    else if (server && i + 2 == argc && (strcmp(argv[i], "register") == 0 || strcmp(argv[i], "unregister") == 0))
        snprintf(command, sizeof command, "%s %.1000s", argv[i], argv[i + 1]);
    else {
        fprintf(stderr, "usage: numrpc admin --server HOST:PORT [--secret-file FILE] register MODULE.so\n"
                        "       numrpc admin --server HOST:PORT [--secret-file FILE] unregister MODULE\n"
                        "       numrpc admin --server HOST:PORT [--secret-file FILE] list\n"
                        "MODULE.so must already be in the server's stub directory (a file name there).\n"
                        "The secret file defaults to $NUMRPC_ADMIN_SECRET_FILE.\n");
        return 2;
    }
    err_t err;
    if (secret_file == NULL) {
        err_set(&err, NUMRPC_EAUTH, "no secret: give --secret-file FILE or set NUMRPC_ADMIN_SECRET_FILE");
        return fail("admin", &err);
    }
    if (remote_admin(server, secret_file, command, &err) != 0) return fail("admin", &err);
    return 0;
}
