/* access.c -- the server's side of tokens: the HELLO reply with its
 * challenge, the AUTH's reply, and the rights each request needs. */
#include "access.h"

#include <stdio.h>
#include <string.h>

#include "reply.h"

int access_on(const token_table *t)
{
    return auth_accept_on(t);
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
    if (h.version != PROTO_VERSION) { /* reply_hello says which versions */
        memset(a, 0, sizeof *a);
        return reply_hello(w, call_id, &h, NULL, &ignored) == 0 ? ACCESS_GO_ON : -1;
    }
    if (auth_accept_hello(t, &h, ACCESS_NEED_TOKEN, a, &answer, why) != 0) return refuse_closing(w, call_id, why);
    return reply_hello(w, call_id, &h, answer.has_token ? &answer : NULL, &ignored) == 0 ? ACCESS_GO_ON : -1;
}

int access_auth(const token_table *t, wire_reader *r, wire_writer *w, uint32_t call_id, conn_access *a,
                err_t *why)
{
    uint8_t proof[HMAC_SHA256_BYTES];
    err_t ignored;
    err_clear(why);
    if (msg_read_auth(r, proof, &ignored) != 0) return -1;
    if (auth_accept_proof(t, a, proof, why) != 0) return refuse_closing(w, call_id, why);
    return msg_reply_simple(w, call_id, NUMRPC_OK, "", &ignored) == 0 ? ACCESS_GO_ON : -1;
}

int access_may(const token_table *t, const conn_access *a, unsigned right, const char *what, err_t *err)
{
    return auth_accept_may(t, a, right, what, ACCESS_NEED_TOKEN, err);
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
