/* tls_client.c -- the client's TLS stream: its context and session cache,
 * one OpenSSL session on the socket (verified, resumed; a refusal said before
 * TLS read as one), the "tls" table entry. */
#include "tls_ossl.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "msg.h"
#include "sock.h"

#define TLS_CLIENT_BATCH (256u << 10) /* bytes sealed per send, read ahead per receive */
#define HELD_MAX (TLS_CLIENT_BATCH / TLS_PLAINTEXT_MAX * TLS_RECORD_MAX) /* one batch's records */
#define HELD_ROOM (HELD_MAX + 4096) /* and small records the other thread seals meanwhile */
/* A numrpc packet a server answers with instead of TLS (a refusal at accept
 * time) is read in packets of this size at most. */
#define PLAIN_ANSWER_PACKET 4096

/* A tls stream's session: malloc'd by tls_client_connect, freed by close. */
typedef struct tls_client {
    SSL *ssl;
    tls_context *ctx;
    char host[256];
    int port;
    int fd; /* the stream's socket (for the BIO) */
    char key[300]; /* "host:port": the session cache's key */
    char expect[TLS_FINGERPRINT_HEX + 1]; /* "" when any verified certificate will do */
    double deadline; /* of the handshake, monotonic seconds */
    int first_byte;  /* the peer's first byte, -1 until one came */
    int plain_answer; /* that byte starts no TLS record: left unread in the socket */
    int failed;      /* a fatal error: no close_notify, no more reads */
    /* A pooled connection has a reading and a writing thread, and OpenSSL's
     * SSL is not for concurrent use: a TLS 1.3 message read after the
     * handshake (a session ticket) runs the state machine that a write
     * entering meanwhile runs too.  So every SSL call holds lock, and none
     * waits under it: once streaming, reads take what the socket has and
     * writes seal into held, sent by flush_held without the lock. */
    pthread_mutex_t lock; /* the SSL object, held, held_len, sending */
    int sending;          /* a thread is sending held (flush_held) */
    pthread_cond_t sent;  /* ... and has stopped */
    int streaming;   /* the handshake is over */
    unsigned char *held; /* records sealed, not sent yet (HELD_ROOM bytes):
                          * malloc'd by tls_client_connect, freed by close */
    size_t held_len;
    int cut;         /* that error was the socket's, not the session's */
    int ended;       /* ... an end of the stream without close_notify: no alert can follow */
    int peer_alert;  /* the TLS alert the peer ended the session with, -1: none */
    char why[ERR_DETAIL_MAX - 64]; /* the fatal error's reason ("" before one) */
    tls_peer peer;
    unsigned char binding[TLS_BINDING_SIZE];
} tls_client;

/* ---- The session cache ---- */

/* Keeps a session the server gave for resumption (OpenSSL's callback for
 * new sessions: returning 1 takes its reference). */
static int keep_session(SSL *ssl, SSL_SESSION *session)
{
    tls_client *c = SSL_get_app_data(ssl);
    if (c == NULL || !SSL_SESSION_is_resumable(session)) return 0;
    tls_context *ctx = c->ctx;
    pthread_mutex_lock(&ctx->lock);
    tls_cached_session *slot = &ctx->sessions[0];
    for (int i = 0; i < TLS_SESSION_CACHE; i++) {
        tls_cached_session *e = &ctx->sessions[i];
        if (strcmp(e->key, c->key) == 0) {
            slot = e;
            break;
        }
        if (e->used < slot->used) slot = e; /* free slots have used 0 */
    }
    SSL_SESSION_free(slot->session);
    slot->session = session;
    snprintf(slot->key, sizeof slot->key, "%s", c->key);
    slot->used = ++ctx->clock;
    pthread_mutex_unlock(&ctx->lock);
    return 1;
}

/* A reference to the session cached for key, or NULL. */
static SSL_SESSION *cached_session(tls_context *ctx, const char *key)
{
    SSL_SESSION *s = NULL;
    pthread_mutex_lock(&ctx->lock);
    for (int i = 0; i < TLS_SESSION_CACHE && s == NULL; i++)
        if (ctx->sessions[i].session != NULL && strcmp(ctx->sessions[i].key, key) == 0) {
            s = ctx->sessions[i].session;
            SSL_SESSION_up_ref(s);
        }
    pthread_mutex_unlock(&ctx->lock);
    return s;
}

