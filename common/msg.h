/* msg.h -- the messages of docs/protocol.md that every peer speaks (HELLO,
 * REPLY, CALL header, LIST, GET_IFACE, CANCEL, PROBE, FILE_*), one writer
 * and one reader each, over one connection object. */
#ifndef NUMRPC_COMMON_MSG_H
#define NUMRPC_COMMON_MSG_H

#include <stdint.h>

#include "error.h"
#include "hmac.h"
#include "iface.h"
#include "tokens.h"
#include "transport.h"
#include "wire.h"

#define MSG_LABEL_MAX 272 /* "host:port" of a peer, for messages        */
#define MSG_PEER_MAX 256  /* a HELLO's peer name, in bytes at most       */
#define MSG_NONCE_BYTES 32 /* a token challenge's nonce                  */

/* ---- The connection: a stream with its reader and writer ----
 * Owned by one thread at a time.  Fields other than label are the message
 * layer's: code outside common/ reads them only through these functions. */
typedef struct msg_conn {
    transport tp;
    wire_reader reader;
    wire_writer writer;
    char label[MSG_LABEL_MAX]; /* "host:port" or a description */
    uint32_t next_id;          /* msg_conn_next_id                  */
} msg_conn;

/* Buffers for a connection with no stream yet (fd -1).  Free with
 * msg_conn_free. */
int msg_conn_init(msg_conn *c, size_t packet_size, err_t *err);
/* Gives c the stream tp (which c now owns) and forgets everything of the
 * previous one, a message cut short included. */
void msg_conn_attach(msg_conn *c, transport tp, const char *label);
/* msg_conn_init, then a TCP connection to host:port within connect_ms
 * (label "host:port"), whose every send and receive then has a time limit
 * of io_ms (0 = none). */
int msg_conn_open(msg_conn *c, const char *host, int port, int connect_ms, int io_ms,
                  size_t packet_size, err_t *err);
/* The same over TLS when tls (a client context, which must outlive c) is
 * not NULL: the server is verified against its CA and host name and, when
 * expect_fingerprint is not NULL, must present that certificate
 * (tls_client_connect's errors).  tls NULL: msg_conn_open. */
struct tls_context;
/* The stream under such a connection: TCP (tls NULL) or TLS as above;
 * verification failures are NUMRPC_EAUTH, a peer that does not answer TLS
 * (a plain server) or a failed handshake NUMRPC_ECONNECT. */
int msg_transport_connect(transport *tp, struct tls_context *tls, const char *expect_fingerprint, const char *host,
                          int port, int connect_ms, err_t *err);
int msg_conn_open_tls(msg_conn *c, struct tls_context *tls, const char *expect_fingerprint, const char *host,
                      int port, int connect_ms, int io_ms, size_t packet_size, err_t *err);
/* Closes the stream, keeps the buffers (attach may follow). */
void msg_conn_close(msg_conn *c);
/* Zeroes both buffers (a server's worker, between callers). */
void msg_conn_wipe(msg_conn *c);
/* Closes the stream and frees the buffers; safe to repeat. */
void msg_conn_free(msg_conn *c);
/* True between messages in both directions, nothing read ahead: the
 * connection may be pooled or change hands. */
int msg_conn_idle(const msg_conn *c);
/* A fresh call id for this connection (never 0). */
uint32_t msg_conn_next_id(msg_conn *c);
/* The socket, for poll(): readable means a message may be read (a kind
 * that buffers decoded bytes reports them through its pending entry). */
int msg_conn_fd(const msg_conn *c);
/* Ends both directions without closing: a thread blocked reading c
 * returns at once (its owner still frees c). */
void msg_conn_shutdown(msg_conn *c);

