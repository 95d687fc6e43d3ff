/* tls_accept.c -- the server side of the handshake: its context, and OpenSSL
 * behind memory BIOs fed one record at a time, ending in a tls_stream_state. */
#include "tls_ossl.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <openssl/crypto.h>
#include <openssl/err.h>

#include "sock.h"

#define TYPE_HANDSHAKE 22
#define OUT_MAX (1u << 20) /* a handshake's own output: certificates and tickets */
#define SECRET_MAX TLS_SECRET_MAX /* SHA-384 */

/* The application traffic secrets of a handshake, as OpenSSL logs them;
 * the SSL's app data points here while it runs. */
typedef struct tls_secrets {
    unsigned char client[SECRET_MAX], server[SECRET_MAX];
    size_t client_len, server_len;
} tls_secrets;

struct tls_acceptor {
    SSL *ssl;           /* owned until the handshake is over (NULL after) */
    BIO *in, *out;      /* memory BIOs, owned by ssl */
    tls_secrets secrets; /* filled by the context's keylog callback */
    transport_bytes unsent; /* OpenSSL's output not yet taken by the socket */
    size_t unsent_off;
    int started;        /* the first byte was looked at */
    int done;           /* the handshake is over: state is filled */
    int failed;         /* a code: the handshake failed (the alert may still go) */
    char failure[ERR_DETAIL_MAX];
    tls_stream_state state; /* the result; cipher holds bytes received and not yet fed */
};

/* Copies the secrets OpenSSL logs for the application traffic into the
 * tls_secrets of the handshake's SSL. */
static void keep_traffic_secret(const SSL *ssl, const char *line)
{
    tls_secrets *s = SSL_get_app_data(ssl);
    unsigned char *to;
    size_t *len;
    if (s == NULL) return;
    if (strncmp(line, "CLIENT_TRAFFIC_SECRET_0 ", 24) == 0) {
        to = s->client;
        len = &s->client_len;
    } else if (strncmp(line, "SERVER_TRAFFIC_SECRET_0 ", 24) == 0) {
        to = s->server;
        len = &s->server_len;
    } else {
        return;
    }
    const char *hex = strchr(line + 24, ' '); /* past the client random */
    if (hex == NULL) return;
    hex++;
    size_t n = 0;
    unsigned v;
    while (n < SECRET_MAX && sscanf(hex + 2 * n, "%2x", &v) == 1) to[n++] = (unsigned char)v;
    *len = n;
}

/* Client certificates: those client_ca verifies, and the server's own (its
 * holder proved it has the server's key in CertificateVerify, which
 * OpenSSL checks whatever this says: the server is calling itself). */
static int accept_own_certificate(int verified, X509_STORE_CTX *store)
{
    if (verified) return 1;
    SSL *ssl = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx());
    X509 *own = ssl ? SSL_get_certificate(ssl) : NULL, *leaf = X509_STORE_CTX_get0_cert(store);
    return own != NULL && leaf != NULL && X509_cmp(own, leaf) == 0;
}

tls_context *tls_server_context_new(const char *cert, const char *key, const char *client_ca, err_t *err)
{
    static const unsigned char id_context[] = "numrpc";
    tls_context *ctx = tls_context_alloc(1, err);
    if (ctx == NULL) return NULL;
    /* the record layer speaks TLS 1.3 only (and OpenSSL takes no early data by default) */
    SSL_CTX_set_max_proto_version(ctx->ssl, TLS1_3_VERSION);
    SSL_CTX_set_keylog_callback(ctx->ssl, keep_traffic_secret);
    SSL_CTX_set_session_id_context(ctx->ssl, id_context, sizeof id_context - 1);
    if (cert == NULL || key == NULL) {
        err_set(err, NUMRPC_EINVAL, "a TLS server needs a certificate and a key");
        goto fail;
    }
    if (tls_load_identity(ctx->ssl, cert, key, err) != 0) goto fail;
    if (client_ca != NULL) {
        if (tls_load_ca(ctx->ssl, client_ca, err) != 0) goto fail;
        STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(client_ca);
        if (names != NULL) SSL_CTX_set_client_CA_list(ctx->ssl, names); /* the context owns names */
        SSL_CTX_set_verify(ctx->ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, accept_own_certificate);
    }
    return ctx;
fail:
    tls_context_free(ctx);
    return NULL;
}

tls_acceptor *tls_acceptor_new(tls_context *ctx, err_t *err)
{
    if (ctx == NULL || !ctx->server) {
        err_set(err, NUMRPC_EINVAL, "a TLS acceptor needs a server context");
        return NULL;
    }
    tls_acceptor *a = calloc(1, sizeof *a);
    if (a == NULL) {
        err_set(err, NUMRPC_ENOMEM, "TLS acceptor");
        return NULL;
    }
    a->unsent.max = OUT_MAX;
    a->ssl = SSL_new(ctx->ssl);
    a->in = BIO_new(BIO_s_mem());
    a->out = BIO_new(BIO_s_mem());
    if (a->ssl == NULL || a->in == NULL || a->out == NULL) {
        char why[200];
        err_set(err, NUMRPC_ENOMEM, "TLS acceptor: %s", tls_ossl_reason(why, sizeof why, "out of memory"));
        BIO_free(a->in);
        BIO_free(a->out);
        SSL_free(a->ssl);
        free(a);
        return NULL;
    }
    SSL_set_bio(a->ssl, a->in, a->out); /* ssl owns both now */
    SSL_set_app_data(a->ssl, &a->secrets);
    SSL_set_accept_state(a->ssl);
    return a;
}