/* What every client context does: verify the peer, write partially, keep
 * sessions for resumption.  A close without close_notify is not taken as
 * EOF (no SSL_OP_IGNORE_UNEXPECTED_EOF): it is reported as truncation
 * (io_failed), only close_notify is an orderly end. */
static void client_settings(tls_context *ctx)
{
    SSL_CTX_set_verify(ctx->ssl, SSL_VERIFY_PEER, NULL);
    SSL_CTX_clear_options(ctx->ssl, SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_mode(ctx->ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    /* records are read many at a time (client_pending tells what waits) */
    SSL_CTX_set_read_ahead(ctx->ssl, 1);
    SSL_CTX_set_default_read_buffer_len(ctx->ssl, TLS_CLIENT_BATCH);
    SSL_CTX_set_session_cache_mode(ctx->ssl, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx->ssl, keep_session);
}

tls_context *tls_client_context_new(const char *ca, const char *cert, const char *key, err_t *err)
{
    tls_context *ctx = tls_context_alloc(0, err);
    if (ctx == NULL) return NULL;
    if (ca == NULL) {
        err_set(err, NUMRPC_EINVAL, "a TLS client needs a CA file to verify servers against");
        goto fail;
    }
    if (tls_load_ca(ctx->ssl, ca, err) != 0 || tls_load_identity(ctx->ssl, cert, key, err) != 0) goto fail;
    client_settings(ctx);
    return ctx;
fail:
    tls_context_free(ctx);
    return NULL;
}

tls_context *tls_self_context_new(const char *own_cert, const char *own_key, err_t *err)
{
    tls_context *ctx = tls_context_alloc(0, err);
    if (ctx == NULL) return NULL;
    /* The store trusts own_cert's file and may end a chain at its leaf (a
     * certificate whose issuer this server need not know); what accepts
     * the peer is the pinned fingerprint, checked after the handshake. */
    if (tls_file_fingerprint(own_cert, ctx->pinned, err) != 0 || tls_load_ca(ctx->ssl, own_cert, err) != 0 ||
        tls_load_identity(ctx->ssl, own_cert, own_key, err) != 0) {
        tls_context_free(ctx);
        return NULL;
    }
    X509_VERIFY_PARAM_set_flags(SSL_CTX_get0_param(ctx->ssl), X509_V_FLAG_PARTIAL_CHAIN);
    client_settings(ctx);
    return ctx;
}

/* ---- The handshake ---- */

/* ---- The socket under OpenSSL: sends never raise SIGPIPE, and the
 * peer's first byte is noted (a plain server's answer tells itself by it) ---- */

static void learn_refusal(tls_client *c);

/* Sends the records held, in the order sealed, with c->lock released
 * while the bytes go (the other thread seals after them meanwhile).  One
 * sender at a time: it also takes what was sealed while it sent.  With
 * MSG_DONTWAIT in flags (the reader, which must never wait for the
 * writer's peer to read, and close) nothing waits: while another thread
 * sends, that one takes these bytes too, and what the socket does not take
 * stays held for the next flush.  Otherwise it waits for the other sender,
 * then sends everything within the socket's time limit.  0, or -1 with
 * errno: the session is then broken, with the peer's alert as its reason
 * if one came (a TLS 1.3 server refuses a client certificate after the
 * handshake). */
static int flush_held(tls_client *c, int flags)
{
    int nowait = (flags & MSG_DONTWAIT) != 0, e = 0, saved = errno;
    pthread_mutex_lock(&c->lock);
    while (c->sending && !nowait) pthread_cond_wait(&c->sent, &c->lock);
    if (c->sending) {
        pthread_mutex_unlock(&c->lock);
        return 0;
    }
    c->sending = 1;
    while (c->held_len > 0 && e == 0) {
        size_t len = c->held_len, sent = 0; /* [0, len) is this sender's; others append after */
        pthread_mutex_unlock(&c->lock);
        while (sent < len && e == 0) {
            ssize_t k = send(c->fd, c->held + sent, len - sent, MSG_NOSIGNAL | flags);
            if (k > 0) sent += (size_t)k;
            else if (nowait && (errno == EAGAIN || errno == EWOULDBLOCK)) break; /* stays held */
            else if (k == 0 || errno != EINTR) e = errno == EAGAIN || errno == EWOULDBLOCK ? ETIMEDOUT : errno;
        }
        pthread_mutex_lock(&c->lock);
        memmove(c->held, c->held + sent, c->held_len - sent);
        c->held_len -= sent;
        if (sent < len && e == 0) break; /* the socket is full and this sender does not wait */
    }
    c->sending = 0;
    pthread_cond_broadcast(&c->sent);
    if (e != 0 && !c->failed) {
        c->failed = c->cut = 1;
        snprintf(c->why, sizeof c->why, "TLS session with %s:%d failed: send: %s", c->host, c->port, strerror(e));
        errno = e;
        if ((e == EPIPE || e == ECONNRESET) && !c->ended) learn_refusal(c);
    }
    pthread_mutex_unlock(&c->lock);
    errno = e != 0 ? e : saved;
    return e != 0 ? -1 : 0;
}

/* During the handshake, records go to the socket (made non-blocking by
 * client_start); once streaming, they are held (under c->lock) for
 * flush_held, and a full hold asks the writer to flush first. */
static int socket_write(BIO *b, const char *buf, int n)
{
    tls_client *c = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    if (c->streaming) {
        if (c->held_len + (size_t)n > HELD_ROOM) {
            BIO_set_retry_write(b);
            return -1;
        }
        memcpy(c->held + c->held_len, buf, (size_t)n);
        c->held_len += (size_t)n;
        return n;
    }
    ssize_t k = send(c->fd, buf, (size_t)n, MSG_NOSIGNAL);
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) BIO_set_retry_write(b);
    return (int)k;
}

/* The peer's first byte, looked at before OpenSSL takes any: one that
 * starts no TLS record (content types 20 to 23) stays in the socket, and
 * the handshake fails at once (read_plain_answer reads what came). */
static int first_byte_is_tls(BIO *b, tls_client *c)
{
    unsigned char first;
    ssize_t k = recv(c->fd, &first, 1, MSG_PEEK);
    if (k <= 0) return 1; /* nothing yet, or the socket's own error: the read tells */
    if (first >= 20 && first <= 23) return 1;
    c->first_byte = first;
    c->plain_answer = 1;
    BIO_clear_retry_flags(b);
    errno = EPROTO;
    return 0;
}

static int socket_read(BIO *b, char *buf, int n)
{
    tls_client *c = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    if (c->first_byte < 0 && !first_byte_is_tls(b, c)) return -1;
    ssize_t k = recv(c->fd, buf, (size_t)n, c->streaming ? MSG_DONTWAIT : 0); /* client_recv waits */
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) BIO_set_retry_read(b);
    if (k > 0 && c->first_byte < 0) c->first_byte = (unsigned char)buf[0];
    return (int)k;
}

