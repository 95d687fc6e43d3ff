/* cli_meta.c -- `numrpc status --metaserver HOST:PORT [--json]`: what a
 * metaserver knows (servers, routines, load, throughput, prediction error,
 * each server's TLS identity); NUMRPC_TOKEN_FILE's token is proven first when
 * it is set, over TLS when NUMRPC_TLS_CA is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "cli_meta.h"
#include "msg.h"
#include "msg_meta.h"
#include "sock.h"
#include "tls.h"

#define CONNECT_MS 5000
#define IO_MS 10000

int cli_meta_wanted(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--metaserver") == 0 || strncmp(argv[i], "--metaserver=", 13) == 0) return 1;
    return 0;
}

int cli_conn_open(msg_conn *c, const char *where, int connect_ms, int io_ms, err_t *err)
{
    static tls_context *tls; /* made once; the command's life */
    char host[256];
    int port = 0;
    const char *ca = getenv("NUMRPC_TLS_CA"), *cert = getenv("NUMRPC_TLS_CERT"), *key = getenv("NUMRPC_TLS_KEY");
    memset(c, 0, sizeof *c); /* msg_conn_free is safe on it */
    int rc = sock_parse_hostport(where, host, sizeof host, &port, err);
    if (rc == 0 && ca && *ca && tls == NULL &&
        (tls = tls_client_context_new(ca, cert && *cert ? cert : NULL, key && *key ? key : NULL, err)) == NULL)
        rc = err->code;
    if (rc == 0) rc = msg_conn_open_tls(c, tls, NULL, host, port, connect_ms, io_ms, PROTO_DEFAULT_PACKET, err);
    return rc;
}

/* Asks for the status text (format 0) or JSON (1) into a malloc'd *out. */
static int fetch_status(const char *where, uint32_t format, char **out, err_t *err)
{
    int proving = 0;
    msg_conn c;
    msg_hello hello = {.version = PROTO_VERSION, .packet_size = PROTO_DEFAULT_PACKET, .peer = "numrpc status"};
    int rc = cli_conn_open(&c, where, CONNECT_MS, IO_MS, err);
    if (rc != 0) {
        msg_conn_free(&c);
        return rc;
    }
    uint32_t hello_id = msg_conn_next_id(&c), auth_id = msg_conn_next_id(&c), id = msg_conn_next_id(&c);
    rc = auth_client_hello_file(&c, getenv("NUMRPC_TOKEN_FILE"), &hello, hello_id, auth_id, &proving, err);
    if (rc == 0) rc = msg_write_meta_status(&c.writer, id, format, err);
    if (rc == 0 && proving) rc = auth_client_finish(&c, auth_id, err);
    if (rc == 0) {
        rc = msg_read_reply(&c.reader, id, where, err);
        /* An answer, but not a metaserver's (a refused token is one). */
        if (rc != 0 && rc != NUMRPC_EIO && rc != NUMRPC_ETIMEDOUT && rc != NUMRPC_EAUTH) {
            err_t e = *err;
            int named = strncmp(e.detail, where, strlen(where)) == 0;
            rc = err_set(err, NUMRPC_EPROTO, "%s%s%s (is it a metaserver?)", named ? "" : where, named ? "" : ": ",
                         e.detail);
        }
    }
    if (rc == 0) rc = msg_read_meta_status_reply(&c.reader, out, err);
    msg_conn_free(&c);
    return rc;
}

int cli_meta_status(int argc, char **argv)
{
    const char *where = NULL;
    int json = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) json = 1;
        else if (strcmp(argv[i], "--metaserver") == 0 && i + 1 < argc) where = argv[++i];
        else if (strncmp(argv[i], "--metaserver=", 13) == 0) where = argv[i] + 13;
        else {
            fprintf(stderr, "numrpc status: unexpected argument \"%s\"\n"
                            "usage: numrpc status --metaserver HOST:PORT [--json]\n", argv[i]);
            return 2;
        }
    }
    if (where == NULL) {
        fprintf(stderr, "usage: numrpc status --metaserver HOST:PORT [--json]\n");
        return 2;
    }
    err_t err;
    char *text = NULL;
    if (fetch_status(where, json ? 1 : 0, &text, &err) != 0) {
        fprintf(stderr, "numrpc status: %s: %s\n", numrpc_strerror(err.code), err.detail);
        return 1;
    }
    fputs(text, stdout);
    free(text);
    return 0;
}
