/* http_port.c -- the HTTP port on libmicrohttpd: the listening socket bound
 * like the main one, limits and deadlines, HTTPS, the token check, routing. */
#include "http_port.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "exposure.h"
#include "http_auth.h"
#include "sock.h"

#ifdef HAVE_MICROHTTPD

#include <gnutls/gnutls.h>
#include <microhttpd.h>

#define PEM_MAX (1u << 20) /* a certificate chain or key file, bytes at most */
#define SWEEP_MS 200       /* how often the deadlines are looked at          */

/* One open connection's deadline (libmicrohttpd's timeout is per idle gap:
 * a byte every few seconds kept a connection forever).  fd is a duplicate
 * of the connection's socket, so it names that socket until the connection
 * is closed, never a later one that reuses the number. */
typedef struct deadline {
    struct deadline *next, *prev;
    int fd;
    double due;  /* monotonic seconds (sock_now)                           */
    int dropped; /* shut down once already                                */
    char peer[48];
} deadline;

struct http_port {
    struct MHD_Daemon *daemon;
    http_port_options opt; /* strings borrowed: only used while starting */
    int tls, client_ca;
    char *pem[3];          /* certificate, key, client CA (kept while serving) */
    pthread_mutex_t lock;  /* guards tokens                                */
    token_table tokens;
    /* Deadlines: the list, guarded by dl_lock, swept by the watch thread. */
    double limit;          /* seconds a request (or its reply) may take    */
    pthread_mutex_t dl_lock;
    pthread_cond_t dl_wake;
    deadline *deadlines;
    int watching, stopping;
    pthread_t watch;
};

static void port_log(const http_port *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void port_log(const http_port *p, const char *fmt, ...)
{
    if (p->opt.log == NULL) return;
    char line[ERR_DETAIL_MAX + 128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    p->opt.log(p->opt.owner, line);
}

/* libmicrohttpd's own complaints go to the same log. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    const http_port *p = cls;
    if (p->opt.log == NULL) return;
    char line[ERR_DETAIL_MAX];
    vsnprintf(line, sizeof line, fmt, ap);
    line[strcspn(line, "\n")] = '\0';
    port_log(p, "http: %s", line);
}

/* The whole file at path, malloc'd and NUL-terminated; NULL and err. */
static char *read_pem(const char *path, err_t *err)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        err_set(err, NUMRPC_EINVAL, "--http-port: cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    char *text = malloc(PEM_MAX + 1);
    size_t n = text ? fread(text, 1, PEM_MAX + 1, f) : 0;
    int bad = ferror(f) || n > PEM_MAX;
    fclose(f);
    if (text == NULL || bad) {
        free(text);
        err_set(err, NUMRPC_EINVAL, "--http-port: %s is unreadable or over %u bytes", path, PEM_MAX);
        return NULL;
    }
    text[n] = '\0';
    return text;
}

static void free_port(http_port *p)
{
    for (int i = 0; i < 3; i++) {
        if (p->pem[i]) memset(p->pem[i], 0, strlen(p->pem[i])); /* the key among them */
        free(p->pem[i]);
    }
    tokens_free(&p->tokens);
    pthread_mutex_destroy(&p->lock);
    pthread_mutex_destroy(&p->dl_lock);
    pthread_cond_destroy(&p->dl_wake);
    free(p);
}

/* A copy of t's tokens (an empty table for NULL): 0, or -1 out of memory. */
static int copy_tokens(const token_table *t, token_table *out)
{
    out->items = NULL;
    out->count = 0;
    if (t == NULL || t->count == 0) return 0;
    out->items = malloc(t->count * sizeof *t->items);
    if (out->items == NULL) return -1;
    memcpy(out->items, t->items, t->count * sizeof *t->items);
    out->count = t->count;
    return 0;
}

void http_port_set_tokens(http_port *p, const token_table *t)
{
    token_table fresh, old;
    if (p == NULL || copy_tokens(t, &fresh) != 0) return; /* out of memory: the old ones stay */
    pthread_mutex_lock(&p->lock);
    old = p->tokens;
    p->tokens = fresh;
    pthread_mutex_unlock(&p->lock);
    tokens_free(&old);
}

/* Headers every answer carries: nothing cached, nothing sniffed or framed. */
static void common_headers(struct MHD_Response *r, const char *content_type, const char *policy)
{
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "Content-Security-Policy", policy ? policy : "default-src 'none'");
}

/* Queues a body (malloc'd text, taken) with status; MHD_NO on failure. */
static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, char *body, size_t len,
                              const char *content_type, const char *policy)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (r == NULL) {
        free(body);
        return MHD_NO;
    }
    common_headers(r, content_type, policy);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED) MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET");
    if (status == MHD_HTTP_UNAUTHORIZED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Basic realm=\"numrpc\", charset=\"UTF-8\"");
    enum MHD_Result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

