/* http_auth.c -- an HTTP request's token: its Authorization header parsed
 * (Bearer NAME:SECRET, or Basic with the same pair) and checked. */
#include "http_auth.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* NAME:SECRET, the longest a header may carry (anything longer is no token). */
#define PAIR_MAX (TOKEN_NAME_MAX + 1 + 2 * TOKEN_SECRET_MAX)

static int base64_value(int c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Decodes base64 text (padding optional) into out (NUL-terminated, cap
 * bytes with the NUL): 0, or -1 for text that is not base64 or too long. */
static int base64_decode(const char *text, char *out, size_t cap)
{
    size_t n = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (const char *p = text; *p && *p != '='; p++) {
        int v = base64_value((unsigned char)*p);
        if (v < 0) return -1;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (n + 1 >= cap) return -1;
            out[n++] = (char)(acc >> bits & 0xff);
        }
    }
    out[n] = '\0';
    return memchr(out, '\0', n) ? -1 : 0; /* a NUL inside is no text */
}

/* The NAME:SECRET pair of the header into pair: 0, or -1 when it has none. */
static int credentials_of(const char *authorization, char *pair, size_t cap)
{
    const char *p = authorization;
    if (strncasecmp(p, "Bearer ", 7) == 0) {
        p += 7;
        while (*p == ' ') p++;
        if (strlen(p) >= cap) return -1;
        snprintf(pair, cap, "%s", p);
        return 0;
    }
    if (strncasecmp(p, "Basic ", 6) == 0) {
        p += 6;
        while (*p == ' ') p++;
        return base64_decode(p, pair, cap);
    }
    return -1;
}

int http_auth_check(const token_table *tokens, const char *authorization, int private_channel, char *why,
                    size_t len)
{
    why[0] = '\0';
    if (tokens == NULL || tokens->count == 0) return HTTP_ALLOWED;
    if (!private_channel) {
        snprintf(why, len,
                 "this port takes tokens only over HTTPS (--tls-cert) or from loopback: a token's secret "
                 "would cross the network in the clear");
        return HTTP_FORBIDDEN;
    }
    if (authorization == NULL || authorization[0] == '\0') {
        snprintf(why, len,
                 "this port requires a token with the status right: send `Authorization: Bearer NAME:SECRET` "
                 "(name and secret as in the token file), or HTTP Basic with the same pair");
        return HTTP_NEED_TOKEN;
    }
    char pair[PAIR_MAX + 1];
    char *colon = NULL;
    if (credentials_of(authorization, pair, sizeof pair) != 0 || (colon = strchr(pair, ':')) == NULL) {
        snprintf(why, len, "the Authorization header holds no token: send `Bearer NAME:SECRET` or HTTP Basic");
        return HTTP_NEED_TOKEN;
    }
    *colon = '\0';
    const token *t = tokens_match_text(tokens, pair, colon + 1);
    /* The name goes back in the refusal and into the log: only as a token
     * file could hold it. */
    static const char name_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.@";
    if (pair[strspn(pair, name_chars)] != '\0' || strlen(pair) > TOKEN_NAME_MAX)
        snprintf(pair, sizeof pair, "(a name no token file holds)");
    int verdict = HTTP_ALLOWED;
    if (t == NULL) {
        snprintf(why, len, "token %.64s was refused", pair);
        verdict = HTTP_NEED_TOKEN;
    } else if (!(t->rights & TOKEN_STATUS)) {
        snprintf(why, len, "token %.64s may not read this server's status", pair);
        verdict = HTTP_FORBIDDEN;
    }
    memset(pair, 0, sizeof pair);
    return verdict;
}
