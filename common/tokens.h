/* tokens.h -- named secrets and what each may do: the token files of
 * servers, metaservers and clients, parsed by one reader (tokens.c). */
#ifndef NUMRPC_COMMON_TOKENS_H
#define NUMRPC_COMMON_TOKENS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "exposure.h"
#include "iface.h"

#define TOKEN_NAME_MAX 64        /* a token's name, bytes at most          */
#define TOKEN_SECRET_MIN 16      /* bytes (32 hex digits, 128 bits)        */
#define TOKEN_SECRET_MAX 64      /* bytes (128 hex digits)                 */
#define TOKEN_MODULES_MAX 32     /* modules of one `call:` right at most    */
#define TOKEN_TABLE_MAX 4096     /* lines of one token file at most         */

/* Rights, as bits: `call` (every routine), `call:m1,m2` (routines of those
 * modules: TOKEN_CALL_SOME with the list), `status`, `join`, `report`. */
enum token_right {
    TOKEN_CALL_ALL = 1u << 0,
    TOKEN_CALL_SOME = 1u << 1,
    TOKEN_STATUS = 1u << 2,
    TOKEN_JOIN = 1u << 3,
    TOKEN_REPORT = 1u << 4
};

typedef struct token {
    char name[TOKEN_NAME_MAX + 1];
    uint8_t secret[TOKEN_SECRET_MAX];
    size_t secret_len;
    unsigned rights; /* enum token_right bits (0 in a client's own file) */
    unsigned nmodules;
    char modules[TOKEN_MODULES_MAX][IFACE_MAX_NAME + 1]; /* of TOKEN_CALL_SOME */
} token;

/* A server's or metaserver's tokens: items malloc'd (tokens_free). */
typedef struct token_table {
    token *items;
    size_t count;
} token_table;

/* ---- Files ----
 * Both refuse a file that group or others may read ("token file F is
 * readable by others; chmod 600 F") and a bad line ("F:LINE: what"). */
/* Lines `name secret rights...` ('#' starts a comment), names unique. */
int tokens_load(const char *path, token_table *t, err_t *err);
/* A client's file: its first line, `name secret` (rights are ignored). */
int tokens_load_own(const char *path, token *out, err_t *err);
/* A reload (SIGHUP, `admin reload`) of a server's or metaserver's file:
 * reads path ("" = no tokens) into *fresh and checks that the socket
 * listen_fd, bound as bind_addr, may still serve with them (guard: its
 * other protection; tokens_on is set here).  0 with summary "N tokens from
 * F" or "no tokens: anyone who reaches the port may call"; else the error,
 * *fresh empty and summary "tokens not changed: WHY": the caller keeps its
 * table either way until it swaps in *fresh (then frees the old one). */
int tokens_reload(const char *path, int listen_fd, const char *bind_addr, exposure_guard guard, token_table *fresh,
                  char *summary, size_t len, err_t *err);
/* Frees the table's items (secrets wiped); safe to repeat. */
void tokens_free(token_table *t);

/* ---- Questions ---- */
/* The token called name, or NULL. */
const token *tokens_find(const token_table *t, const char *name);
/* The token called name when secret_hex (hex digits, as in a token file)
 * is its secret, else NULL; the secret is compared in constant time. */
const token *tokens_match_text(const token_table *t, const char *name, const char *secret_hex);
/* True when t may call routines of module `module`. */
int token_may_call(const token *t, const char *module);

#endif