/* A refusal or error: status with why as the plain-text body. */
static enum MHD_Result refuse(struct MHD_Connection *c, unsigned status, const char *why)
{
    size_t n = strlen(why);
    char *body = malloc(n + 2);
    if (body == NULL) return MHD_NO;
    memcpy(body, why, n);
    body[n] = '\n';
    body[n + 1] = '\0';
    return answer(c, status, body, n + 1, "text/plain; charset=utf-8", NULL);
}

/* With a client CA: the peer's certificate chains to it (0), else -1. */
static int client_certificate_ok(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    unsigned status = 0;
    if (ci == NULL || ci->tls_session == NULL) return -1;
    return gnutls_certificate_verify_peers2((gnutls_session_t)ci->tls_session, &status) == 0 && status == 0 ? 0 : -1;
}

/* The peer's address in text, for the log. */
static void peer_text(const struct sockaddr *sa, char *out, size_t len)
{
    snprintf(out, len, "unknown");
    if (sa && sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)len);
    else if (sa && sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out, (socklen_t)len);
}

/* Drops a connection from any thread: its socket shut down both ways (the
 * port's thread sees the end and closes it), unsent bytes discarded. */
static void drop_socket(int fd)
{
    struct linger l = {.l_onoff = 1, .l_linger = 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    shutdown(fd, SHUT_RDWR);
}

/* libmicrohttpd's connection start and end (its thread): a connection
 * gets its deadline when it opens; one that cannot have it is dropped. */
static void on_connection(void *cls, struct MHD_Connection *c, void **context, enum MHD_ConnectionNotificationCode toe)
{
    http_port *p = cls;
    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        deadline *d = *context;
        if (d == NULL) return;
        pthread_mutex_lock(&p->dl_lock);
        if (d->prev) d->prev->next = d->next;
        else p->deadlines = d->next;
        if (d->next) d->next->prev = d->prev;
        pthread_mutex_unlock(&p->dl_lock);
        close(d->fd);
        free(d);
        *context = NULL;
        return;
    }
    const union MHD_ConnectionInfo *fi = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *ai = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    int fd = fi ? fi->connect_fd : -1;
    deadline *d = fd >= 0 ? calloc(1, sizeof *d) : NULL;
    if (d != NULL && (d->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
        free(d);
        d = NULL;
    }
    *context = d;
    if (d == NULL) { /* out of memory or descriptors: no deadline, no connection */
        if (fd >= 0) drop_socket(fd);
        port_log(p, "http: dropped a connection: no room to time it (%s)", strerror(errno));
        return;
    }
    peer_text(ai ? ai->client_addr : NULL, d->peer, sizeof d->peer);
    d->due = sock_now() + p->limit;
    pthread_mutex_lock(&p->dl_lock);
    d->next = p->deadlines;
    if (d->next) d->next->prev = d;
    p->deadlines = d;
    pthread_mutex_unlock(&p->dl_lock);
}

/* A new limit for c from now: its reply's (a request was read) or its next
 * request's (a reply was taken, the connection kept alive). */
static void restart_deadline(http_port *p, struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    deadline *d = ci ? ci->socket_context : NULL;
    if (d == NULL) return;
    pthread_mutex_lock(&p->dl_lock);
    d->due = sock_now() + p->limit;
    pthread_mutex_unlock(&p->dl_lock);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode toe)
{
    (void)state;
    (void)toe;
    restart_deadline(cls, c);
}

/* The watch thread: every SWEEP_MS, drops the connections past their due
 * time, and says how many (one line a sweep, naming one peer). */
static void *watch_deadlines(void *arg)
{
    http_port *p = arg;
    pthread_mutex_lock(&p->dl_lock);
    while (!p->stopping) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += SWEEP_MS * 1000000L;
        t.tv_sec += t.tv_nsec / 1000000000L;
        t.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&p->dl_wake, &p->dl_lock, &t);
        double now = sock_now();
        int n = 0;
        char peer[48] = "";
        for (deadline *d = p->deadlines; d != NULL && !p->stopping; d = d->next) {
            if (d->dropped || now < d->due) continue;
            drop_socket(d->fd);
            d->dropped = 1;
            if (n++ == 0) snprintf(peer, sizeof peer, "%s", d->peer);
        }
        if (n == 0) continue;
        pthread_mutex_unlock(&p->dl_lock); /* the log may take its owner's locks */
        port_log(p, "http: dropped %d connection%s (%s%s) that did not send a whole request or take a reply within %g s",
                 n, n > 1 ? "s" : "", peer, n > 1 ? ", ..." : "", p->limit);
        pthread_mutex_lock(&p->dl_lock);
    }
    pthread_mutex_unlock(&p->dl_lock);
    return NULL;
}

