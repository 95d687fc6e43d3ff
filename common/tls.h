/* tls.h -- the TLS 1.3 layer: contexts, the client's OpenSSL stream, the
 * server's handshake engine and the record state a pre-forked worker can hold. */
#ifndef NUMRPC_COMMON_TLS_H
#define NUMRPC_COMMON_TLS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "transport.h"

/* ---- Limits of RFC 8446 §5 ---- */
#define TLS_RECORD_HEADER 5
#define TLS_PLAINTEXT_MAX 16384u                  /* per record */
#define TLS_CIPHERTEXT_MAX (TLS_PLAINTEXT_MAX + 256u) /* per record, after the header */
#define TLS_RECORD_MAX (TLS_RECORD_HEADER + TLS_CIPHERTEXT_MAX)
#define TLS_FINGERPRINT_HEX 64 /* SHA-256 of a DER certificate, lower-case hex */
#define TLS_BINDING_SIZE 32    /* channel binding: exporter "EXPORTER-numrpc-auth" */

/* ---- Contexts ----
 * A context holds the certificates, the verification settings and (client)
 * the session cache.  Made once per process, used by any number of threads
 * and streams; the caller frees it with tls_context_free after its last
 * stream is closed.  Errors name the file and OpenSSL's reason. */
typedef struct tls_context tls_context;

/* A server's: certificate chain and key (PEM files); client_ca (or NULL)
 * makes a client certificate required and verified against that CA file.
 * Its own certificate (the first of cert) is accepted as a client
 * certificate too, whoever issued it: a peer that presents it has proven it
 * holds the server's key, i.e. it is this server calling itself
 * (tls_self_context_new). */
tls_context *tls_server_context_new(const char *cert, const char *key, const char *client_ca,
                                    err_t *err);
/* A client's: servers are verified against the CA file ca; cert and key (both
 * or neither) are its own certificate for mutual TLS. */
tls_context *tls_client_context_new(const char *ca, const char *cert, const char *key,
                                    err_t *err);
/* A server's for calling itself (its metaserver helper measuring it): it
 * trusts exactly the certificate own_cert (the first of that PEM file, the
 * one the server presents), whoever issued it and whatever host names it
 * carries -- every connect pins its fingerprint and checks no host name --,
 * and presents own_cert and own_key as its client certificate. */
tls_context *tls_self_context_new(const char *own_cert, const char *own_key, err_t *err);
void tls_context_free(tls_context *ctx);

/* Who the peer is, once its handshake is done: its certificate's SHA-256
 * fingerprint and subject CN, or "none" for both (no certificate). */
typedef struct tls_peer {
    char fingerprint[TLS_FINGERPRINT_HEX + 1];
    char common_name[128];
} tls_peer;

/* The SHA-256 fingerprint (lower-case hex) of the first certificate of the
 * PEM file pem (a server's --tls-cert: the certificate it presents), for
 * announcing it.  0, or an error naming the file. */
int tls_file_fingerprint(const char *pem, char out[TLS_FINGERPRINT_HEX + 1], err_t *err);

/* ---- Client: a stream of kind "tls" (one OpenSSL session on the socket) ---- */
extern const transport_ops transport_tls_ops;

/* Connects to host:port, verifies the server against ctx's CA and host,
 * resuming a cached session for host:port when there is one; when
 * expect_fingerprint (hex, ':' and case ignored) is not NULL the server's
 * certificate must have it.  Connect and handshake finish by timeout_ms.
 * The stream owns the socket and the session (transport_close frees both);
 * ctx must outlive it.  0, or a negative code with err set. */
int tls_client_connect(transport *t, tls_context *ctx, const char *host, int port, int timeout_ms,
                       const char *expect_fingerprint, err_t *err);
/* On a connected tls stream: the server's identity, the channel binding,
 * and whether the handshake resumed a session.  0, or -1 for another kind. */
int tls_client_peer(const transport *t, tls_peer *peer, unsigned char binding[TLS_BINDING_SIZE],
                    int *resumed);

/* Why a tls or tls-record stream failed (a TLS alert from the peer, a bad
 * record), for the user: "" when it has not, or for another kind.  Valid
 * until the stream is closed. */
const char *tls_stream_failure(const transport *t);
/* True when the peer ended a tls stream with an alert about this end's
 * certificate (a server requiring, or refusing, the client's: mutual TLS). */
int tls_stream_refused(const transport *t);

/* ---- Server: the state of one TLS 1.3 stream, after its handshake ----
 * Plain data without pointers: it may sit in MAP_SHARED memory and move
 * between processes with the socket.  Whoever holds the socket holds the
 * state; the owner (the dispatcher's connection table) allocates it. */
