/* cli_status.c -- `numrpc status [--json] HOST:PORT` (a server's counters as
 * a table or JSON) and `numrpc admin --server HOST:PORT ...` (remote
 * administration: challenge-response over a shared secret, never sent). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "cli.h"
#include "cli_conn.h"
#include "hmac.h"
#include "msg.h"
#include "msg_control.h"
#include "sock.h"
#include "tokens.h"


/* ---- numrpc status ---- */

typedef msg_status_routine routine_row;
typedef msg_status status_reply;

static void free_status(status_reply *s)
{
    msg_status_free(s);
}

/* A server with tokens answers STATUS to a token with the `status` right:
 * NUMRPC_TOKEN_FILE's, proven first (its AUTH goes with the STATUS). */
int cli_server_status(const char *server, int connect_ms, int io_ms, msg_status *s, err_t *err)
{
    msg_conn c;
    uint32_t id = 3, auth_id = 2;
    int proving = 0;
    msg_hello hello = {.version = PROTO_VERSION, .packet_size = PROTO_DEFAULT_PACKET, .peer = "numrpc status"};
    memset(s, 0, sizeof *s);
    int rc = cli_conn_open(&c, server, connect_ms, io_ms, err); /* TLS with NUMRPC_TLS_CA */
    if (rc == 0) rc = auth_client_hello_file(&c, getenv("NUMRPC_TOKEN_FILE"), &hello, 1, auth_id, &proving, err);
    if (rc == 0) rc = msg_write_status(&c.writer, id, err);
    if (rc == 0 && proving) rc = auth_client_finish(&c, auth_id, err);
    if (rc == 0) rc = msg_read_status_reply(&c.reader, id, c.label, s, err);
    msg_conn_free(&c);
    return rc;
}

const char *cli_security_words(const msg_status *s)
{
    if (!s->has_security) return "not said (a server older than TLS and tokens)";
    switch (s->security & (MSG_STATUS_TLS | MSG_STATUS_TOKENS)) {
    case MSG_STATUS_TLS | MSG_STATUS_TOKENS: return "TLS, tokens required";
    case MSG_STATUS_TLS: return "TLS, no tokens";
    case MSG_STATUS_TOKENS: return "plain TCP (no TLS), tokens required";
    default: return "plain TCP (no TLS), no tokens";
    }
}

