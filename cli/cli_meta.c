/* cli_meta.c -- `numrpc status --metaserver HOST:PORT [--json]`: what a
 * metaserver knows (servers, routines, load, throughput, prediction error,
 * each server's TLS identity), then what each server's own STATUS says of its
 * security; NUMRPC_TOKEN_FILE's token is proven first when it is set, over TLS
 * when NUMRPC_TLS_CA is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "cli.h"
#include "cli_conn.h"
#include "cli_meta.h"
#include "msg.h"
#include "msg_meta.h"
#include "sock.h"
#include "tls.h"

#define CONNECT_MS 5000
#define IO_MS 10000
/* Each listed server is asked for its STATUS within these. */
#define SERVER_CONNECT_MS 2000
#define SERVER_IO_MS 5000
/* The metaserver's table holds 64 servers (META_MAX_SERVERS). */
#define MAX_LISTED 64
#define LABEL_MAX CLI_LABEL_MAX

int cli_meta_wanted(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--metaserver") == 0 || strncmp(argv[i], "--metaserver=", 13) == 0) return 1;
    return 0;
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

/* The servers a META_STATUS JSON reply lists: the "server" of each entry
 * of its "servers" array. The text came from the network: a label is kept
 * only when it is short, of host:port characters and parses as host:port.
 * Returns how many were put in labels. */
static int listed_servers(const char *json, char labels[][LABEL_MAX], int max)
{
    static const char entry[] = "{\"server\":\"";
    const char *p = strstr(json, "\"servers\":["), *end = p ? strstr(p, "],\"throughput\":") : NULL;
    int n = 0;
    if (end == NULL) return 0;
    for (p = strstr(p, entry); p && p < end && n < max; p = strstr(p, entry)) {
        p += sizeof entry - 1;
        size_t len = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.:-[]_");
        char host[LABEL_MAX];
        int port;
        err_t err;
        if (p[len] != '"' || len == 0 || len >= LABEL_MAX) continue;
        snprintf(labels[n], LABEL_MAX, "%.*s", (int)len, p);
        if (sock_parse_hostport(labels[n], host, sizeof host, &port, &err) == 0) n++;
    }
    return n;
}

int cli_meta_servers(const char *where, char labels[][CLI_LABEL_MAX], int max, err_t *err)
{
    char *listing = NULL;
    int rc = fetch_status(where, 1, &listing, err);
    if (rc != 0) return rc;
    int n = listed_servers(listing, labels, max);
    free(listing);
    return n;
}

/* Each listed server's security, from its own STATUS (a server that does
 * not answer, or refuses the token, is shown with the reason); JSON: an
 * array of objects, else a table. */
static void print_security(char labels[][LABEL_MAX], int n, int json)
{
    if (json) printf(",\"server_security\":[");
    else printf("\nSECURITY (each server's own STATUS, asked now)\n%-22s %s\n", "SERVER", "SECURITY");
    for (int i = 0; i < n; i++) {
        msg_status s;
        err_t err;
        int rc = cli_server_status(labels[i], SERVER_CONNECT_MS, SERVER_IO_MS, &s, &err);
        if (json) {
            printf("%s{\"server\":\"%s\",", i ? "," : "", labels[i]);
            if (rc == 0 && s.has_security)
                printf("\"tls\":%s,\"tokens\":%s}", s.security & MSG_STATUS_TLS ? "true" : "false",
                       s.security & MSG_STATUS_TOKENS ? "true" : "false");
            else {
                printf("\"tls\":null,\"tokens\":null,\"error\":");
                cli_json_string(rc == 0 ? cli_security_words(&s) : err.detail);
                putchar('}');
            }
        } else if (rc == 0) {
            printf("%-22s %s\n", labels[i], cli_security_words(&s));
        } else {
            printf("%-22s unknown: %s: %s (%s)\n", labels[i], numrpc_strerror(err.code), err.detail,
                   numrpc_errname(err.code));
        }
        if (rc == 0) msg_status_free(&s);
    }
    if (json) printf("]");
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
    char *text = NULL, *listing = NULL;
    /* The table for people, then the JSON for the list of servers (the
     * JSON reply serves as both). */
    if ((!json && fetch_status(where, 0, &text, &err) != 0) || fetch_status(where, 1, &listing, &err) != 0) {
        fprintf(stderr, "numrpc status: %s: %s (%s)\n", numrpc_strerror(err.code), err.detail, numrpc_errname(err.code));
        free(text);
        return 1;
    }
    static char labels[MAX_LISTED][LABEL_MAX];
    int n = listed_servers(listing, labels, MAX_LISTED);
    if (json) {
        /* The metaserver's object with one more member: its last '}' ends it. */
        char *last = strrchr(listing, '}');
        if (last == NULL) {
            fprintf(stderr, "numrpc status: %s: the metaserver's JSON is not an object\n", where);
            free(listing);
            return 1;
        }
        printf("%.*s", (int)(last - listing), listing);
        print_security(labels, n, 1);
        printf("%s", last);
    } else {
        fputs(text, stdout);
        print_security(labels, n, 0);
    }
    free(text);
    free(listing);
    return 0;
}
