/* http_port.h -- the HTTP port of numrpc-server and numrpc-metaserver
 * (--http-port; http_port.c): libmicrohttpd in a thread of its own. */
#ifndef NUMRPC_COMMON_HTTP_PORT_H
#define NUMRPC_COMMON_HTTP_PORT_H

#include "error.h"
#include "strbuf.h"
#include "tokens.h"

/* Bounds of the port (docs/security.md, "The HTTP port"): a request must
 * arrive whole within HTTP_PORT_TIMEOUT_S of the connection's start (or of
 * the previous reply's end), and its reply be taken within as long again,
 * else the connection is dropped; connections at once, and from one address
 * (beyond, closed at once); bytes of a request's line and headers; bytes of
 * a reply. */
#define HTTP_PORT_TIMEOUT_S 10
#define HTTP_PORT_TIMEOUT_MAX_S 3600
#define HTTP_PORT_CONNECTIONS 128
#define HTTP_PORT_PER_ADDRESS 8
#define HTTP_PORT_REQUEST_BYTES (32u << 10)
#define HTTP_PORT_REPLY_BYTES (16u << 20)
/* Descriptors the port may hold: two per connection (its own and the
 * deadline's duplicate), the listening socket and a few of the library's. */
#define HTTP_PORT_FDS (2 * HTTP_PORT_CONNECTIONS + 8)

/* One page: render appends it to *out (a {0} strbuf the port frees) and
 * returns 0, or -1 (the request gets 500).  It runs in the port's thread,
 * so it reads only what is safe to read from there. */
typedef struct http_route {
    const char *path;         /* "/metrics"                               */
    const char *content_type;
    const char *policy;       /* Content-Security-Policy (NULL: "default-src 'none'") */
    int (*render)(void *owner, strbuf *out);
} http_route;

typedef struct http_port_options {
    const char *bind_addr; /* as the main port's --bind                    */
    int port;              /* 0 = a free port                              */
    const char *port_file; /* "" or NULL = none; else the port, once it serves */
    /* The main port's TLS files ("" or NULL = plain HTTP): HTTPS with the
     * same certificate; with a client CA, a client certificate it signed. */
    const char *tls_cert, *tls_key, *tls_client_ca;
    int allow_insecure;       /* beyond loopback with neither TLS nor tokens */
    int timeout_s;            /* request and reply limits (0: HTTP_PORT_TIMEOUT_S) */
    const token_table *tokens; /* copied (NULL or empty: anyone may read)   */
    const http_route *routes; /* the caller's, for the port's life          */
    int nroutes;
    void *owner;              /* given to render and log                    */
    void (*log)(void *owner, const char *line); /* refusals (NULL = none)   */
} http_port_options;

typedef struct http_port http_port;

/* Listens as o says and serves GET on the routes from a thread of its own
 * (every signal blocked there); *port_out is the port.  A port beyond
 * loopback with neither TLS nor tokens is refused (as the main port's),
 * and so is a build without libmicrohttpd: NULL and the error. */
http_port *http_port_start(const http_port_options *o, int *port_out, err_t *err);
/* Replaces the port's tokens with a copy of t (a reload of the token file). */
void http_port_set_tokens(http_port *p, const token_table *t);
/* Stops the thread and closes the port (NULL: nothing); after it returns,
 * no render runs. */
void http_port_stop(http_port *p);

#endif
