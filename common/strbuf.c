/* strbuf.c -- the growable text buffer: formats in place, doubling the
 * buffer when the text does not fit; peers' strings escaped on the way in. */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void strbuf_printf(strbuf *b, const char *fmt, ...)
{
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap + (size_t)n + 1) * 2;
        char *grown = realloc(b->p, cap);
        if (grown == NULL) {
            b->failed = 1;
            return;
        }
        b->p = grown;
        b->cap = cap;
    }
}

/* The length of the UTF-8 sequence at s (1 to 4), or 0 when it is not one
 * (overlong forms, surrogates and code points past U+10FFFF included). */
static int utf8_sequence(const unsigned char *s)
{
    unsigned c = s[0];
    int n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (n <= 1) return n;
    unsigned cp = c & (0x7f >> n);
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    static const unsigned least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

void strbuf_escaped(strbuf *b, const char *s, enum strbuf_escape style)
{
    const unsigned char *p = (const unsigned char *)s;
    if (style == STRBUF_JSON) strbuf_printf(b, "\"");
    while (*p && !b->failed) {
        int n = utf8_sequence(p);
        if (n == 0) {
            strbuf_printf(b, style == STRBUF_JSON ? "\\ufffd" : "\xef\xbf\xbd");
            p++;
        } else if (n > 1) {
            strbuf_printf(b, "%.*s", n, (const char *)p);
            p += n;
        } else if (*p == '\\' || *p == '"') {
            strbuf_printf(b, "\\%c", *p++);
        } else if (*p == '\n') {
            strbuf_printf(b, "\\n");
            p++;
        } else if (style == STRBUF_JSON && (*p < 0x20 || *p == 0x7f || *p == '<' || *p == '>' || *p == '&')) {
            strbuf_printf(b, "\\u%04x", *p++);
        } else {
            strbuf_printf(b, "%c", *p++);
        }
    }
    if (style == STRBUF_JSON) strbuf_printf(b, "\"");
}