static long socket_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)b;
    (void)num;
    (void)ptr;
    return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static BIO_METHOD *socket_method;
static pthread_once_t socket_method_once = PTHREAD_ONCE_INIT;

static void make_socket_method(void)
{
    socket_method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "numrpc socket");
    if (socket_method == NULL) return;
    BIO_meth_set_write(socket_method, socket_write);
    BIO_meth_set_read(socket_method, socket_read);
    BIO_meth_set_ctrl(socket_method, socket_ctrl);
}

/* A BIO over c's socket (c outlives it), or NULL. */
static BIO *socket_bio(tls_client *c)
{
    pthread_once(&socket_method_once, make_socket_method);
    BIO *b = socket_method ? BIO_new(socket_method) : NULL;
    if (b == NULL) return NULL;
    BIO_set_data(b, c);
    BIO_set_init(b, 1);
    return b;
}

/* Why the handshake failed, as the user can act on it. */
static int handshake_failed(tls_client *c, int ssl_err, err_t *err)
{
    char why[200];
    long verify = SSL_get_verify_result(c->ssl);
    c->failed = 1;
    if (c->first_byte >= 0 && (c->first_byte < 20 || c->first_byte > 23)) {
        ERR_clear_error();
        return err_set(err, NUMRPC_EPROTO, "peer at %s:%d did not answer TLS (is it a plain numrpc server?)",
                       c->host, c->port);
    }
    if (verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH) {
        ERR_clear_error();
        return err_set(err, NUMRPC_EAUTH, "TLS handshake with %s:%d failed: server certificate is not for host %s",
                       c->host, c->port, c->host);
    }
    if (verify != X509_V_OK) {
        ERR_clear_error();
        return err_set(err, NUMRPC_EAUTH, "TLS handshake with %s:%d failed: certificate verify failed: %s", c->host,
                       c->port, X509_verify_cert_error_string(verify));
    }
    if (ssl_err == SSL_ERROR_SYSCALL && c->first_byte < 0)
        return err_set(err, NUMRPC_ECONNECT, "peer at %s:%d closed the connection during the TLS handshake",
                       c->host, c->port);
    return err_set(err, NUMRPC_ECONNECT, "TLS handshake with %s:%d failed: %s", c->host, c->port,
                   tls_ossl_reason(why, sizeof why, "connection lost"));
}