typedef struct tls_direction {
    unsigned char key[32];
    unsigned char iv[12];
    uint64_t seq; /* records sealed or opened so far */
} tls_direction;

typedef struct tls_stream_state {
    uint16_t suite;  /* 0x1301 AES-128-GCM, 0x1302 AES-256-GCM, 0x1303 ChaCha20-Poly1305 */
    int broken;      /* a record was cut or failed: nothing more can be read or written */
    int eof;         /* the peer sent close_notify or closed between records */
    tls_direction in, out;
    tls_peer peer;
    unsigned char binding[TLS_BINDING_SIZE];
    char why[128]; /* what broke the stream, for the log ("" if nothing) */
    size_t cipher_len; /* received bytes not yet opened: at most one record and a bit */
    unsigned char cipher[TLS_RECORD_MAX];
    size_t plain_off, plain_len; /* opened bytes not yet consumed: plain[off, off+len) */
    unsigned char plain[2 * TLS_CIPHERTEXT_MAX]; /* two whole records at least */
} tls_stream_state;

/* ---- Server handshake engine (OpenSSL behind memory BIOs) ---- */
typedef struct tls_acceptor tls_acceptor;

enum tls_accept_result {
    TLS_ACCEPT_DONE = 0,       /* handshake over, all of its output sent */
    TLS_ACCEPT_WANT_READ = 1,  /* wait until fd is readable, then step again */
    TLS_ACCEPT_WANT_WRITE = 2, /* wait until fd is writable, then step again */
    TLS_ACCEPT_NOT_TLS = 3     /* the first byte is no TLS handshake record: a plain client */
};
/* A fresh acceptor on ctx (which must outlive it), or NULL with err set.
 * Freed by tls_acceptor_free. */
tls_acceptor *tls_acceptor_new(tls_context *ctx, err_t *err);
void tls_acceptor_free(tls_acceptor *a);
/* Advances the handshake on non-blocking fd as far as the socket allows:
 * a tls_accept_result, or a negative code with err set (the handshake
 * failed; an alert was sent if the socket took it). */
int tls_accept_step(tls_acceptor *a, int fd, err_t *err);
/* The bytes read from the client and not fed to the handshake: after
 * TLS_ACCEPT_NOT_TLS, the start of what a plain client sent (its first
 * packet's header, to answer it by its call id).  *p valid until the next
 * step or the acceptor is freed. */
size_t tls_acceptor_received(const tls_acceptor *a, const unsigned char **p);
/* After TLS_ACCEPT_DONE: fills *st (keys, sequence numbers, the peer, the
 * channel binding, bytes the client sent after its Finished). */
void tls_acceptor_take_state(tls_acceptor *a, tls_stream_state *st);
/* The whole handshake on fd (blocking or not) within timeout_ms, for a
 * thread per connection: 0 with *st filled, TLS_ACCEPT_NOT_TLS, or a
 * negative code with err set. */
int tls_accept_blocking(tls_context *ctx, int fd, int timeout_ms, tls_stream_state *st,
                        err_t *err);

/* ---- Server record layer over a tls_stream_state ---- */
extern const transport_ops transport_tls_record_ops;
/* A stream of kind "tls-record" on fd (which it owns: close closes fd after
 * a best-effort close_notify) using *st (which stays the caller's and must
 * outlive it).  recv and send block within the socket's time limits and
 * move up to 16 records per system call (a per-thread batch buffer, freed
 * when the thread ends); send writes whole records; a time limit passed
 * inside a record breaks st.
 * pending is the plaintext ready, or 1 when a whole record waits to be
 * opened.  Errors set errno (EPROTO for a bad record, an alert or a
 * KeyUpdate, which is not supported; ETIMEDOUT for a record cut by a time
 * limit) and st->why.  The handshake may have read the client's first
 * records already: use the stream (or pull) before waiting on fd. */
transport tls_record_transport(int fd, tls_stream_state *st);
/* Non-blocking: reads what fd has, opens the whole records received into
 * st's plaintext while it has room (32 KiB at least: a message to peek at
 * whole must be smaller).  The plaintext bytes ready (maybe 0; st->eof tells a
 * finished peer), or a negative code with err set (st is then broken). */
long tls_record_pull(int fd, tls_stream_state *st, err_t *err);
/* Plaintext ready in st, without consuming it: *p is valid until the next
 * pull, recv or consume. */
size_t tls_record_peek(const tls_stream_state *st, const unsigned char **p);
void tls_record_consume(tls_stream_state *st, size_t n);
/* Seals len bytes at buf as records appended to *out (to be sent by its
 * owner).  0, or a negative code with err set. */
int tls_record_seal(tls_stream_state *st, const void *buf, size_t len, transport_bytes *out,
                    err_t *err);

#endif
