/* rights.c -- the metaserver's tokens: read at start, read again on SIGHUP
 * (a bad file keeps the old ones), and every question a connection asks of them. */
#include "metaserver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exposure.h"

/* The table, swapped whole by a reload; connection threads hold the read
 * lock only while they ask (never across I/O), and may take it while they
 * hold meta.lock (never the other way round). */
static token_table tokens;
static pthread_rwlock_t tokens_lock = PTHREAD_RWLOCK_INITIALIZER;

int rights_load(const meta_options *opt, err_t *err)
{
    return opt->token_file[0] ? tokens_load(opt->token_file, &tokens, err) : 0;
}

int rights_reload(const meta_options *opt, int listen_fd, int tls_on, char *summary, size_t len)
{
    token_table fresh, old;
    err_t err;
    exposure_guard guard = {.tls_on = tls_on, .allow_insecure = opt->allow_insecure};
    if (tokens_reload(opt->token_file, listen_fd, opt->bind_addr, guard, &fresh, summary, len, &err) != 0)
        return err.code;
    pthread_rwlock_wrlock(&tokens_lock);
    old = tokens;
    tokens = fresh;
    pthread_rwlock_unlock(&tokens_lock);
    tokens_free(&old);
    return 0;
}

int rights_on(void)
{
    pthread_rwlock_rdlock(&tokens_lock);
    int on = auth_accept_on(&tokens);
    pthread_rwlock_unlock(&tokens_lock);
    return on;
}

int rights_copy(token_table *out)
{
    memset(out, 0, sizeof *out);
    pthread_rwlock_rdlock(&tokens_lock);
    int rc = 0;
    if (tokens.count > 0 && (out->items = malloc(tokens.count * sizeof *tokens.items)) == NULL) rc = -1;
    else if (tokens.count > 0) {
        memcpy(out->items, tokens.items, tokens.count * sizeof *tokens.items);
        out->count = tokens.count;
    }
    pthread_rwlock_unlock(&tokens_lock);
    return rc;
}

int rights_hello(const msg_hello *h, const char *need_token, auth_peer *a, msg_hello *answer, err_t *why)
{
    pthread_rwlock_rdlock(&tokens_lock);
    int rc = auth_accept_hello(&tokens, h, need_token, a, answer, why);
    pthread_rwlock_unlock(&tokens_lock);
    return rc;
}

int rights_proof(auth_peer *a, const uint8_t proof[HMAC_SHA256_BYTES], err_t *why)
{
    pthread_rwlock_rdlock(&tokens_lock);
    int rc = auth_accept_proof(&tokens, a, proof, why);
    pthread_rwlock_unlock(&tokens_lock);
    return rc;
}

int rights_may(const auth_peer *a, unsigned right, const char *what, const char *need_token, err_t *why)
{
    pthread_rwlock_rdlock(&tokens_lock);
    int rc = auth_accept_may(&tokens, a, right, what, need_token, why);
    pthread_rwlock_unlock(&tokens_lock);
    return rc;
}

int rights_may_call(const auth_peer *a, const char *module, err_t *why)
{
    pthread_rwlock_rdlock(&tokens_lock);
    const token *tok = tokens_find(&tokens, a->token);
    int rc = 0;
    if (!auth_accept_on(&tokens)) rc = 0;
    else if (tok == NULL) rc = err_set(why, NUMRPC_EAUTH, "token %s was refused", a->token); /* gone since */
    else if (!token_may_call(tok, module))
        rc = err_set(why, NUMRPC_EAUTH, "token %s may not call module %s", a->token, module);
    pthread_rwlock_unlock(&tokens_lock);
    return rc;
}
