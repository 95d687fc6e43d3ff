/* main.c -- numrpc-metaserver's entry: options, the listening socket, a
 * thread per connection, the reaper that drops silent servers, and SIGHUP. */
#include "metaserver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "exposure.h"
#include "http_port.h"
#include "msg.h"
#include "sock.h"
#include "tls.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: numrpc-metaserver --port P [options]\n"
            "  --port P            TCP port (0 = pick a free one)\n"
            "  --bind ADDR         address to listen on (default 127.0.0.1)\n"
            "  --token-file F      tokens (name secret rights, a 0600 file): every connection\n"
            "                      proves one; join, report, call (query), status rights;\n"
            "                      read again on SIGHUP\n"
            "  --tls-cert F --tls-key F  TLS 1.3 on every connection (PEM certificate chain\n"
            "                      and key); plain clients are refused\n"
            "  --tls-client-ca F   with TLS, require client certificates signed by this CA\n"
            "  --allow-insecure    listen beyond loopback without authentication: anyone\n"
            "                      who reaches the port may join, report and query\n"
            "  --max-servers-per-identity N  servers one token, and one address, may\n"
            "                      hold (default 16 of the table's 64; the last 16 go one\n"
            "                      per token and address)\n"
            "  --max-reports-per-minute N  reports of finished calls one token (or\n"
            "                      address) may send a minute; beyond, dropped (default 6000)\n"
            "  --port-file FILE    write the chosen port to FILE\n"
            "  --drop-after SECS   drop a server silent this long (default 3)\n"
            "  --overload-queue N  an `overload` event when a server queues more than N\n"
            "                      requests (default 0: more than its slots)\n"
            "  --lease-ms MS       how long a client may reuse an answer (default 2000)\n"
            "  --max-connections N open connections at most; beyond, EBUSY (default 1024)\n"
            "  --idle-timeout SECS close a connection idle this long (default 600)\n"
            "  --http-port P       serve the status page (/), /status.json and Prometheus\n"
            "                      /metrics over HTTP on port P of --bind (0 = a free port;\n"
            "                      default: off); HTTPS with --tls-cert; with --token-file,\n"
            "                      a `status` token (Authorization: Bearer NAME:SECRET)\n"
            "  --http-port-file F  write the HTTP port chosen to F once it serves\n"
            "  --http-timeout S    an HTTP request must arrive whole within S seconds,\n"
            "                      and its reply be taken within S more (default 10)\n"
            "  --quiet             no log lines\n"
            "Servers join with numrpc-server --metaserver HOST:PORT; clients set\n"
            "NUMRPC_METASERVER=HOST:PORT.  See docs/metaserver.md.\n");
}