void tls_acceptor_free(tls_acceptor *a)
{
    if (a == NULL) return;
    SSL_free(a->ssl);
    transport_bytes_free(&a->unsent);
    OPENSSL_cleanse(a, sizeof *a);
    free(a);
}

/* Fails the handshake with code and a detail kept for every later step. */
static int fail(tls_acceptor *a, int code, const char *what, err_t *err)
{
    if (!a->failed) {
        a->failed = code;
        snprintf(a->failure, sizeof a->failure, "%s", what);
    }
    return err_set(err, a->failed, "%s", a->failure);
}

/* Moves what OpenSSL wrote into unsent; returns the number of records in
 * it (all of OpenSSL's output is whole records), or -1. */
static long take_output(tls_acceptor *a)
{
    char chunk[4096];
    long records = 0;
    size_t start = a->unsent.len;
    transport sink = transport_memory_sink(&a->unsent);
    int n;
    while ((n = BIO_read(a->out, chunk, sizeof chunk)) > 0)
        if (sink.ops->send(&sink, chunk, (size_t)n) < 0) return -1;
    for (size_t at = start; at + TLS_RECORD_HEADER <= a->unsent.len; records++)
        at += TLS_RECORD_HEADER + ((size_t)a->unsent.p[at + 3] << 8 | a->unsent.p[at + 4]);
    return records;
}

/* Sends unsent without blocking: 1 when all of it is sent, 0 when the
 * socket takes no more now, -1 when it failed. */
static int flush(tls_acceptor *a, int fd)
{
    while (a->unsent_off < a->unsent.len) {
        ssize_t k = send(fd, a->unsent.p + a->unsent_off, a->unsent.len - a->unsent_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k > 0) a->unsent_off += (size_t)k;
        else if (k < 0 && errno == EINTR) continue;
        else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
        else return -1;
    }
    a->unsent.len = a->unsent_off = 0;
    return 1;
}

/* NUMRPC_TLS_KEY_UPDATE_RECORDS, read once per process: the records a
 * key seals before our KeyUpdate (0 when unset: the record layer's
 * default, TLS_KEY_UPDATE_RECORDS).  Lower values are for tests. */
static uint64_t key_update_records;
static pthread_once_t key_update_once = PTHREAD_ONCE_INIT;

static void read_key_update_records(void)
{
    const char *v = getenv("NUMRPC_TLS_KEY_UPDATE_RECORDS");
    char *end = NULL;
    unsigned long long n = v && *v ? strtoull(v, &end, 10) : 0;
    if (end != NULL && *end == '\0' && n > 0 && n <= TLS_KEY_UPDATE_RECORDS) key_update_records = n;
}

/* The handshake is over: keys, sequence numbers (the server's records so
 * far are the tickets OpenSSL sealed with its traffic key), peer, binding. */
static int finish(tls_acceptor *a, long tickets, err_t *err)
{
    tls_stream_state *st = &a->state;
    const SSL_CIPHER *cipher = SSL_get_current_cipher(a->ssl);
    st->suite = cipher ? SSL_CIPHER_get_protocol_id(cipher) : 0;
    if (SSL_version(a->ssl) != TLS1_3_VERSION || tls_suite_name(st->suite) == NULL)
        return fail(a, NUMRPC_EPROTO, "TLS handshake ended outside TLS 1.3's three suites", err);
    if (BIO_ctrl_pending(a->in) != 0)
        return fail(a, NUMRPC_EINTERNAL, "TLS handshake left bytes unread", err);
    if (tls_record_keys(&st->in, st->suite, a->secrets.client, a->secrets.client_len) != 0 ||
        tls_record_keys(&st->out, st->suite, a->secrets.server, a->secrets.server_len) != 0 ||
        a->secrets.client_len == 0 || a->secrets.server_len == 0)
        return fail(a, NUMRPC_EINTERNAL, "TLS traffic secrets missing", err);
    st->out.seq = (uint64_t)tickets;
    pthread_once(&key_update_once, read_key_update_records);
    tls_record_set_key_update_limit(st, key_update_records);
    tls_peer_of(a->ssl, &st->peer);
    if (tls_binding_of(a->ssl, st->binding) != 0)
        return fail(a, NUMRPC_EINTERNAL, "TLS channel binding unavailable", err);
    OPENSSL_cleanse(&a->secrets, sizeof a->secrets);
    SSL_free(a->ssl);
    a->ssl = NULL;
    a->done = 1;
    return 0;
}

/* Feeds the whole record at the start of state.cipher (rec_len bytes) to
 * OpenSSL and collects its answer.  0, or a negative code. */
