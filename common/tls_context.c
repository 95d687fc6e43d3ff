/* tls_context.c -- what both ends of TLS share: a context's making (TLS 1.3,
 * files loaded with clear errors), the peer of a handshake, its binding. */
#include "tls_ossl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

/* The suites the record layer implements (tls_record.c). */
#define SUITES "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
#define BINDING_LABEL "EXPORTER-numrpc-auth"

const char *tls_ossl_reason(char *buf, size_t size, const char *fallback)
{
    unsigned long e, last = 0;
    while ((e = ERR_get_error()) != 0) last = e;
    const char *reason = last ? ERR_reason_error_string(last) : NULL;
    snprintf(buf, size, "%s", reason ? reason : fallback);
    return buf;
}

/* 0 when path can be opened for reading, else err names what and why. */
static int check_readable(const char *path, const char *what, err_t *err)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) return err_set(err, NUMRPC_EINVAL, "cannot read %s %s: %s", what, path, strerror(errno));
    fclose(f);
    return 0;
}

static int load_failed(const char *path, const char *what, err_t *err)
{
    char why[200];
    return err_set(err, NUMRPC_EINVAL, "cannot read %s %s: %s", what, path,
                   tls_ossl_reason(why, sizeof why, "not in PEM form"));
}

int tls_load_identity(SSL_CTX *c, const char *cert, const char *key, err_t *err)
{
    if (cert == NULL && key == NULL) return 0;
    if (cert == NULL || key == NULL)
        return err_set(err, NUMRPC_EINVAL, "a TLS certificate needs its key, and a key its certificate");
    if (check_readable(cert, "TLS certificate", err) != 0) return err->code;
    if (check_readable(key, "TLS key", err) != 0) return err->code;
    if (SSL_CTX_use_certificate_chain_file(c, cert) != 1) return load_failed(cert, "TLS certificate", err);
    int loaded = SSL_CTX_use_PrivateKey_file(c, key, SSL_FILETYPE_PEM) == 1;
    if (!loaded && ERR_GET_REASON(ERR_peek_last_error()) != X509_R_KEY_VALUES_MISMATCH)
        return load_failed(key, "TLS key", err);
    if (!loaded || SSL_CTX_check_private_key(c) != 1) {
        ERR_clear_error();
        return err_set(err, NUMRPC_EINVAL, "TLS certificate %s and key %s do not match", cert, key);
    }
    return 0;
}

int tls_load_ca(SSL_CTX *c, const char *ca, err_t *err)
{
    if (check_readable(ca, "TLS CA file", err) != 0) return err->code;
    if (SSL_CTX_load_verify_locations(c, ca, NULL) != 1) return load_failed(ca, "TLS CA file", err);
    return 0;
}

tls_context *tls_context_alloc(int server, err_t *err)
{
    tls_context *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) {
        err_set(err, NUMRPC_ENOMEM, "TLS context");
        return NULL;
    }
    ctx->server = server;
    ctx->ssl = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
    if (ctx->ssl == NULL) {
        char why[200];
        err_set(err, NUMRPC_EINTERNAL, "TLS context: %s", tls_ossl_reason(why, sizeof why, "OpenSSL failed"));
        free(ctx);
        return NULL;
    }
    pthread_mutex_init(&ctx->lock, NULL);
    SSL_CTX_set_min_proto_version(ctx->ssl, TLS1_3_VERSION);
    SSL_CTX_set_ciphersuites(ctx->ssl, SUITES);
    return ctx;
}

void tls_context_free(tls_context *ctx)
{
    if (ctx == NULL) return;
    for (int i = 0; i < TLS_SESSION_CACHE; i++) SSL_SESSION_free(ctx->sessions[i].session);
    SSL_CTX_free(ctx->ssl);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

/* cert's SHA-256 in lower-case hex into out (left as it was on failure). */
static void fingerprint_of(X509 *cert, char out[TLS_FINGERPRINT_HEX + 1])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    if (X509_digest(cert, EVP_sha256(), md, &n) == 1 && n * 2 <= TLS_FINGERPRINT_HEX)
        for (unsigned i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", md[i]);
}

int tls_file_fingerprint(const char *pem, char out[TLS_FINGERPRINT_HEX + 1], err_t *err)
{
    if (check_readable(pem, "TLS certificate", err) != 0) return err->code;
    FILE *f = fopen(pem, "r");
    X509 *cert = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
    if (f) fclose(f);
    if (cert == NULL) return load_failed(pem, "TLS certificate", err);
    out[0] = '\0';
    fingerprint_of(cert, out);
    X509_free(cert);
    return out[0] ? 0 : err_set(err, NUMRPC_EINTERNAL, "no SHA-256 of TLS certificate %s", pem);
}

void tls_peer_of(SSL *ssl, tls_peer *peer)
{
    snprintf(peer->fingerprint, sizeof peer->fingerprint, "none");
    snprintf(peer->common_name, sizeof peer->common_name, "none");
    X509 *cert = SSL_get0_peer_certificate(ssl);
    if (cert == NULL) return;
    fingerprint_of(cert, peer->fingerprint);
    X509_NAME *subject = X509_get_subject_name(cert);
    if (subject == NULL ||
        X509_NAME_get_text_by_NID(subject, NID_commonName, peer->common_name, sizeof peer->common_name) < 0)
        snprintf(peer->common_name, sizeof peer->common_name, "none");
}

int tls_binding_of(SSL *ssl, unsigned char binding[TLS_BINDING_SIZE])
{
    return SSL_export_keying_material(ssl, binding, TLS_BINDING_SIZE, BINDING_LABEL,
                                      sizeof BINDING_LABEL - 1, NULL, 0, 0) == 1
               ? 0
               : -1;
}