/* ---- REPLY: i32 status, string detail, then the body of its request ---- */
/* Begins the reply to call_id; the caller writes the body and ends it. */
int msg_reply_begin(wire_writer *w, uint32_t call_id, int code, const char *detail, err_t *err);
/* A whole reply with status and detail only (errors, empty answers). */
int msg_reply_simple(wire_writer *w, uint32_t call_id, int code, const char *detail, err_t *err);
/* Reads the next message as the REPLY to want_id and its status.  0: the
 * body follows (read it, then wire_expect_end).  A failure status ends
 * the message and is returned with the peer's detail in err; a status
 * that numrpc_error_valid refuses becomes NUMRPC_ESERVER.  label names
 * the peer in every detail ("127.0.0.1:7800 closed the connection"). */
int msg_read_reply(wire_reader *r, uint32_t want_id, const char *label, err_t *err);
/* The same when the caller has read the message's header already. */
int msg_reply_status(wire_reader *r, uint32_t type, uint32_t call_id, uint32_t want_id,
                     const char *label, err_t *err);

/* ---- HELLO: version, packet size, peer name (both directions) ----
 * Then, when a token is used, its name, a nonce and a proof: the request
 * carries the client's nonce (proof empty), the reply the server's nonce
 * and proof (docs/protocol.md "Tokens").  A HELLO without them is read as
 * one without a token. */
typedef struct msg_hello {
    uint32_t version;         /* PROTO_VERSION                              */
    uint32_t packet_size;     /* request: the client's; reply: max_packet   */
    char peer[MSG_PEER_MAX + 1]; /* "libnumrpc 1.0", "numrpc-server 1.0"    */
    int has_token;            /* the three fields below travel              */
    char token[TOKEN_NAME_MAX + 1];        /* the token's name            */
    uint8_t nonce[MSG_NONCE_BYTES];        /* request: client's; reply: server's */
    uint8_t proof[HMAC_SHA256_BYTES];      /* reply: the server's proof   */
    int has_proof;            /* a proof travelled (a reply's)              */
} msg_hello;
/* The request, as one whole message. */
int msg_write_hello(wire_writer *w, uint32_t call_id, const msg_hello *h, err_t *err);
/* Its body, after wire_next_message gave PROTO_HELLO (ends the message). */
int msg_read_hello(wire_reader *r, msg_hello *h, err_t *err);
/* The OK reply. */
int msg_write_hello_reply(wire_writer *w, uint32_t call_id, const msg_hello *h, err_t *err);
/* Reads the reply to the HELLO sent with want_id (0: the first reply,
 * whatever its id). */
int msg_read_hello_reply(wire_reader *r, uint32_t want_id, const char *label, msg_hello *h,
                         err_t *err);

/* ---- AUTH: the client's proof, after a HELLO that named a token ---- */
/* Written ended but held: it goes out with the next message sent. */
int msg_write_auth(wire_writer *w, uint32_t call_id, const uint8_t proof[HMAC_SHA256_BYTES],
                   err_t *err);
/* Its body after wire_next_message gave PROTO_AUTH (ends the message). */
int msg_read_auth(wire_reader *r, uint8_t proof[HMAC_SHA256_BYTES], err_t *err);

/* ---- CALL: the header; the walker writes the arguments after it ---- */
typedef struct msg_call_header {
    char name[IFACE_MAX_NAME + 1];
    uint64_t hash;          /* interface version (0 = don't check)           */
    uint32_t deadline_ms;   /* 0 = none                                      */
    uint32_t flags;         /* PROTO_CALL_*                                  */
    uint32_t reply_packet;  /* packet size for the reply (0 = server's)      */
    uint32_t nargs;
} msg_call_header;
/* Begins the CALL message and writes its header. */
int msg_write_call_header(wire_writer *w, uint32_t call_id, const msg_call_header *h, err_t *err);
/* Reads the header after wire_next_message gave PROTO_CALL. */
int msg_read_call_header(wire_reader *r, msg_call_header *h, err_t *err);

/* What every CALL reply carries after status and detail, an error too. */
typedef struct msg_call_result {
    double compute_seconds;
    uint32_t in_flight; /* the server's calls in flight besides this one */
    uint32_t queued;    /* connections waiting for a worker              */
} msg_call_result;
int msg_write_call_result(wire_writer *w, const msg_call_result *res, err_t *err);
int msg_read_call_result(wire_reader *r, msg_call_result *res, err_t *err);

