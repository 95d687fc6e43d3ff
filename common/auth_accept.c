/* auth_accept.c -- the server's and metaserver's side of HELLO + AUTH: the
 * challenge and proof for a token named in HELLO, the AUTH's check, rights. */
#include "auth_accept.h"

#include <string.h>

#include "auth.h"

void auth_accept_reset(auth_peer *a)
{
    auth_peer kept = {.bound = a->bound};
    memcpy(kept.binding, a->binding, sizeof kept.binding);
    *a = kept;
}

/* The binding proofs on a's connection cover, or NULL (plain TCP). */
static const uint8_t *binding_of(const auth_peer *a)
{
    return a->bound ? a->binding : NULL;
}

int auth_accept_on(const token_table *t)
{
    return t != NULL && t->count > 0;
}

void auth_accept_bind(auth_peer *a, const uint8_t binding[AUTH_BINDING_BYTES])
{
    a->bound = 1;
    memcpy(a->binding, binding, AUTH_BINDING_BYTES);
}

int auth_accept_hello(const token_table *t, const msg_hello *h, const char *need_token, auth_peer *a,
                      msg_hello *answer, err_t *why)
{
    err_clear(why);
    auth_accept_reset(a); /* a HELLO starts the authentication over */
    memset(answer, 0, sizeof *answer);
    if (!auth_accept_on(t)) return 0;
    if (!h->has_token) return err_set(why, NUMRPC_EAUTH, "%s", need_token);
    const token *tok = tokens_find(t, h->token);
    if (tok == NULL) return err_set(why, NUMRPC_EAUTH, "token %s was refused", h->token);
    int rc = auth_nonce(a->server_nonce, why);
    if (rc != 0) return rc;
    memcpy(a->client_nonce, h->nonce, MSG_NONCE_BYTES);
    memcpy(a->token, tok->name, sizeof a->token);
    a->state = AUTH_PEER_CHALLENGED;
    answer->has_token = answer->has_proof = 1;
    memcpy(answer->token, tok->name, sizeof answer->token);
    memcpy(answer->nonce, a->server_nonce, MSG_NONCE_BYTES);
    auth_proof(tok, AUTH_BY_SERVER, a->client_nonce, a->server_nonce, binding_of(a), answer->proof);
    return 0;
}

int auth_accept_proof(const token_table *t, auth_peer *a, const uint8_t proof[HMAC_SHA256_BYTES], err_t *why)
{
    err_clear(why);
    if (!auth_accept_on(t)) return err_set(why, NUMRPC_EPROTO, "AUTH to a peer without tokens");
    if (a->state != AUTH_PEER_CHALLENGED) {
        auth_accept_reset(a);
        return err_set(why, NUMRPC_EAUTH, "AUTH without a challenge: send a HELLO naming the token first");
    }
    const token *tok = tokens_find(t, a->token);
    int ok = tok != NULL && auth_proof_ok(tok, AUTH_BY_CLIENT, a->client_nonce, a->server_nonce, binding_of(a), proof);
    memset(a->server_nonce, 0, sizeof a->server_nonce); /* one AUTH per challenge */
    if (!ok) {
        err_set(why, NUMRPC_EAUTH, "token %s was refused", a->token);
        auth_accept_reset(a);
        return why->code;
    }
    a->state = AUTH_PEER_GRANTED;
    return 0;
}

int auth_accept_may(const token_table *t, const auth_peer *a, unsigned right, const char *what,
                    const char *need_token, err_t *err)
{
    if (!auth_accept_on(t)) return 0;
    if (a->state != AUTH_PEER_GRANTED) return err_set(err, NUMRPC_EAUTH, "%s", need_token);
    const token *tok = tokens_find(t, a->token);
    if (tok == NULL) return err_set(err, NUMRPC_EAUTH, "token %s was refused", a->token);
    if (!(tok->rights & right)) return err_set(err, NUMRPC_EAUTH, "token %s may not %s", a->token, what);
    return 0;
}
