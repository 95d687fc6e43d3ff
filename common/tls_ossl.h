/* tls_ossl.h -- what the TLS files share about OpenSSL (internal to them):
 * the context's insides, the traffic secrets a handshake yields, errors. */
#ifndef NUMRPC_COMMON_TLS_OSSL_H
#define NUMRPC_COMMON_TLS_OSSL_H

#include <pthread.h>

#include <openssl/ssl.h>

#include "tls.h"

#define TLS_SESSION_CACHE 64 /* resumable sessions a client context keeps */

/* A session for one host:port, kept for resumption (client contexts). */
typedef struct tls_cached_session {
    char key[300];        /* "host:port"; "" when the slot is free */
    SSL_SESSION *session; /* one reference held by the cache */
    uint64_t used;        /* the cache's clock at the last store: the oldest goes first */
} tls_cached_session;

struct tls_context {
    SSL_CTX *ssl; /* owned: freed by tls_context_free */
    int server;
    pthread_mutex_t lock; /* guards sessions and clock */
    tls_cached_session sessions[TLS_SESSION_CACHE];
    uint64_t clock;
    /* A self context's (tls_self_context_new): the fingerprint every connect
     * expects, no host name checked ("" for other contexts). */
    char pinned[TLS_FINGERPRINT_HEX + 1];
};

/* A context for one end (server or client) limited to TLS 1.3 and the
 * record layer's suites, without certificates yet; NULL with err set. */
tls_context *tls_context_alloc(int server, err_t *err);
/* Loads our certificate chain and key into c (both or neither given). */
int tls_load_identity(SSL_CTX *c, const char *cert, const char *key, err_t *err);
/* Makes c trust the certificates of the CA file ca. */
int tls_load_ca(SSL_CTX *c, const char *ca, err_t *err);
/* OpenSSL's reason for the newest error on this thread's queue (the queue
 * is emptied), or fallback when it is empty.  Returns buf. */
const char *tls_ossl_reason(char *buf, size_t size, const char *fallback);
/* The peer's identity after a handshake. */
void tls_peer_of(SSL *ssl, tls_peer *peer);
/* The channel binding of a finished handshake: 0, or -1. */
int tls_binding_of(SSL *ssl, unsigned char binding[TLS_BINDING_SIZE]);

/* Sets d's key and iv from a traffic secret (HKDF-Expand-Label "key" and
 * "iv" with suite's hash), keeps the secret for KeyUpdate (up to
 * TLS_SECRET_MAX bytes) and sets its sequence number to 0: 0, or -1 for a
 * suite the record layer does not implement (tls_keys.c). */
int tls_record_keys(tls_direction *d, uint16_t suite, const unsigned char *secret, size_t secret_len);
/* The suite's name ("TLS_AES_128_GCM_SHA256"), or NULL when unknown. */
const char *tls_suite_name(uint16_t suite);

/* ---- One record's protection (tls_keys.c), for the record layer ---- */
#define TLS_TAG_SIZE 16 /* every suite's AEAD tag */
/* RFC 8446 §7.2: d's next traffic secret, key and iv ("traffic upd"), its
 * sequence number 0 again.  0, or -1 (d unchanged) without a secret of the
 * suite's hash length. */
int tls_next_keys(tls_direction *d, uint16_t suite);
/* Seals len bytes of data, then the content type, into out (not
 * overlapping data) under st's sending keys, the tag after them: 0 or -1. */
int tls_seal_body(const tls_stream_state *st, const unsigned char header[TLS_RECORD_HEADER],
                  const unsigned char *data, size_t len, unsigned char type, unsigned char *out);
/* Opens len bytes of body (its tag follows) into out under st's receiving
 * keys; the tag is verified before 0 is returned, and out wiped when it
 * fails (-1). */
int tls_open_body(const tls_stream_state *st, const unsigned char header[TLS_RECORD_HEADER],
                  const unsigned char *body, size_t len, unsigned char *out);

/* ---- Whole records (tls_keys.c) ---- */
#define TLS_TYPE_ALERT 21
#define TLS_TYPE_HANDSHAKE 22
#define TLS_TYPE_APPLICATION 23
#define TLS_HANDSHAKE_KEY_UPDATE 24
/* A KeyUpdate record: header, the message (type, 3 length bytes, request),
 * the inner type, the tag. */
#define TLS_KEY_UPDATE_RECORD (TLS_RECORD_HEADER + 5 + 1 + TLS_TAG_SIZE)
/* KeyUpdates the peer may have asked for and we still owe: more requests
 * before our next record are answered this many times (one would do, RFC
 * 8446 §4.6.3; tlsfuzzer's script counts one answer per request).  All of
 * them go before one record, and 8 keep a record's framing with them
 * (8 * 27 + 22 bytes) within the TLS_RECORD_MAX - TLS_PLAINTEXT_MAX bytes
 * per record that callers reserve for sealed records (server/connio.c). */
#define TLS_UPDATES_DUE_MAX 8
/* Room for one record of len bytes and the KeyUpdates that may go first. */
#define TLS_SEALED_ROOM(len) ((TLS_UPDATES_DUE_MAX + 1) * TLS_KEY_UPDATE_RECORD + TLS_RECORD_HEADER + (len) + 1 + TLS_TAG_SIZE)
#define TLS_SEALED_MAX TLS_SEALED_ROOM(TLS_PLAINTEXT_MAX)

/* Seals len (<= TLS_PLAINTEXT_MAX) bytes of type as one record into rec
 * (not overlapping buf); returns the record's size, or 0 on failure. */
size_t tls_seal_one(tls_stream_state *st, int type, const void *buf, size_t len, unsigned char *rec);
/* Seals len (<= TLS_PLAINTEXT_MAX) bytes of type as one record into rec
 * (TLS_SEALED_ROOM(len) bytes, not overlapping buf), after the KeyUpdates
 * due (the peer asked, or the key's record limit is near); returns the
 * size of what it sealed, or 0 on failure. */
size_t tls_seal_record(tls_stream_state *st, int type, const void *buf, size_t len, unsigned char *rec);

#endif
