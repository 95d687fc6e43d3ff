/* auth.c -- token proofs by HMAC challenge (both directions, bound to the
 * two nonces and, under TLS, the channel) and the client's HELLO + AUTH. */
#include "auth.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "tls.h"

/* What each side's MAC covers before the nonces: a proof of one side can
 * never be replayed as the other's. */
static const char server_label[] = "numrpc server";
static const char client_label[] = "numrpc client";

void auth_proof(const token *t, int side, const uint8_t client_nonce[MSG_NONCE_BYTES],
                const uint8_t server_nonce[MSG_NONCE_BYTES], const uint8_t *binding,
                uint8_t out[HMAC_SHA256_BYTES])
{
    uint8_t text[sizeof client_label - 1 + 2 * MSG_NONCE_BYTES + AUTH_BINDING_BYTES];
    size_t n = 0;
    const char *label = side == AUTH_BY_SERVER ? server_label : client_label;
    const uint8_t *first = side == AUTH_BY_SERVER ? client_nonce : server_nonce;
    const uint8_t *second = side == AUTH_BY_SERVER ? server_nonce : client_nonce;
    memcpy(text, label, sizeof client_label - 1);
    n += sizeof client_label - 1;
    memcpy(text + n, first, MSG_NONCE_BYTES);
    n += MSG_NONCE_BYTES;
    memcpy(text + n, second, MSG_NONCE_BYTES);
    n += MSG_NONCE_BYTES;
    if (binding) {
        memcpy(text + n, binding, AUTH_BINDING_BYTES);
        n += AUTH_BINDING_BYTES;
    }
    hmac_sha256(t->secret, t->secret_len, text, n, NULL, 0, NULL, 0, out);
}

int auth_proof_ok(const token *t, int side, const uint8_t client_nonce[MSG_NONCE_BYTES],
                  const uint8_t server_nonce[MSG_NONCE_BYTES], const uint8_t *binding,
                  const uint8_t got[HMAC_SHA256_BYTES])
{
    uint8_t want[HMAC_SHA256_BYTES];
    auth_proof(t, side, client_nonce, server_nonce, binding, want);
    return hmac_equal(want, got);
}

int auth_nonce(uint8_t out[MSG_NONCE_BYTES], err_t *err)
{
    if (getrandom(out, MSG_NONCE_BYTES, 0) != (ssize_t)MSG_NONCE_BYTES)
        return err_set(err, NUMRPC_ENOMEM, "no random bytes for a token challenge");
    return 0;
}

const uint8_t *auth_binding_of(const msg_conn *c, uint8_t buf[AUTH_BINDING_BYTES])
{
    _Static_assert(AUTH_BINDING_BYTES == TLS_BINDING_SIZE, "one binding size");
    tls_peer peer;
    int resumed;
    return tls_client_peer(&c->tp, &peer, buf, &resumed) == 0 ? buf : NULL;
}

int auth_client_hello(msg_conn *c, const token *t, const msg_hello *hello, const uint8_t *binding,
                      uint32_t hello_id, uint32_t auth_id, err_t *err)
{
    msg_hello mine = *hello, reply;
    mine.has_token = 1;
    mine.has_proof = 0;
    snprintf(mine.token, sizeof mine.token, "%s", t->name);
    int rc = auth_nonce(mine.nonce, err);
    if (rc == 0) rc = msg_write_hello(&c->writer, hello_id, &mine, err);
    if (rc == 0) rc = msg_read_hello_reply(&c->reader, hello_id, c->label, &reply, err);
    if (rc != 0) return rc;
    if (!reply.has_proof || strcmp(reply.token, t->name) != 0 ||
        !auth_proof_ok(t, AUTH_BY_SERVER, mine.nonce, reply.nonce, binding, reply.proof))
        return err_set(err, NUMRPC_EAUTH,
                       "server at %s did not prove it holds token %s (is the secret in your token file the "
                       "server's?)",
                       c->label, t->name);
    uint8_t proof[HMAC_SHA256_BYTES];
    auth_proof(t, AUTH_BY_CLIENT, mine.nonce, reply.nonce, binding, proof);
    return msg_write_auth(&c->writer, auth_id, proof, err);
}

int auth_client_finish(msg_conn *c, uint32_t auth_id, err_t *err)
{
    int rc = wire_writer_holding(&c->writer) ? wire_flush(&c->writer, err) : 0;
    if (rc == 0) rc = msg_read_reply(&c->reader, auth_id, c->label, err);
    if (rc == 0) rc = wire_expect_end(&c->reader, err);
    return rc;
}

int auth_client_hello_file(msg_conn *c, const char *path, const msg_hello *hello, uint32_t hello_id,
                           uint32_t auth_id, int *auth_sent, err_t *err)
{
    token own;
    uint8_t buf[AUTH_BINDING_BYTES];
    *auth_sent = 0;
    if (path == NULL || *path == '\0') return 0;
    memset(&own, 0, sizeof own);
    int rc = tokens_load_own(path, &own, err);
    if (rc == 0) rc = auth_client_hello(c, &own, hello, auth_binding_of(c, buf), hello_id, auth_id, err);
    memset(&own, 0, sizeof own);
    *auth_sent = rc == 0;
    return rc;
}
