/* strbuf.c -- the growable text buffer: formats in place, doubling the
 * buffer when the text does not fit. */
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