static int feed_record(tls_acceptor *a, size_t rec_len, err_t *err)
{
    tls_stream_state *st = &a->state;
    char why[200];
    if (BIO_write(a->in, st->cipher, (int)rec_len) != (int)rec_len)
        return fail(a, NUMRPC_ENOMEM, "TLS handshake: out of memory", err);
    memmove(st->cipher, st->cipher + rec_len, st->cipher_len - rec_len);
    st->cipher_len -= rec_len;
    ERR_clear_error();
    int r = SSL_do_handshake(a->ssl);
    int ssl_err = r == 1 ? SSL_ERROR_NONE : SSL_get_error(a->ssl, r);
    if (ssl_err != SSL_ERROR_NONE && ssl_err != SSL_ERROR_WANT_READ) {
        char detail[300];
        snprintf(detail, sizeof detail, "TLS handshake failed: %s",
                 tls_ossl_reason(why, sizeof why, "the client broke it off"));
        take_output(a); /* the alert, if any */
        return fail(a, NUMRPC_EPROTO, detail, err);
    }
    long records = take_output(a);
    if (records < 0) return fail(a, NUMRPC_ELIMIT, "TLS handshake output over its limit", err);
    return r == 1 ? finish(a, records, err) : 0;
}

/* The size of the whole record at the start of state.cipher, 0 while it
 * is incomplete, or a negative code (its length is impossible). */
static long next_record(tls_acceptor *a, err_t *err)
{
    const tls_stream_state *st = &a->state;
    if (st->cipher_len < TLS_RECORD_HEADER) return 0;
    size_t len = (size_t)st->cipher[3] << 8 | st->cipher[4];
    if (len == 0 || len > TLS_CIPHERTEXT_MAX) {
        char what[120];
        snprintf(what, sizeof what, "TLS record length %zu out of range in the handshake", len);
        return fail(a, NUMRPC_EPROTO, what, err);
    }
    return st->cipher_len >= TLS_RECORD_HEADER + len ? (long)(TLS_RECORD_HEADER + len) : 0;
}

int tls_accept_step(tls_acceptor *a, int fd, err_t *err)
{
    tls_stream_state *st = &a->state;
    for (;;) {
        int sent = flush(a, fd);
        if (sent < 0 && !a->failed) return fail(a, NUMRPC_EIO, "TLS handshake: the socket failed", err);
        if (a->failed) return err_set(err, a->failed, "%s", a->failure);
        if (sent == 0) return TLS_ACCEPT_WANT_WRITE;
        if (a->done) return TLS_ACCEPT_DONE;
        if (!a->started && st->cipher_len > 0) {
            if (st->cipher[0] != TYPE_HANDSHAKE) return TLS_ACCEPT_NOT_TLS;
            a->started = 1;
        }
        long rec = next_record(a, err);
        if (rec < 0) return (int)rec;
        if (rec > 0) {
            int rc = feed_record(a, (size_t)rec, err);
            if (rc != 0) {
                flush(a, fd); /* the alert, if the socket takes it now */
                return rc;
            }
            continue;
        }
        ssize_t k = recv(fd, st->cipher + st->cipher_len, sizeof st->cipher - st->cipher_len, MSG_DONTWAIT);
        if (k > 0) st->cipher_len += (size_t)k;
        else if (k == 0) return fail(a, NUMRPC_EIO, "the client closed the connection during the TLS handshake", err);
        else if (errno == EAGAIN || errno == EWOULDBLOCK) return TLS_ACCEPT_WANT_READ;
        else if (errno != EINTR) return fail(a, NUMRPC_EIO, "TLS handshake: receive failed", err);
    }
}

size_t tls_acceptor_received(const tls_acceptor *a, const unsigned char **p)
{
    *p = a->state.cipher;
    return a->state.cipher_len;
}

void tls_acceptor_take_state(tls_acceptor *a, tls_stream_state *st)
{
    NR_ASSERT(a->done);
    memcpy(st, &a->state, sizeof *st);
}

int tls_accept_blocking(tls_context *ctx, int fd, int timeout_ms, tls_stream_state *st, err_t *err)
{
    double deadline = sock_now() + timeout_ms / 1000.0;
    tls_acceptor *a = tls_acceptor_new(ctx, err);
    if (a == NULL) return err->code;
    int rc;
    while ((rc = tls_accept_step(a, fd, err)) == TLS_ACCEPT_WANT_READ || rc == TLS_ACCEPT_WANT_WRITE) {
        double left = deadline - sock_now();
        struct pollfd p = {fd, rc == TLS_ACCEPT_WANT_READ ? POLLIN : POLLOUT, 0};
        int n = left > 0 ? poll(&p, 1, (int)(left * 1000) + 1) : 0;
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            rc = err_set(err, NUMRPC_ETIMEDOUT, "TLS handshake not finished within %d ms", timeout_ms);
            break;
        }
    }
    if (rc == TLS_ACCEPT_DONE) tls_acceptor_take_state(a, st);
    tls_acceptor_free(a);
    return rc;
}