/* The peer answered our ClientHello with something else than TLS.  A
 * numrpc-server refusing the connection at accept time (its connection
 * limits, shutting down) says why in a plain REPLY, without a handshake
 * that would cost it CPU; it is read with the message layer's reader,
 * bounded in size and by the handshake's deadline, and reported as the
 * server's code and detail, marked unauthenticated.  A peer that could not
 * read our TLS (a plain numrpc peer: EPROTO, EVERSION) or said nothing
 * readable keeps the error handshake_failed set. */
static int read_plain_answer(tls_client *c, err_t *err)
{
    wire_reader r;
    err_t said;
    if (wire_reader_init(&r, c->fd, PLAIN_ANSWER_PACKET, &said) != 0) return err->code;
    wire_reader_set_deadline(&r, c->deadline);
    int code = msg_read_reply(&r, 0, c->key, &said);
    int whole = !wire_reader_broken(&r) && !wire_reader_in_message(&r);
    wire_reader_free(&r);
    if (!whole || code == NUMRPC_OK || code == NUMRPC_EPROTO || code == NUMRPC_EVERSION) return err->code;
    for (char *p = said.detail; *p; p++) /* the peer's text, shown to the user: printable only */
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    return err_set(err, code, "%s:%d refused the connection: %s (said before TLS, unauthenticated)", c->host,
                   c->port, said.detail);
}

/* Lower-case hex without ':' of text into out (size TLS_FINGERPRINT_HEX + 1). */
static void normalize_fingerprint(const char *text, char *out)
{
    size_t n = 0;
    for (; *text && n < TLS_FINGERPRINT_HEX; text++)
        if (*text != ':') out[n++] = (char)tolower((unsigned char)*text);
    out[n] = '\0';
}

/* After the handshake: the peer, the binding, the expected fingerprint. */
static int check_peer(tls_client *c, err_t *err)
{
    tls_peer_of(c->ssl, &c->peer);
    if (tls_binding_of(c->ssl, c->binding) != 0)
        return err_set(err, NUMRPC_EINTERNAL, "TLS channel binding unavailable");
    if (c->expect[0] != '\0' && strcmp(c->expect, c->peer.fingerprint) != 0)
        return err_set(err, NUMRPC_EAUTH, "server at %s:%d presented certificate %s, expected %s", c->host, c->port,
                       c->peer.fingerprint, c->expect);
    return 0;
}

/* The table's start: the handshake, on a socket made non-blocking for it,
 * finished by the deadline tls_client_connect set. */
static int client_start(transport *t, int server_side, err_t *err)
{
    tls_client *c = t->session;
    if (server_side || c == NULL) return err_set(err, NUMRPC_EINVAL, "tls streams are clients (servers use tls-record)");
    int flags = fcntl(t->fd, F_GETFL);
    if (flags < 0 || fcntl(t->fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return err_set(err, NUMRPC_EIO, "fcntl: %s", strerror(errno));
    int rc = 0;
    for (;;) {
        ERR_clear_error();
        int r = SSL_connect(c->ssl);
        if (r == 1) break;
        int e = SSL_get_error(c->ssl, r);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
            rc = handshake_failed(c, e, err);
            break;
        }
        double left = c->deadline - sock_now();
        struct pollfd p = {t->fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, 0};
        int n = left > 0 ? poll(&p, 1, (int)(left * 1000) + 1) : 0;
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            c->failed = 1;
            rc = err_set(err, NUMRPC_ETIMEDOUT, "TLS handshake with %s:%d not finished in time", c->host, c->port);
            break;
        }
    }
    if (fcntl(t->fd, F_SETFL, flags) < 0 && rc == 0) rc = err_set(err, NUMRPC_EIO, "fcntl: %s", strerror(errno));
    if (rc != 0 && c->plain_answer) rc = read_plain_answer(c, err);
    c->streaming = rc == 0;
    return rc != 0 ? rc : check_peer(c, err);
}

