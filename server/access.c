/* access.c -- the server's side of tokens: the challenge in the HELLO reply,
 * the check of AUTH, and the rights each request needs. */
#include "access.h"

#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "reply.h"

int access_on(const token_table *t)
{
    return t != NULL && t->count > 0;
}

/* A refusal: the reply written, the connection closed after it. */
static int refuse_closing(wire_writer *w, uint32_t call_id, err_t *why)
{
    err_t ignored;
    return reply_error(w, call_id, why->code, why->detail, &ignored) == 0 ? ACCESS_CLOSE_AFTER : -1;
}

int access_hello(const token_table *t, wire_reader *r, wire_writer *w, uint32_t call_id, conn_access *a,
                 err_t *why)
{
    msg_hello h, answer;
    err_t ignored;
    err_clear(why);
    if (msg_read_hello(r, &h, &ignored) != 0) return -1;
    /* A HELLO starts the connection's authentication over. */
    memset(a, 0, sizeof *a);
    if (h.version != PROTO_VERSION || !access_on(t))
        return reply_hello(w, call_id, &h, NULL, &ignored) == 0 ? ACCESS_GO_ON : -1;
    if (!h.has_token) {
        err_set(why, NUMRPC_EAUTH, ACCESS_NEED_TOKEN);
        return refuse_closing(w, call_id, why);
    }
    const token *tok = tokens_find(t, h.token);
    if (tok == NULL) {
        err_set(why, NUMRPC_EAUTH, "token %s was refused", h.token);
        return refuse_closing(w, call_id, why);
    }
    memset(&answer, 0, sizeof answer);
    if (auth_nonce(a->server_nonce, why) != 0) return refuse_closing(w, call_id, why);
    memcpy(a->client_nonce, h.nonce, MSG_NONCE_BYTES);
    memcpy(a->token, tok->name, sizeof a->token);
    a->state = ACCESS_CHALLENGED;
    answer.has_token = answer.has_proof = 1;
    memcpy(answer.token, tok->name, sizeof answer.token);
    memcpy(answer.nonce, a->server_nonce, MSG_NONCE_BYTES);
    auth_proof(tok, AUTH_BY_SERVER, a->client_nonce, a->server_nonce, NULL, answer.proof);
    return reply_hello(w, call_id, &h, &answer, &ignored) == 0 ? ACCESS_GO_ON : -1;
}

int access_auth(const token_table *t, wire_reader *r, wire_writer *w, uint32_t call_id, conn_access *a,
                err_t *why)
{
    uint8_t proof[HMAC_SHA256_BYTES];
    err_t ignored;
    err_clear(why);
    if (msg_read_auth(r, proof, &ignored) != 0) return -1;
    if (!access_on(t)) {
        err_set(why, NUMRPC_EPROTO, "AUTH to a server without tokens");
        return refuse_closing(w, call_id, why);
    }
    if (a->state != ACCESS_CHALLENGED) {
        err_set(why, NUMRPC_EAUTH, "AUTH without a challenge: send a HELLO naming the token first");
        memset(a, 0, sizeof *a);
        return refuse_closing(w, call_id, why);
    }
    const token *tok = tokens_find(t, a->token);
    int ok = tok != NULL && auth_proof_ok(tok, AUTH_BY_CLIENT, a->client_nonce, a->server_nonce, NULL, proof);
    /* The challenge answers one AUTH, right or wrong. */
    memset(a->server_nonce, 0, sizeof a->server_nonce);
    if (!ok) {
        err_set(why, NUMRPC_EAUTH, "token %s was refused", a->token);
        memset(a, 0, sizeof *a);
        return refuse_closing(w, call_id, why);
    }
    a->state = ACCESS_GRANTED;
    return msg_reply_simple(w, call_id, NUMRPC_OK, "", &ignored) == 0 ? ACCESS_GO_ON : -1;
}

int access_may(const token_table *t, const conn_access *a, unsigned right, const char *what, err_t *err)
{
    if (!access_on(t)) return 0;
    if (a->state != ACCESS_GRANTED) return err_set(err, NUMRPC_EAUTH, ACCESS_NEED_TOKEN);
    const token *tok = tokens_find(t, a->token);
    if (tok == NULL) return err_set(err, NUMRPC_EAUTH, "token %s was refused", a->token);
    if (!(tok->rights & right)) return err_set(err, NUMRPC_EAUTH, "token %s may not %s", a->token, what);
    return 0;
}

int access_may_call(const token_table *t, const char *identity, const char *module, err_t *err)
{
    if (!access_on(t)) return 0;
    const token *tok = tokens_find(t, identity);
    if (tok == NULL) return err_set(err, NUMRPC_EAUTH, "token %s was refused", identity[0] ? identity : "(none)");
    if (!token_may_call(tok, module))
        return err_set(err, NUMRPC_EAUTH, "token %s may not call module %s", identity, module);
    return 0;
}
