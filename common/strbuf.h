/* strbuf.h -- a growable text buffer for rendering (interfaces, status
 * pages): printf-style appends, one failure flag checked at the end. */
#ifndef NUMRPC_COMMON_STRBUF_H
#define NUMRPC_COMMON_STRBUF_H

#include <stddef.h>

/* Start as {0}.  p is malloc'd (NUL-terminated once anything was added);
 * the owner frees it, or takes it as the result. */
typedef struct strbuf {
    char *p;
    size_t len, cap;
    int failed; /* an append ran out of memory: p holds what came before */
} strbuf;

/* Appends formatted text; after a failure, nothing more is added. */
void strbuf_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* How strbuf_escaped writes a string that came from a peer. */
enum strbuf_escape {
    STRBUF_JSON,      /* a quoted JSON string; < > & as \u escapes, so that
                       * the text is inert inside HTML as well            */
    STRBUF_PROM_LABEL /* a Prometheus label value, without its quotes      */
};
/* Appends s escaped for style; bytes that are not UTF-8 become U+FFFD. */
void strbuf_escaped(strbuf *b, const char *s, enum strbuf_escape style);

#endif
