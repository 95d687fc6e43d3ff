/* http_auth.h -- who may read an HTTP port (http_auth.c): with tokens, one
 * with the `status` right, as `Authorization: Bearer NAME:SECRET` or Basic. */
#ifndef NUMRPC_COMMON_HTTP_AUTH_H
#define NUMRPC_COMMON_HTTP_AUTH_H

#include <stddef.h>

#include "tokens.h"

/* The verdicts, as HTTP status codes. */
enum http_verdict { HTTP_ALLOWED = 200, HTTP_NEED_TOKEN = 401, HTTP_FORBIDDEN = 403 };

/* The verdict on a request whose Authorization header is authorization
 * (NULL: none), against tokens (none: anyone may read).  A token's secret
 * is taken only on a private channel (TLS, or a loopback peer): elsewhere
 * the request is refused, token or not.  why (len bytes) says, for the
 * refusal's body and the log, what is wrong. */
int http_auth_check(const token_table *tokens, const char *authorization, int private_channel, char *why,
                    size_t len);

#endif
