/* cli_meta.c -- `numrpc status --metaserver HOST:PORT [--json]`: what a
 * metaserver knows (servers, routines, load, throughput, prediction error). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_meta.h"
#include "marshal.h"
#include "protocol.h"
#include "sock.h"
#include "wire.h"

#define CONNECT_MS 5000
#define IO_MS 10000

int cli_meta_wanted(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--metaserver") == 0 || strncmp(argv[i], "--metaserver=", 13) == 0) return 1;
    return 0;
}

/* Asks for the status text (format 0) or JSON (1) into a malloc'd *out. */
static int fetch_status(const char *where, uint32_t format, char **out, err_t *err)
{
    char host[256];
    int port = 0, fd = -1;
    wire_reader r = {0};
    wire_writer w = {0};
    uint32_t type, id, status;
    char *detail = NULL;
    int rc = sock_parse_hostport(where, host, sizeof host, &port, err);
    if (rc == 0) {
        fd = sock_connect(host, port, CONNECT_MS, err);
        if (fd < 0) rc = fd;
    }
    if (rc == 0) {
        sock_set_timeouts(fd, IO_MS, IO_MS);
        rc = wire_writer_init(&w, fd, PROTO_DEFAULT_PACKET, err);
    }
    if (rc == 0) rc = wire_reader_init(&r, fd, PROTO_MAX_PACKET, err);
    if (rc == 0) {
        wire_begin(&w, PROTO_META_STATUS, 1);
        rc = wire_put_u32(&w, format, err);
    }
    if (rc == 0) rc = wire_end(&w, err);
    if (rc == 0) rc = wire_next_message(&r, &type, &id, err);
    if (rc == 0 && type != PROTO_REPLY)
        rc = err_set(err, NUMRPC_EPROTO, "%s answered with message type %u: is it a metaserver?", where, type);
    if (rc == 0) rc = wire_get_u32(&r, &status, err);
    if (rc == 0) rc = wire_get_string(&r, &detail, 4096, err);
    if (rc == 0 && (int32_t)status != NUMRPC_OK)
        rc = err_set(err, NUMRPC_EPROTO, "%s: %s (is it a metaserver?)", where, detail);
    if (rc == 0) rc = wire_get_string(&r, out, 64u << 20, err);
    free(detail);
    wire_reader_free(&r);
    wire_writer_free(&w);
    if (fd >= 0) close(fd);
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