static void stop_watch(http_port *p)
{
    if (!p->watching) return;
    pthread_mutex_lock(&p->dl_lock);
    p->stopping = 1;
    pthread_cond_signal(&p->dl_wake);
    pthread_mutex_unlock(&p->dl_lock);
    pthread_join(p->watch, NULL);
    p->watching = 0;
}

/* Who may ask: the client certificate (with a client CA), then the token. */
static unsigned check_access(http_port *p, struct MHD_Connection *c, char *why, size_t len)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    unsigned verdict = HTTP_ALLOWED;
    if (p->client_ca && client_certificate_ok(c) != 0) {
        snprintf(why, len, "this port requires a client certificate signed by the server's --tls-client-ca");
        verdict = HTTP_FORBIDDEN;
    } else {
        const char *authorization = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
        pthread_mutex_lock(&p->lock);
        verdict = (unsigned)http_auth_check(&p->tokens, authorization, p->tls || exposure_addr_loopback(sa), why, len);
        pthread_mutex_unlock(&p->lock);
    }
    if (verdict != HTTP_ALLOWED) {
        char peer[64];
        peer_text(sa, peer, sizeof peer);
        port_log(p, "http: refused %s: %s", peer, why);
    }
    return verdict;
}

static enum MHD_Result serve(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                             const char *version, const char *upload_data, size_t *upload_data_size, void **state)
{
    http_port *p = cls;
    (void)version;
    (void)upload_data;
    (void)state; /* a GET is answered at its first call: its headers are all in */
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0) return refuse(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET is served here");
    if (*upload_data_size != 0) return refuse(c, MHD_HTTP_BAD_REQUEST, "a GET request carries no body");
    restart_deadline(p, c); /* the request is in: its reply has the limit again */
    char why[ERR_DETAIL_MAX];
    unsigned verdict = check_access(p, c, why, sizeof why);
    if (verdict != HTTP_ALLOWED) return refuse(c, verdict, why);
    for (int i = 0; i < p->opt.nroutes; i++) {
        const http_route *r = &p->opt.routes[i];
        if (strcmp(url, r->path) != 0) continue;
        strbuf out = {0};
        if (r->render(p->opt.owner, &out) != 0 || out.failed || out.p == NULL || out.len > HTTP_PORT_REPLY_BYTES) {
            free(out.p);
            return refuse(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "the page could not be made (out of memory, or too long?)");
        }
        return answer(c, MHD_HTTP_OK, out.p, out.len, r->content_type, r->policy);
    }
    return refuse(c, MHD_HTTP_NOT_FOUND, "no such page");
}

/* Reads the TLS files of o into p (none: plain HTTP): 0 or the error. */
static int load_tls(http_port *p, const http_port_options *o, err_t *err)
{
    if (o->tls_cert == NULL || o->tls_cert[0] == '\0') return 0;
    if (!MHD_is_feature_supported(MHD_FEATURE_TLS))
        return err_set(err, NUMRPC_EINVAL, "--http-port with --tls-cert: this libmicrohttpd has no HTTPS");
    const char *paths[3] = {o->tls_cert, o->tls_key, o->tls_client_ca};
    for (int i = 0; i < 3; i++)
        if (paths[i] && paths[i][0] && (p->pem[i] = read_pem(paths[i], err)) == NULL) return err->code;
    p->tls = 1;
    p->client_ca = p->pem[2] != NULL;
    return 0;
}