int tls_client_connect(transport *t, tls_context *ctx, const char *host, int port, int timeout_ms,
                       const char *expect_fingerprint, err_t *err)
{
    unsigned char ip[16];
    *t = transport_none();
    if (ctx == NULL || ctx->server) return err_set(err, NUMRPC_EINVAL, "a TLS client needs a client context");
    tls_client *c = calloc(1, sizeof *c);
    if (c == NULL) return err_set(err, NUMRPC_ENOMEM, "TLS client");
    c->ctx = ctx;
    c->port = port;
    c->first_byte = -1;
    c->peer_alert = -1;
    c->deadline = sock_now() + timeout_ms / 1000.0;
    snprintf(c->host, sizeof c->host, "%s", host);
    snprintf(c->key, sizeof c->key, "%s:%d", host, port);
    /* A self context pins its own certificate, whatever the caller expects. */
    if (ctx->pinned[0]) expect_fingerprint = ctx->pinned;
    if (expect_fingerprint != NULL) normalize_fingerprint(expect_fingerprint, c->expect);
    c->ssl = SSL_new(ctx->ssl);
    c->held = malloc(HELD_ROOM);
    if (c->ssl == NULL || c->held == NULL) {
        SSL_free(c->ssl);
        free(c->held);
        free(c);
        return err_set(err, NUMRPC_ENOMEM, "TLS client session");
    }
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->sent, NULL);
    SSL_set_app_data(c->ssl, c);
    int is_ip = inet_pton(AF_INET, host, ip) == 1 || inet_pton(AF_INET6, host, ip) == 1;
    /* No host name to check on a pinned certificate: only the holder of its
     * key can finish the handshake, wherever it listens. */
    if (ctx->pinned[0]) {
    } else if (is_ip) {
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), host);
    } else {
        SSL_set1_host(c->ssl, host);
        SSL_set_tlsext_host_name(c->ssl, host);
    }
    SSL_SESSION *resume = cached_session(ctx, c->key);
    if (resume != NULL) {
        SSL_set_session(c->ssl, resume);
        SSL_SESSION_free(resume);
    }
    t->ops = &transport_tls_ops;
    t->session = c; /* close frees c from here on */
    int fd = sock_connect(host, port, timeout_ms, err);
    if (fd < 0) {
        transport_close(t);
        return err->code;
    }
    t->fd = c->fd = fd;
    BIO *bio = socket_bio(c);
    if (bio == NULL) {
        transport_close(t);
        return err_set(err, NUMRPC_ENOMEM, "TLS client socket");
    }
    SSL_set_bio(c->ssl, bio, bio); /* the session owns bio */
    int rc = client_start(t, 0, err);
    if (rc != 0) transport_close(t);
    return rc;
}

int tls_client_peer(const transport *t, tls_peer *peer, unsigned char binding[TLS_BINDING_SIZE], int *resumed)
{
    if (t->ops != &transport_tls_ops || t->session == NULL) return -1;
    const tls_client *c = t->session;
    if (peer) *peer = c->peer;
    if (binding) memcpy(binding, c->binding, TLS_BINDING_SIZE);
    if (resumed) *resumed = SSL_session_reused(c->ssl);
    return 0;
}

/* ---- The stream ---- */

/* Keeps the alert the peer ended the session with, if the newest error on
 * this thread's queue is one (left on the queue). */
static void note_alert(tls_client *c)
{
    int reason = ERR_GET_REASON(ERR_peek_last_error());
    if (reason >= SSL_AD_REASON_OFFSET && reason < SSL_AD_REASON_OFFSET + 256) c->peer_alert = reason - SSL_AD_REASON_OFFSET;
}

/* Whether the newest error on this thread's queue says the peer closed the
 * connection without close_notify (OpenSSL 3; left on the queue). */
static int unexpected_eof(void)
{
    unsigned long e = ERR_peek_last_error();
    return ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
}

