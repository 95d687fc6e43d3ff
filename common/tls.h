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

/* Schedules a KeyUpdate on a connected tls stream (RFC 8446 §4.6.3): it
 * goes before the next record this end sends, asking the server for one
 * of its own when update_requested.  0, or -1 (another kind, failed). */
int tls_client_key_update(transport *t, int update_requested);

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
#define TLS_SECRET_MAX 48 /* SHA-384: the largest traffic secret */
/* Records one key seals before a KeyUpdate replaces it, when the state sets
 * no other limit: RFC 8446 §5.5 allows AES-GCM 2^24.5 full records per key
 * (the 2^-57 margin); 2^23 stays 2.8 times below, and is 128 GiB of data
 * (ChaCha20-Poly1305 has no such limit: the same one keeps things simple). */
#define TLS_KEY_UPDATE_RECORDS (1ull << 23)
/* Records in a row without application data (empty ones, KeyUpdates) a
 * peer may send before the stream is refused: each costs a decryption and
 * moves nothing on (OpenSSL allows 32 empty records). */
#define TLS_IDLE_RECORDS_MAX 32

typedef struct tls_direction {
    unsigned char key[32];
    unsigned char iv[12];
    uint8_t secret_len; /* 0: keys without a secret (no KeyUpdate possible) */
    uint8_t unused_;
    uint32_t update_due; /* out: KeyUpdates the peer asked for, sent before the next record */
    unsigned char secret[TLS_SECRET_MAX]; /* application_traffic_secret_N of this direction */
    uint64_t seq;     /* records sealed or opened so far with this key */
    uint64_t updates; /* KeyUpdates so far (N) */
} tls_direction;

typedef struct tls_stream_state {
    uint16_t suite;  /* 0x1301 AES-128-GCM, 0x1302 AES-256-GCM, 0x1303 ChaCha20-Poly1305 */
    int broken;      /* a record was cut or failed: nothing more can be read or written */
    int eof;         /* the peer is done: close_notify, or the connection closed between records */
    int truncated;   /* ... without close_notify: what came may be cut short (why says so) */
    uint32_t busy;   /* the one-holder guard: 1 while a seal, open or pull runs (__atomic) */
    uint8_t alert;   /* the alert owed to the peer for what broke the stream, 0: none */
    uint64_t key_update_records; /* records per key before a KeyUpdate; 0: TLS_KEY_UPDATE_RECORDS */
    uint32_t idle_records; /* records in a row that carried no application byte */
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

/* ---- Server record layer over a tls_stream_state ----
 * One holder at a time: every seal, open and pull takes st->busy (an atomic
 * 0 -> 1) and gives it back on return.  A second caller meanwhile -- another
 * thread or process holding the same state -- gets EBUSY ("TLS state in use
 * by another holder") and seals or opens nothing: it cannot reuse a sequence
 * number (a nonce under AES-GCM).  Contention does not break st.
 * The peer's KeyUpdate is taken (its next keys derived; one of ours answers
 * update_requested before our next record), and ours goes out before the
 * sealing key has sealed st->key_update_records records.  A fault of the
 * peer (bad tag, too long a record, a bad content type or message) breaks
 * st and owes it an alert (st->alert: bad_record_mac, record_overflow,
 * unexpected_message, decode_error, illegal_parameter), sent best effort
 * by the call that has the socket (recv, pull). */
extern const transport_ops transport_tls_record_ops;
/* A stream of kind "tls-record" on fd (which it owns: close closes fd after
 * a best-effort close_notify) using *st (which stays the caller's and must
 * outlive it).  recv and send block within the socket's time limits and
 * move up to 16 records per system call (a per-thread batch buffer, freed
 * when the thread ends); send writes whole records; a time limit passed
 * inside a record breaks st.
 * pending is the plaintext ready, or 1 when a whole record waits to be
 * opened.  recv returns 0 after the peer's close_notify; a connection that
 * ends without it (between records or inside one) is -1 with EPROTO and
 * st->why "the peer closed the connection without close_notify: the stream
 * may be truncated" (st->truncated) once the plaintext before it is read.
 * Errors set errno (EPROTO for a bad record or an alert; ETIMEDOUT for a
 * record cut by a time limit; EBUSY, st untouched, when another holder has
 * st) and st->why.  The handshake may have read the client's first
 * records already: use the stream (or pull) before waiting on fd. */
transport tls_record_transport(int fd, tls_stream_state *st);
/* Non-blocking: reads what fd has, opens the whole records received into
 * st's plaintext while it has room (32 KiB at least: a message to peek at
 * whole must be smaller).  The plaintext bytes ready (maybe 0; st->eof tells a
 * finished peer, st->truncated one gone without close_notify: then, with
 * nothing left to read, an error), or a negative code with err set (st is
 * then broken; NUMRPC_EBUSY, st untouched, when another holder has it). */
long tls_record_pull(int fd, tls_stream_state *st, err_t *err);
/* Plaintext ready in st, without consuming it: *p is valid until the next
 * pull, recv or consume. */
size_t tls_record_peek(const tls_stream_state *st, const unsigned char **p);
void tls_record_consume(tls_stream_state *st, size_t n);
/* Seals len bytes at buf as records appended to *out (to be sent by its
 * owner); a KeyUpdate may go first (the limit, or the peer asked).  0, or a
 * negative code with err set (NUMRPC_EBUSY: another holder has st).
 * Taking the records back when none was sent means restoring st->out as
 * it was before the call (the whole tls_direction, not only seq: a
 * KeyUpdate among them changed its key). */
int tls_record_seal(tls_stream_state *st, const void *buf, size_t len, transport_bytes *out,
                    err_t *err);
/* The orderly end of this side, for a holder about to close fd itself (the
 * dispatcher): seals close_notify and sends it without blocking, best
 * effort; st is then done (broken, why "this end sent close_notify").
 * 0 when it went, -1 otherwise (another holder, st broken, the socket full). */
int tls_record_close_notify(int fd, tls_stream_state *st);
/* For the owner of st when a holder died (a worker killed): if it died
 * holding st (busy), st may be half-updated, so it is broken ("the holder
 * of the TLS state died inside a record operation") and freed for the
 * owner.  Returns 1 then, 0 when st was not held. */
int tls_record_holder_died(tls_stream_state *st);
/* Sets the records one key seals before a KeyUpdate (0: the default,
 * TLS_KEY_UPDATE_RECORDS; at least 2: the KeyUpdate is sealed with the key
 * it replaces).  For tests; a server reads NUMRPC_TLS_KEY_UPDATE_RECORDS once
 * at its first handshake (tls_accept.c). */
void tls_record_set_key_update_limit(tls_stream_state *st, uint64_t records);

#endif