static int parse_options(meta_options *o, int argc, char **argv, err_t *err)
{
    memset(o, 0, sizeof *o);
    snprintf(o->bind_addr, sizeof o->bind_addr, "127.0.0.1");
    o->port = -1;
    o->drop_after = 3;
    o->lease_ms = 2000;
    o->max_connections = 1024;
    o->idle_timeout = 600;
    o->max_per_identity = META_PER_IDENTITY_DEFAULT;
    o->reports_per_minute = META_REPORTS_PER_MINUTE_DEFAULT;
    o->http_port = -1;
    o->http_timeout = HTTP_PORT_TIMEOUT_S;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (strcmp(a, "--quiet") == 0) {
            o->quiet = 1;
            continue;
        }
        if (strcmp(a, "--allow-insecure") == 0) {
            o->allow_insecure = 1;
            continue;
        }
        if (strcmp(a, "--help") == 0) return 1;
        if (v == NULL) return err_set(err, NUMRPC_EINVAL, "%s: missing value (or unknown option)", a);
        i++;
        if (strcmp(a, "--port") == 0) {
            long p = strtol(v, &end, 10);
            if (*end || p < 0 || p > 65535) return err_set(err, NUMRPC_EINVAL, "--port %s: want 0..65535", v);
            o->port = (int)p;
        } else if (strcmp(a, "--bind") == 0) {
            snprintf(o->bind_addr, sizeof o->bind_addr, "%s", v);
        } else if (strcmp(a, "--token-file") == 0) {
            snprintf(o->token_file, sizeof o->token_file, "%s", v);
        } else if (strcmp(a, "--tls-cert") == 0) {
            snprintf(o->tls_cert, sizeof o->tls_cert, "%s", v);
        } else if (strcmp(a, "--tls-key") == 0) {
            snprintf(o->tls_key, sizeof o->tls_key, "%s", v);
        } else if (strcmp(a, "--tls-client-ca") == 0) {
            snprintf(o->tls_client_ca, sizeof o->tls_client_ca, "%s", v);
        } else if (strcmp(a, "--max-servers-per-identity") == 0) {
            long n = strtol(v, &end, 10);
            if (*end || n < 1 || n > META_MAX_SERVERS)
                return err_set(err, NUMRPC_EINVAL, "--max-servers-per-identity %s: want 1..%d", v, META_MAX_SERVERS);
            o->max_per_identity = (int)n;
        } else if (strcmp(a, "--overload-queue") == 0) {
            long n = strtol(v, &end, 10);
            if (*end || n < 0 || n > 1000000)
                return err_set(err, NUMRPC_EINVAL, "--overload-queue %s: want 0..1000000 (0 = a server's slots)", v);
            o->overload_queue = (int)n;
        } else if (strcmp(a, "--max-reports-per-minute") == 0) {
            long n = strtol(v, &end, 10);
            if (*end || n < 1 || n > 1000000)
                return err_set(err, NUMRPC_EINVAL, "--max-reports-per-minute %s: want 1..1000000", v);
            o->reports_per_minute = (int)n;
        } else if (strcmp(a, "--http-port") == 0) {
            long p = strtol(v, &end, 10);
            if (*end || p < 0 || p > 65535) return err_set(err, NUMRPC_EINVAL, "--http-port %s: want 0..65535", v);
            o->http_port = (int)p;
        } else if (strcmp(a, "--http-timeout") == 0) {
            long t = strtol(v, &end, 10);
            if (*end || t < 1 || t > HTTP_PORT_TIMEOUT_MAX_S)
                return err_set(err, NUMRPC_EINVAL, "--http-timeout %s: want 1..%d seconds", v, HTTP_PORT_TIMEOUT_MAX_S);
            o->http_timeout = (int)t;
        } else if (strcmp(a, "--http-port-file") == 0) {
            snprintf(o->http_port_file, sizeof o->http_port_file, "%s", v);
        } else if (strcmp(a, "--port-file") == 0) {
            snprintf(o->port_file, sizeof o->port_file, "%s", v);
        } else if (strcmp(a, "--drop-after") == 0) {
            double d = strtod(v, &end);
            if (*end || !(d >= 0.1 && d <= 3600))
                return err_set(err, NUMRPC_EINVAL, "--drop-after %s: want seconds from 0.1 to 3600", v);
            o->drop_after = d;
        } else if (strcmp(a, "--max-connections") == 0) {
            long n = strtol(v, &end, 10);
            if (*end || n < 1 || n > 65536)
                return err_set(err, NUMRPC_EINVAL, "--max-connections %s: want 1..65536", v);
            o->max_connections = (int)n;
        } else if (strcmp(a, "--idle-timeout") == 0) {
            double d = strtod(v, &end);
            if (*end || !(d >= 0.1 && d <= 86400))
                return err_set(err, NUMRPC_EINVAL, "--idle-timeout %s: want seconds from 0.1 to 86400", v);
            o->idle_timeout = d;
        } else if (strcmp(a, "--lease-ms") == 0) {
            long l = strtol(v, &end, 10);
            if (*end || l < 0 || l > 3600000) return err_set(err, NUMRPC_EINVAL, "--lease-ms %s: want 0..3600000", v);
            o->lease_ms = (int)l;
        } else {
            return err_set(err, NUMRPC_EINVAL, "unknown option %s", a);
        }
    }
    if (o->port < 0) return err_set(err, NUMRPC_EINVAL, "--port is required");
    if ((o->tls_cert[0] == '\0') != (o->tls_key[0] == '\0'))
        return err_set(err, NUMRPC_EINVAL, "--tls-cert and --tls-key go together");
    if (o->tls_client_ca[0] && !o->tls_cert[0])
        return err_set(err, NUMRPC_EINVAL, "--tls-client-ca needs --tls-cert and --tls-key");
    return 0;
}

typedef struct conn_arg {
    int fd;
    char peer[64];
    double idle_timeout;
} conn_arg;

static atomic_int open_connections; /* one thread each */

static void *conn_main(void *p)
{
    conn_arg *a = p;
    serve_connection(a->fd, a->peer, a->idle_timeout);
    free(a);
    atomic_fetch_sub(&open_connections, 1);
    return NULL;
}

/* Beyond --max-connections: a REPLY with call id 0 says why, then close. */
static void refuse(int fd, int limit)
{
    msg_conn c;
    err_t err;
    char detail[128];
    snprintf(detail, sizeof detail, "metaserver at its connection limit (%d connections)", limit);
    table_note_error("refused a connection: %s", detail);
    sock_set_timeouts(fd, 200, 0); /* never held by a client that does not read */
    if (msg_conn_init(&c, PROTO_MIN_PACKET, &err) != 0) {
        close(fd);
        return;
    }
    msg_conn_attach(&c, transport_tcp(fd), "refused");
    msg_reply_simple(&c.writer, 0, NUMRPC_EBUSY, detail, &err);
    msg_conn_free(&c); /* closes fd */
}

static void *reaper_main(void *p)
{
    const meta_options *o = p;
    double period = o->drop_after / 10 < 0.1 ? o->drop_after / 10 : 0.1;
    struct timespec ts = {0, (long)(period * 1e9)};
    for (;;) {
        nanosleep(&ts, NULL);
        table_reap();
    }
    return NULL;
}

/* What the reloading thread needs (main's, for the process's life). */
typedef struct reload_arg {
    const meta_options *opt;
    int listen_fd;
    sigset_t signals; /* SIGHUP, blocked in every thread */
} reload_arg;