/* --http-port-file: the port, once the port serves (scripts wait for it). */
static int write_port_file(const char *path, int port, err_t *err)
{
    if (path == NULL || path[0] == '\0') return 0;
    FILE *f = fopen(path, "w");
    if (f == NULL) return err_set(err, NUMRPC_EINVAL, "cannot write %s: %s", path, strerror(errno));
    fprintf(f, "%d\n", port);
    return fclose(f) == 0 ? 0 : err_set(err, NUMRPC_EINVAL, "cannot write %s: %s", path, strerror(errno));
}

/* The daemon and its watch thread (both with every signal blocked, so that
 * signals keep going to the signalfd or sigwait meant for them); NULL if
 * either did not start. */
static struct MHD_Daemon *start_daemon(http_port *p, int fd)
{
    unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG | (p->tls ? MHD_USE_TLS : 0);
    struct MHD_OptionItem tls[] = {
        {MHD_OPTION_HTTPS_MEM_CERT, 0, p->pem[0]},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, p->pem[1]},
        {MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)"NORMAL:-VERS-ALL:+VERS-TLS1.3"},
        {p->client_ca ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0, p->pem[2]},
        {MHD_OPTION_END, 0, NULL}};
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, 0, NULL, NULL, serve, p, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, p, MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_PORT_CONNECTIONS, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        (unsigned)HTTP_PORT_PER_ADDRESS, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)p->limit,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, p, MHD_OPTION_NOTIFY_COMPLETED, on_completed, p,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_PORT_REQUEST_BYTES, MHD_OPTION_STRICT_FOR_CLIENT, 1,
        MHD_OPTION_ARRAY, p->tls ? tls : tls + 4, MHD_OPTION_END);
    if (d != NULL && pthread_create(&p->watch, NULL, watch_deadlines, p) != 0) {
        MHD_stop_daemon(d); /* closes fd */
        d = NULL;
    }
    p->watching = d != NULL;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return d;
}

http_port *http_port_start(const http_port_options *o, int *port_out, err_t *err)
{
    http_port *p = calloc(1, sizeof *p);
    if (p == NULL) {
        err_set(err, NUMRPC_ENOMEM, "--http-port");
        return NULL;
    }
    p->opt = *o;
    p->limit = o->timeout_s > 0 ? o->timeout_s : HTTP_PORT_TIMEOUT_S;
    pthread_mutex_init(&p->lock, NULL);
    pthread_mutex_init(&p->dl_lock, NULL);
    pthread_cond_init(&p->dl_wake, NULL);
    int fd = -1;
    if (copy_tokens(o->tokens, &p->tokens) != 0) err_set(err, NUMRPC_ENOMEM, "--http-port: tokens");
    else if (load_tls(p, o, err) == 0) fd = sock_listen(o->bind_addr, o->port, port_out, err);
    exposure_guard guard = {.tokens_on = p->tokens.count > 0, .tls_on = p->tls, .allow_insecure = o->allow_insecure};
    if (fd >= 0 && exposure_check(fd, o->bind_addr, &guard, err) != 0) {
        err_prefix(err, "--http-port");
        close(fd);
        fd = -1;
    }
    if (fd >= 0 && (p->daemon = start_daemon(p, fd)) == NULL) {
        err_set(err, NUMRPC_ESERVER, "--http-port: libmicrohttpd did not start on %s:%d", o->bind_addr, *port_out);
        close(fd);
        fd = -1;
    }
    if (fd >= 0 && write_port_file(o->port_file, *port_out, err) != 0) {
        stop_watch(p);
        MHD_stop_daemon(p->daemon); /* closes fd */
        fd = -1;
    }
    if (fd < 0) {
        free_port(p);
        return NULL;
    }
    return p;
}

void http_port_stop(http_port *p)
{
    if (p == NULL) return;
    stop_watch(p);
    MHD_stop_daemon(p->daemon); /* each connection's deadline freed as it closes */
    free_port(p);
}

#else /* built without libmicrohttpd */

struct http_port {
    int unused;
};

http_port *http_port_start(const http_port_options *o, int *port_out, err_t *err)
{
    (void)o;
    *port_out = 0;
    err_set(err, NUMRPC_EINVAL,
            "--http-port: this build has no HTTP port (libmicrohttpd-dev was missing when it was configured)");
    return NULL;
}

void http_port_set_tokens(http_port *p, const token_table *t)
{
    (void)p;
    (void)t;
}

void http_port_stop(http_port *p)
{
    (void)p;
}

#endif