/* errno for an SSL_read (reading) or SSL_write that returned r <= 0; a
 * fatal error also leaves its reason in c->why.  The peer's close_notify is
 * 0 (EOF); a stream read to its end without it is EPROTO, "... without
 * close_notify: the stream may be truncated" -- a cut of the socket, not of
 * the session (which stays resumable, client_close).  Under c->lock. */
static ssize_t io_failed(tls_client *c, int r, int reading)
{
    int e = SSL_get_error(c->ssl, r);
    int saved = errno;
    char reason[200];
    if (e == SSL_ERROR_ZERO_RETURN) return 0;
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        errno = EAGAIN; /* a time limit */
    } else if ((e == SSL_ERROR_SSL && unexpected_eof()) || (reading && e == SSL_ERROR_SYSCALL && saved == 0)) {
        c->failed = c->cut = c->ended = 1;
        errno = EPROTO; /* as any cut TLS stream */
        snprintf(c->why, sizeof c->why,
                 "TLS session with %s:%d failed: the peer closed the connection without close_notify: "
                 "the stream may be truncated",
                 c->host, c->port);
    } else {
        c->failed = 1;
        c->cut = e == SSL_ERROR_SYSCALL;
        note_alert(c);
        errno = e == SSL_ERROR_SYSCALL && saved != 0 ? saved : EPROTO;
        snprintf(c->why, sizeof c->why, "TLS session with %s:%d failed: %s", c->host, c->port,
                 e == SSL_ERROR_SYSCALL && saved != 0 ? strerror(saved)
                                                      : tls_ossl_reason(reason, sizeof reason, "protocol error"));
    }
    ERR_clear_error();
    return -1;
}

const char *tls_stream_failure(const transport *t)
{
    if (t->ops == &transport_tls_ops && t->session != NULL) return ((const tls_client *)t->session)->why;
    if (t->ops == &transport_tls_record_ops && t->session != NULL)
        return ((const tls_stream_state *)t->session)->why;
    return "";
}

int tls_stream_refused(const transport *t)
{
    if (t->ops != &transport_tls_ops || t->session == NULL) return 0;
    switch (((const tls_client *)t->session)->peer_alert) {
    case SSL_AD_BAD_CERTIFICATE:
    case SSL_AD_UNSUPPORTED_CERTIFICATE:
    case SSL_AD_CERTIFICATE_REVOKED:
    case SSL_AD_CERTIFICATE_EXPIRED:
    case SSL_AD_CERTIFICATE_UNKNOWN:
    case SSL_AD_UNKNOWN_CA:
    case SSL_AD_ACCESS_DENIED:
    case SSL_AD_CERTIFICATE_REQUIRED:
        return 1;
    default:
        return 0;
    }
}

static ssize_t client_recv(transport *t, void *buf, size_t n)
{
    tls_client *c = t->session;
    ssize_t k = -1;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        if (c->failed) {
            errno = EPROTO;
            break;
        }
        ERR_clear_error();
        errno = 0;
        int r = SSL_read(c->ssl, buf, n > INT32_MAX ? INT32_MAX : (int)n);
        int e = r > 0 ? SSL_ERROR_NONE : SSL_get_error(c->ssl, r);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
            k = r > 0 ? r : io_failed(c, r, 1);
            break;
        }
        pthread_mutex_unlock(&c->lock); /* the writer goes on while this waits */
        /* held full (a hostile peer's many KeyUpdates): wait, within the send time limit */
        int rc = e == SSL_ERROR_WANT_READ ? sock_await(c->fd, POLLIN) : flush_held(c, 0);
        pthread_mutex_lock(&c->lock);
        if (rc != 0) break;
    }
    int owed = c->held_len > 0; /* records the read sealed: an alert, an answer to a KeyUpdate */
    pthread_mutex_unlock(&c->lock);
    int saved = errno;
    if (owed) flush_held(c, MSG_DONTWAIT);
    errno = saved;
    return k;
}

/* The server may have refused the session (TLS 1.3 servers judge a client
 * certificate after the client has finished) and left: its alert, if it
 * came, is the reason, looked for without waiting (a peek: data stays for
 * the reader).  errno is kept: a pooled connection the server had closed
 * must still read as a reset (the call is then retried on a fresh one),
 * not as this look's EAGAIN.  Under c->lock, streaming. */
