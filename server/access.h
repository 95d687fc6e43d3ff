/* access.h -- who may do what on this server once --token-file is set: the
 * HELLO + AUTH exchange the dispatcher answers (decided by common's
 * auth_accept.c), and the rights a request needs (access.c). */
#ifndef NUMRPC_SERVER_ACCESS_H
#define NUMRPC_SERVER_ACCESS_H

#include <stdint.h>

#include "auth_accept.h"
#include "error.h"
#include "msg.h"
#include "tokens.h"
#include "wire.h"

/* The answer to any request on a connection not yet authenticated. */
#define ACCESS_NEED_TOKEN "this server requires a token (set NUMRPC_TOKEN_FILE)"

/* A connection's authentication, kept by the dispatcher. */
typedef auth_peer conn_access;

/* What an exchange left: the connection goes on, or closes once the reply
 * (written either way) has gone out. */
enum access_outcome { ACCESS_GO_ON = 0, ACCESS_CLOSE_AFTER = 1 };

/* True when the server has tokens (t has some). */
int access_on(const token_table *t);
/* Answers the HELLO whose header r has read: the challenge when it names a
 * known token, EAUTH otherwise (why: the refusal, for the log).  The
 * outcome, or -1 when the message is malformed or cannot be answered. */
int access_hello(const token_table *t, wire_reader *r, wire_writer *w, uint32_t call_id, conn_access *a,
                 err_t *why);
/* Answers an AUTH: OK when its proof answers this connection's challenge,
 * else EAUTH "token NAME was refused".  As access_hello. */
int access_auth(const token_table *t, wire_reader *r, wire_writer *w, uint32_t call_id, conn_access *a,
                err_t *why);
/* May the connection's identity do `right` (TOKEN_STATUS ...)?  0, or EAUTH
 * in err: not authenticated (ACCESS_NEED_TOKEN) or without the right. */
int access_may(const token_table *t, const conn_access *a, unsigned right, const char *what, err_t *err);
/* May identity (the name the dispatcher lent the connection with) call
 * routines of module?  0, or EAUTH "token NAME may not call module M" (or
 * refused: its token is gone since a reload). */
int access_may_call(const token_table *t, const char *identity, const char *module, err_t *err);

#endif
