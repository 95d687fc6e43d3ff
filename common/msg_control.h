/* msg_control.h -- the two messages a server's dispatcher answers itself
 * (docs/protocol.md "STATUS and ADMIN"): one writer and one reader each. */
#ifndef NUMRPC_COMMON_MSG_CONTROL_H
#define NUMRPC_COMMON_MSG_CONTROL_H

#include <stdint.h>

#include "error.h"
#include "hmac.h"
#include "iface.h"
#include "msg.h"
#include "wire.h"

#define MSG_STATUS_MAX_ROUTINES 100000u /* a STATUS reply's rows at most      */
#define MSG_ADMIN_COMMAND_MAX 1024u     /* an ADMIN command's bytes at most    */
#define MSG_ADMIN_NONCE_MAX 256u        /* a challenge's bytes at most         */
#define MSG_ADMIN_TEXT_MAX WIRE_MAX_STRING /* a command reply's text at most   */
#define MSG_STATUS_ORIGIN_MAX 127u      /* a routine's origin text at most     */

/* ADMIN steps: the request's first field. */
enum { MSG_ADMIN_CHALLENGE = 1, MSG_ADMIN_COMMAND = 2 };

/* ---- STATUS: u32 version -> the server's counters ---- */
/* One routine version in the shared counters. */
typedef struct msg_status_routine {
    char name[IFACE_MAX_NAME + 1];
    char module[IFACE_MAX_NAME + 1];
    uint64_t hash, calls, errors, bytes_in, bytes_out;
    uint32_t offered;      /* 0: an older version, or a module unregistered since */
    double total_s, p99_s; /* seconds in the worker: all calls, 99th percentile   */
    char origin[MSG_STATUS_ORIGIN_MAX + 1]; /* "stub dir", "registered live at
                              ..." (trailing list; "" from older servers)     */
} msg_status_routine;

/* What a server asks of its clients (msg_status.security). */
#define MSG_STATUS_TLS 1u    /* every connection is TLS */
#define MSG_STATUS_TOKENS 2u /* a token's proof is required */

typedef struct msg_status {
    char server[MSG_PEER_MAX + 1]; /* "numrpc-server 1.0"                   */
    double uptime, load[3];        /* seconds; the host's 1, 5, 15-min load */
    uint32_t workers, max_workers, in_flight, queued, connections, draining, nroutines;
    uint64_t restarts;
    msg_status_routine *rows; /* nroutines rows: the writer's own; the
                                 reader's malloc'd (msg_status_free)    */
    uint32_t security;     /* MSG_STATUS_TLS | MSG_STATUS_TOKENS (a trailing field) */
    uint32_t has_security; /* reader: the server sent it (older ones do not) */
    uint64_t handles, handle_bytes; /* data handles kept and their bytes (trailing) */
    uint32_t has_handles;           /* reader: the server sent them          */
    uint64_t pulled_bytes, lent_bytes; /* handle bytes moved in from other
                                          servers / out on tickets (trailing) */
    uint32_t has_moves;                /* reader: the server sent them       */
    uint32_t has_origins;              /* reader: rows[].origin was sent     */
} msg_status;

/* The request, as one whole message. */
int msg_write_status(wire_writer *w, uint32_t call_id, err_t *err);
/* Its body after wire_next_message gave PROTO_STATUS (ends the message). */
int msg_read_status(wire_reader *r, uint32_t *version, err_t *err);
/* The OK reply. */
int msg_write_status_reply(wire_writer *w, uint32_t call_id, const msg_status *s, err_t *err);
/* Reads the reply to want_id (or to call 0: a refused connection); on
 * success s holds malloc'd parts: msg_status_free. */
int msg_read_status_reply(wire_reader *r, uint32_t want_id, const char *label, msg_status *s,
                          err_t *err);
/* Frees what msg_read_status_reply allocated; safe to repeat. */
void msg_status_free(msg_status *s);

/* ---- ADMIN step 1: a one-use challenge ---- */
int msg_write_admin_challenge(wire_writer *w, uint32_t call_id, err_t *err);
/* The reply: the nonce. */
int msg_write_admin_challenge_reply(wire_writer *w, uint32_t call_id, const uint8_t *nonce,
                                    uint32_t len, err_t *err);
/* *nonce malloc'd (the caller frees), at most MSG_ADMIN_NONCE_MAX bytes. */
int msg_read_admin_challenge_reply(wire_reader *r, uint32_t want_id, const char *label,
                                   uint8_t **nonce, uint32_t *len, err_t *err);

/* ---- ADMIN step 2: a command and HMAC-SHA256 over it ---- */
int msg_write_admin_command(wire_writer *w, uint32_t call_id, const char *command,
                            const uint8_t mac[HMAC_SHA256_BYTES], err_t *err);
/* The reply: the command's text. */
int msg_write_admin_command_reply(wire_writer *w, uint32_t call_id, const char *text, err_t *err);
/* *text malloc'd (the caller frees). */
int msg_read_admin_command_reply(wire_reader *r, uint32_t want_id, const char *label, char **text,
                                 err_t *err);

/* ---- ADMIN requests on the server ---- */
/* The step, after wire_next_message gave PROTO_ADMIN; then wire_expect_end
 * (step 1: nothing follows) or msg_read_admin_command (step 2). */
int msg_read_admin_step(wire_reader *r, uint32_t *step, err_t *err);
/* The command (MSG_ADMIN_COMMAND_MAX + 1 bytes at cmd, NUL-terminated; one
 * with a NUL inside is NUMRPC_EPROTO), its length, and the MAC; ends the
 * message. */
int msg_read_admin_command(wire_reader *r, char *cmd, uint32_t *cmd_len,
                           uint8_t mac[HMAC_SHA256_BYTES], err_t *err);

#endif