static void learn_refusal(tls_client *c)
{
    char byte, reason[200];
    int saved = errno;
    ERR_clear_error();
    int r = SSL_peek(c->ssl, &byte, 1);
    if (r <= 0 && SSL_get_error(c->ssl, r) == SSL_ERROR_SSL) {
        c->cut = 0;
        note_alert(c);
        snprintf(c->why, sizeof c->why, "TLS session with %s:%d failed: %s", c->host, c->port,
                 tls_ossl_reason(reason, sizeof reason, "protocol error"));
    }
    ERR_clear_error();
    errno = saved;
}

/* Seals up to a batch of buf (one record per SSL_write: partial writes)
 * and sends it in one system call, so the peer wakes once per batch. */
static ssize_t client_send(transport *t, const void *buf, size_t n)
{
    tls_client *c = t->session;
    size_t done = 0;
    int failed = 0;
    pthread_mutex_lock(&c->lock);
    while (done < n && done < TLS_CLIENT_BATCH && !failed) {
        if (c->failed) {
            errno = EPROTO;
            failed = 1;
            break;
        }
        size_t chunk = n - done < TLS_PLAINTEXT_MAX ? n - done : TLS_PLAINTEXT_MAX;
        ERR_clear_error();
        errno = 0;
        int r = SSL_write(c->ssl, (const char *)buf + done, (int)chunk);
        if (r > 0) {
            done += (size_t)r;
        } else if (SSL_get_error(c->ssl, r) == SSL_ERROR_WANT_WRITE) { /* held is full */
            pthread_mutex_unlock(&c->lock);
            failed = flush_held(c, 0) != 0;
            pthread_mutex_lock(&c->lock);
        } else {
            failed = 1;
            if (io_failed(c, r, 0) == 0) errno = EPIPE; /* the peer ended the session: no more writing */
        }
    }
    pthread_mutex_unlock(&c->lock);
    int saved = errno;
    if (flush_held(c, 0) != 0) return -1;
    errno = saved;
    return done > 0 ? (ssize_t)done : failed ? -1 : 0; /* a failure after some bytes: the next send tells */
}

static size_t client_pending(const transport *t)
{
    tls_client *c = t->session;
    if (c == NULL || c->ssl == NULL) return 0;
    pthread_mutex_lock(&c->lock);
    size_t opened = (size_t)SSL_pending(c->ssl);
    if (opened == 0) opened = (size_t)SSL_has_pending(c->ssl); /* 1: records read ahead */
    pthread_mutex_unlock(&c->lock);
    return opened;
}

/* By the last user of the stream (no other thread is in it). */
static void client_close(transport *t)
{
    tls_client *c = t->session;
    if (c != NULL) {
        if (!c->failed && t->fd >= 0 && SSL_is_init_finished(c->ssl)) {
            SSL_shutdown(c->ssl); /* close_notify, held while streaming */
            if (c->streaming) flush_held(c, MSG_DONTWAIT);
        }
        /* A connection cut under a sound session (a server closing an idle
         * one, a reset) leaves the session resumable, as TLS allows since
         * 1.1: without this, OpenSSL's SSL_free would mark it not resumable
         * in our cache too.  A session ended by an alert was dropped by
         * OpenSSL already. */
        if (c->failed && c->cut) SSL_set_shutdown(c->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
        SSL_free(c->ssl);
        pthread_mutex_destroy(&c->lock);
        pthread_cond_destroy(&c->sent);
        free(c->held);
        free(c);
    }
    if (t->fd >= 0) close(t->fd);
    t->fd = -1;
    t->session = NULL;
}

int tls_client_key_update(transport *t, int update_requested)
{
    if (t->ops != &transport_tls_ops || t->session == NULL) return -1;
    tls_client *c = t->session;
    pthread_mutex_lock(&c->lock);
    int ok = 0;
    if (!c->failed) {
        ERR_clear_error();
        ok = SSL_key_update(c->ssl, update_requested ? SSL_KEY_UPDATE_REQUESTED : SSL_KEY_UPDATE_NOT_REQUESTED);
        ERR_clear_error();
    }
    pthread_mutex_unlock(&c->lock);
    return ok == 1 ? 0 : -1;
}

const transport_ops transport_tls_ops = {"tls", client_recv, client_send, client_start, client_pending,
                                         client_close, NULL, NULL, NULL, NULL, NULL}; /* a client's: no look */