/* Reads the token file again at each SIGHUP (as numrpc-server does). */
static void *reload_main(void *p)
{
    const reload_arg *r = p;
    for (;;) {
        int sig = 0;
        if (sigwait(&r->signals, &sig) != 0) continue;
        char summary[ERR_DETAIL_MAX + 64];
        int rc = rights_reload(r->opt, r->listen_fd, meta.tls != NULL, summary, sizeof summary);
        if (rc != 0) {
            fprintf(stderr, "numrpc-metaserver: SIGHUP: %s\n", summary);
        } else {
            web_reload_tokens(); /* the HTTP port's copy */
            if (!r->opt->quiet) {
                printf("tokens reloaded: %s\n", summary);
                fflush(stdout);
            }
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    static meta_options opt;
    err_t err;
    int rc = parse_options(&opt, argc, argv, &err);
    if (rc == 1) {
        usage(stdout);
        return 0;
    }
    if (rc != 0) {
        fprintf(stderr, "numrpc-metaserver: %s\n", err.detail);
        usage(stderr);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    /* SIGHUP waits for the reloading thread (every thread inherits the mask). */
    sigset_t hup;
    sigemptyset(&hup);
    sigaddset(&hup, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &hup, NULL);
    /* The tokens are read before anything listens (again on SIGHUP). */
    if (rights_load(&opt, &err) != 0) {
        fprintf(stderr, "numrpc-metaserver: %s\n", err.detail);
        return 2;
    }
    /* So are the certificates: a bad file stops the start, with its reason. */
    if (opt.tls_cert[0] &&
        (meta.tls = tls_server_context_new(opt.tls_cert, opt.tls_key, opt.tls_client_ca[0] ? opt.tls_client_ca : NULL,
                                           &err)) == NULL) {
        fprintf(stderr, "numrpc-metaserver: %s\n", err.detail);
        return 2;
    }
    int port = 0;
    int lfd = sock_listen(opt.bind_addr, opt.port, &port, &err);
    if (lfd < 0) {
        fprintf(stderr, "numrpc-metaserver: %s\n", err.detail);
        return 1;
    }
    /* Beyond loopback only with tokens or TLS, or when told to accept anyone. */
    exposure_guard guard = {
        .tokens_on = rights_on(), .tls_on = meta.tls != NULL, .allow_insecure = opt.allow_insecure};
    if (exposure_check(lfd, opt.bind_addr, &guard, &err) != 0) {
        fprintf(stderr, "numrpc-metaserver: %s\n", err.detail);
        return 2;
    }
    /* The HTTP port, its thread's signals blocked, before the port file
     * says the metaserver is ready. */
    table_init(&opt);
    for (int i = 0; i < META_MAX_SERVERS; i++) meta.servers[i].fd = -1;
    if (web_start(&opt, &err) != 0) {
        fprintf(stderr, "numrpc-metaserver: %s\n", err.detail);
        return 2;
    }
    if (opt.port_file[0]) {
        FILE *f = fopen(opt.port_file, "w");
        if (f == NULL) {
            fprintf(stderr, "numrpc-metaserver: cannot write %s\n", opt.port_file);
            return 1;
        }
        fprintf(f, "%d\n", port);
        fclose(f);
    }
    if (!opt.quiet) {
        printf("numrpc-metaserver listening on %s:%d (drop after %.1f s, lease %d ms, %s, %s)\n", opt.bind_addr,
               port, opt.drop_after, opt.lease_ms, rights_on() ? "tokens required" : "no tokens",
               !meta.tls ? "no TLS" : opt.tls_client_ca[0] ? "mutual TLS" : "TLS");
        fflush(stdout);
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    reload_arg reload = {.opt = &opt, .listen_fd = lfd, .signals = hup};
    if (pthread_create(&t, &attr, reaper_main, &opt) != 0 || pthread_create(&t, &attr, reload_main, &reload) != 0) {
        fprintf(stderr, "numrpc-metaserver: cannot start the reaper and reload threads\n");
        return 1;
    }
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        int fd = accept(lfd, (struct sockaddr *)&ss, &len);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE) {
                if (errno == EMFILE || errno == ENFILE) usleep(10000);
                continue;
            }
            fprintf(stderr, "numrpc-metaserver: accept: %s\n", strerror(errno));
            return 1;
        }
        sock_tune(fd);
        if (atomic_load(&open_connections) >= opt.max_connections) {
            refuse(fd, opt.max_connections);
            continue;
        }
        conn_arg *a = calloc(1, sizeof *a);
        if (a == NULL) {
            close(fd);
            continue;
        }
        a->fd = fd;
        a->idle_timeout = opt.idle_timeout;
        if (ss.ss_family == AF_INET)
            inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, a->peer, sizeof a->peer);
        else if (ss.ss_family == AF_INET6)
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, a->peer, sizeof a->peer);
        else
            snprintf(a->peer, sizeof a->peer, "unknown");
        atomic_fetch_add(&open_connections, 1);
        if (pthread_create(&t, &attr, conn_main, a) != 0) {
            atomic_fetch_sub(&open_connections, 1);
            close(fd);
            free(a);
        }
    }
}