/* ---- LIST: routines and their version hashes ---- */
typedef struct msg_routine_entry {
    char name[IFACE_MAX_NAME + 1];
    uint64_t hash;
} msg_routine_entry;
/* The request, as one whole message. */
int msg_write_list(wire_writer *w, uint32_t call_id, err_t *err);
/* The OK reply from n entries. */
int msg_write_list_reply(wire_writer *w, uint32_t call_id, const msg_routine_entry *items,
                         uint32_t n, err_t *err);
/* Reads the reply: *items malloc'd (the caller frees), at most max
 * entries (more is NUMRPC_ELIMIT). */
int msg_read_list_reply(wire_reader *r, uint32_t want_id, const char *label, uint32_t max,
                        msg_routine_entry **items, uint32_t *n, err_t *err);

/* ---- GET_IFACE: a routine's descriptor blob ---- */
int msg_write_get_iface(wire_writer *w, uint32_t call_id, const char *name, err_t *err);
/* Reads the request body into name (IFACE_MAX_NAME + 1 bytes). */
int msg_read_get_iface(wire_reader *r, char *name, err_t *err);
int msg_write_iface_reply(wire_writer *w, uint32_t call_id, const uint8_t *blob, uint32_t len,
                          err_t *err);
/* *blob malloc'd (the caller frees), at most IFACE_MAX_BLOB bytes. */
int msg_read_iface_reply(wire_reader *r, uint32_t want_id, const char *label, uint8_t **blob,
                         uint32_t *len, err_t *err);

/* ---- CANCEL: empty, one packet, names the call by its id ---- */
int msg_send_cancel(const msg_conn *c, uint32_t call_id, err_t *err);

/* ---- PROBE: n bytes up, reply_bytes back (each <= PROTO_PROBE_MAX_BYTES) ---- */
int msg_write_probe(wire_writer *w, uint32_t call_id, uint32_t reply_bytes, uint64_t n,
                    err_t *err);
/* Reads the request's two fields; the caller checks them, then
 * msg_read_probe_payload drops the n bytes and ends the message. */
int msg_read_probe(wire_reader *r, uint32_t *reply_bytes, uint64_t *n, err_t *err);
int msg_read_probe_payload(wire_reader *r, uint64_t n, err_t *err);
int msg_write_probe_reply(wire_writer *w, uint32_t call_id, uint32_t reply_bytes, err_t *err);
/* Reads the whole reply; *back: the byte count the server announced. */
int msg_read_probe_reply(wire_reader *r, uint32_t want_id, const char *label, uint64_t *back,
                         err_t *err);

/* ---- FILE_READ (server -> client) and FILE_DATA (client -> server) ---- */
typedef struct msg_file_read {
    uint32_t param;  /* the rfile's parameter index */
    uint64_t offset;
    uint32_t length; /* at most FILES_MAX_READ      */
} msg_file_read;
int msg_write_file_read(wire_writer *w, uint32_t call_id, const msg_file_read *q, err_t *err);
/* Its body after wire_next_message gave PROTO_FILE_READ (ends the message). */
int msg_read_file_read(wire_reader *r, msg_file_read *q, err_t *err);
/* A whole FILE_DATA: on success (code 0) the n bytes at data; on failure
 * the code and detail only. */
int msg_write_file_data(wire_writer *w, uint32_t call_id, int code, const char *detail,
                        const void *data, uint64_t n, err_t *err);
/* Reads the next message as the FILE_DATA for want_id: its status and, on
 * success, its byte count *n (at most max): the caller then reads *n
 * bytes, wire_skip_pad8 and wire_expect_end.  A failure status is the
 * client's, in call_err (the message is ended, rc 0); anything malformed
 * is rc != 0 in err, and the connection cannot go on. */
int msg_read_file_data_head(wire_reader *r, uint32_t want_id, uint64_t max, uint64_t *n,
                            err_t *call_err, err_t *err);

#endif
