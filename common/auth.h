/* auth.h -- the token proof of HELLO and AUTH (docs/protocol.md "Tokens"):
 * HMAC challenges both ways, no secret on the wire, one pair for every side. */
#ifndef NUMRPC_COMMON_AUTH_H
#define NUMRPC_COMMON_AUTH_H

#include <stdint.h>

#include "error.h"
#include "hmac.h"
#include "msg.h"
#include "tokens.h"

#define AUTH_BINDING_BYTES 32u /* TLS channel binding, when TLS carries the stream */

/* Who proves: the server answers HELLO with HMAC(secret, "numrpc server" ‖
 * client nonce ‖ server nonce ‖ binding); the client sends AUTH with
 * HMAC(secret, "numrpc client" ‖ server nonce ‖ client nonce ‖ binding). */
enum auth_side { AUTH_BY_SERVER = 1, AUTH_BY_CLIENT = 2 };

/* ---- Proofs ----
 * binding: NULL (plain TCP) or AUTH_BINDING_BYTES bytes of the TLS
 * channel's binding, the same on both ends. */
void auth_proof(const token *t, int side, const uint8_t client_nonce[MSG_NONCE_BYTES],
                const uint8_t server_nonce[MSG_NONCE_BYTES], const uint8_t *binding,
                uint8_t out[HMAC_SHA256_BYTES]);
/* True when got is the proof auth_proof gives (compared in constant time). */
int auth_proof_ok(const token *t, int side, const uint8_t client_nonce[MSG_NONCE_BYTES],
                  const uint8_t server_nonce[MSG_NONCE_BYTES], const uint8_t *binding,
                  const uint8_t got[HMAC_SHA256_BYTES]);
/* Fresh random bytes for a nonce. */
int auth_nonce(uint8_t out[MSG_NONCE_BYTES], err_t *err);

/* The binding proofs on c must cover: buf filled with its TLS channel's
 * (tls_client_peer), or NULL for a stream that is not a TLS client's. */
const uint8_t *auth_binding_of(const msg_conn *c, uint8_t buf[AUTH_BINDING_BYTES]);

/* ---- The client's side, on a connection just opened ----
 * Sends HELLO with t's name and a fresh nonce (hello: version, packet
 * size, peer name), reads the reply, checks the server's proof (EAUTH
 * "server at H:P did not prove it holds token NAME" otherwise), then
 * writes AUTH held: it goes out with the next message.  The two messages
 * carry the call ids hello_id and auth_id (auth_client_finish reads the
 * AUTH's reply). */
int auth_client_hello(msg_conn *c, const token *t, const msg_hello *hello, const uint8_t *binding,
                      uint32_t hello_id, uint32_t auth_id, err_t *err);
/* Reads the reply to the AUTH (flushing it first if it is still held). */
int auth_client_finish(msg_conn *c, uint32_t auth_id, err_t *err);
/* The same with the client's token read from the file path (a client's
 * `name secret` file; bound to c's TLS channel when it has one: auth_binding_of;
 * the secret is wiped after use).  path NULL or "":
 * no token, nothing sent, *auth_sent 0; else *auth_sent 1 once the AUTH
 * is held (the caller sends its request, then auth_client_finish). */
int auth_client_hello_file(msg_conn *c, const char *path, const msg_hello *hello, uint32_t hello_id,
                           uint32_t auth_id, int *auth_sent, err_t *err);

#endif
