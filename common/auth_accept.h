/* auth_accept.h -- the accepting side of the token exchange, shared by the
 * server and the metaserver: a HELLO's challenge, an AUTH's check, rights. */
#ifndef NUMRPC_COMMON_AUTH_ACCEPT_H
#define NUMRPC_COMMON_AUTH_ACCEPT_H

#include <stdint.h>

#include "auth.h"
#include "error.h"
#include "hmac.h"
#include "msg.h"
#include "tokens.h"

/* One connection's authentication, kept by whoever serves it.  The
 * functions below only decide and fill fields; the caller writes the
 * replies (each process has its own reply form) and closes the connection
 * after any refusal of HELLO or AUTH. */
enum auth_peer_state { AUTH_PEER_NONE = 0, AUTH_PEER_CHALLENGED, AUTH_PEER_GRANTED };
typedef struct auth_peer {
    int state;
    char token[TOKEN_NAME_MAX + 1]; /* the name its HELLO offered          */
    uint8_t client_nonce[MSG_NONCE_BYTES];
    uint8_t server_nonce[MSG_NONCE_BYTES]; /* one use: an AUTH clears it  */
    int bound;                             /* the stream is TLS: proofs cover */
    uint8_t binding[AUTH_BINDING_BYTES];   /* its channel binding (kept over
                                            * a new HELLO)                    */
} auth_peer;

/* The connection is TLS with this channel binding (tls_stream_state's):
 * every proof on it, both ways, covers the binding, so a proof made for
 * another channel (or without TLS) is refused.  Call once, before HELLO. */
void auth_accept_bind(auth_peer *a, const uint8_t binding[AUTH_BINDING_BYTES]);
/* Forgets a's authentication (state, token, nonces), keeping its channel
 * binding. */
void auth_accept_reset(auth_peer *a);

/* True when tokens are on (t holds some). */
int auth_accept_on(const token_table *t);
/* For the HELLO h (read already; its version is the caller's business):
 * starts a's authentication over and clears answer; with tokens, fills
 * answer's token block (name, server nonce, the server's proof).  0, or a
 * refusal: EAUTH in why -- need_token (the process's
 * "this ... requires a token" sentence) for a HELLO without one, "token
 * NAME was refused" for an unknown name. */
int auth_accept_hello(const token_table *t, const msg_hello *h, const char *need_token, auth_peer *a,
                      msg_hello *answer, err_t *why);
/* For an AUTH's proof: 0 (a is granted), or EAUTH in why ("AUTH without a
 * challenge ...", "token NAME was refused"); EPROTO without tokens.  A
 * challenge answers one AUTH, right or wrong. */
int auth_accept_proof(const token_table *t, auth_peer *a, const uint8_t proof[HMAC_SHA256_BYTES], err_t *why);
/* May a's identity do `right` (TOKEN_STATUS, TOKEN_JOIN ...)?  0 (always
 * without tokens), or EAUTH in err: need_token before a good AUTH, "token
 * NAME was refused" for a token gone since, "token NAME may not WHAT". */
int auth_accept_may(const token_table *t, const auth_peer *a, unsigned right, const char *what,
                    const char *need_token, err_t *err);

#endif