/* Names are identifiers, but a server is not to be trusted with JSON. */
void cli_json_string(const char *s)
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
    cli_json_string(server);
    printf(", \"server\": ");
    cli_json_string(s->server);
    printf(",\n \"uptime_seconds\": %.3f, \"load\": [%.2f, %.2f, %.2f],\n", s->uptime, s->load[0], s->load[1],
           s->load[2]);
    printf(" \"workers\": %u, \"max_workers\": %u, \"worker_restarts\": %llu,\n", s->workers, s->max_workers,
           (unsigned long long)s->restarts);
    printf(" \"calls_in_flight\": %u, \"calls_queued\": %u, \"connections\": %u, \"draining\": %s,\n",
           s->in_flight, s->queued, s->connections, s->draining ? "true" : "false");
    if (s->has_security)
        printf(" \"tls\": %s, \"tokens\": %s,\n", s->security & MSG_STATUS_TLS ? "true" : "false",
               s->security & MSG_STATUS_TOKENS ? "true" : "false");
    if (s->has_handles)
        printf(" \"handles\": %llu, \"handle_bytes\": %llu,\n", (unsigned long long)s->handles,
               (unsigned long long)s->handle_bytes);
    printf(" \"routines\": [");
    for (uint32_t i = 0; i < s->nroutines; i++) {
        const routine_row *r = &s->rows[i];
        printf("%s\n  {\"name\": ", i ? "," : "");
        cli_json_string(r->name);
        printf(", \"module\": ");
        cli_json_string(r->module);
        if (s->has_origins) {
            printf(", \"origin\": ");
            cli_json_string(r->origin);
        }
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

/* Where each module's routines came from (servers that say it): one line
 * per module, in the rows' order. */
static void print_origins(const status_reply *s)
{
    if (!s->has_origins) return;
    printf("\n%-12s %s\n", "MODULE", "ORIGIN");
    for (uint32_t i = 0; i < s->nroutines; i++) {
        int seen = 0;
        for (uint32_t j = 0; j < i && !seen; j++) seen = strcmp(s->rows[j].module, s->rows[i].module) == 0;
        if (!seen) printf("%-12s %s\n", s->rows[i].module, s->rows[i].origin);
    }
}

void cli_print_status(const char *server, const msg_status *s)
{
    long up = (long)s->uptime;
    printf("%s at %s: up %ldd %02ld:%02ld:%02ld, load %.2f %.2f %.2f%s\n", s->server, server, up / 86400,
           up / 3600 % 24, up / 60 % 60, up % 60, s->load[0], s->load[1], s->load[2],
           s->draining ? ", SHUTTING DOWN" : "");
    printf("workers %u (at most %u), %llu restarted; calls in flight %u, queued %u; connections %u\n", s->workers,
           s->max_workers, (unsigned long long)s->restarts, s->in_flight, s->queued, s->connections);
    if (s->has_security) printf("security: %s\n", cli_security_words(s));
    if (s->has_handles) {
        char bytes[32];
        human_bytes(s->handle_bytes, bytes, sizeof bytes);
        printf("data handles: %llu, %s\n", (unsigned long long)s->handles, bytes);
    }
    putchar('\n');
    printf("%-20s %-12s %-16s %9s %7s %10s %10s %9s %9s\n", "ROUTINE", "MODULE", "VERSION", "CALLS", "ERRORS",
           "BYTES IN", "BYTES OUT", "MEAN", "P99");
    for (uint32_t i = 0; i < s->nroutines; i++) {
        const routine_row *r = &s->rows[i];
        char in[32], out[32], mean[32], p99[32], name[40];
        human_bytes(r->bytes_in, in, sizeof in);
        human_bytes(r->bytes_out, out, sizeof out);
        human_seconds(r->calls ? r->total_s / (double)r->calls : 0, mean, sizeof mean);
        human_seconds(r->p99_s, p99, sizeof p99);
        if (snprintf(name, sizeof name, "%s%s", r->name, r->offered ? "" : " (old)") >= (int)sizeof name)
            name[sizeof name - 1] = '\0'; /* a long name is cut to its column */
        printf("%-20s %-12s %016llx %9llu %7llu %10s %10s %9s %9s\n", name, r->module, (unsigned long long)r->hash,
               (unsigned long long)r->calls, (unsigned long long)r->errors, in, out, mean, p99);
    }
    print_origins(s);
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
    if (cli_server_status(first, CLI_CONNECT_MS, CLI_IO_MS, &s, &err) != 0) return cli_fail("status", &err);
    if (json) print_json(first, &s);
    else cli_print_status(first, &s);
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

int cli_remote_admin(const char *server, const char *secret_file, const char *command, int labelled, err_t *err)
{
    uint8_t secret[4096], mac[HMAC_SHA256_BYTES], *nonce = NULL;
    size_t secret_len = 0;
    uint32_t nonce_len = 0;
    char *text = NULL;
    static const char context[] = "numrpc-admin-v1"; /* with its NUL, as the server */
    msg_conn c;
    int rc = cli_conn_open(&c, server, CLI_CONNECT_MS, CLI_IO_MS, err); /* TLS with NUMRPC_TLS_CA */
    if (rc == 0 && secret_file) rc = read_secret(secret_file, secret, sizeof secret, &secret_len, err);
    /* Step 1: the server's one-use random challenge. */
    if (rc == 0) rc = msg_write_admin_challenge(&c.writer, 1, err);
    if (rc == 0) rc = msg_read_admin_challenge_reply(&c.reader, 1, c.label, &nonce, &nonce_len, err);
    /* Step 2: the command and HMAC-SHA256(secret, context | nonce | command). */
    if (rc == 0) {
        hmac_sha256(secret, secret_len, context, sizeof context, nonce, nonce_len, command, strlen(command), mac);
        rc = msg_write_admin_command(&c.writer, 2, command, mac, err);
    }
    if (rc == 0) rc = msg_read_admin_command_reply(&c.reader, 2, c.label, &text, err);
    if (rc == 0) printf("%s%s%s\n", labelled ? server : "", labelled ? ": " : "", text);
    memset(secret, 0, sizeof secret);
    free(nonce);
    free(text);
    msg_conn_free(&c);
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
    char command[CLI_ADMIN_COMMAND_MAX];
    if (server == NULL || cli_admin_command(argc - i, argv + i, command) != 0) {
        fprintf(stderr, "usage: numrpc admin --server HOST:PORT [--secret-file FILE] register MODULE.so\n"
                        "       numrpc admin --server HOST:PORT [--secret-file FILE] unregister MODULE\n"
                        "       numrpc admin --server HOST:PORT [--secret-file FILE] list\n"
                        "       numrpc admin --all [--metaserver HOST:PORT] [--secret-file FILE] COMMAND...\n"
                        "MODULE.so must already be in the server's stub directory (a file name there).\n"
                        "The secret file defaults to $NUMRPC_ADMIN_SECRET_FILE.\n");
        return 2;
    }
    err_t err;
    if (secret_file == NULL) {
        err_set(&err, NUMRPC_EAUTH, "no secret: give --secret-file FILE or set NUMRPC_ADMIN_SECRET_FILE");
        return cli_fail("admin", &err);
    }
    if (cli_remote_admin(server, secret_file, command, 0, &err) != 0) return cli_fail("admin", &err);
    return 0;
}

int cli_admin_command(int argc, char **argv, char command[CLI_ADMIN_COMMAND_MAX])
{
    if (argc == 1 && strcmp(argv[0], "list") == 0)
        snprintf(command, CLI_ADMIN_COMMAND_MAX, "list");
    else if (argc == 2 && (strcmp(argv[0], "register") == 0 || strcmp(argv[0], "unregister") == 0))
        snprintf(command, CLI_ADMIN_COMMAND_MAX, "%s %.1000s", argv[0], argv[1]);
    else
        return -1;
    return 0;
}
