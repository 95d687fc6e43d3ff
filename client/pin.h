/* pin.h -- a pin: one routine's interface written as a line of text, for
 * pin files and typed headers; its format and the pin file (pin.c). */
#ifndef NUMRPC_CLIENT_PIN_H
#define NUMRPC_CLIENT_PIN_H

#include <stddef.h>

#include "error.h"
#include "iface.h"

/* A pin line is "NAME HASH DESCRIPTOR": the routine's name, its interface
 * hash in 16 hex digits, and the descriptor (the XDR encoding GET_IFACE
 * carries) in base64.  docs/client.md describes it. */

/* Writes f's pin line (no newline) into a malloc'd *line_out (caller frees). */
int pin_format(const iface_t *f, char **line_out, err_t *err);
/* Decodes the pin line of len bytes into *f (caller calls iface_free): the
 * descriptor must decode, carry NAME and HASH, and hash to HASH.  Errors
 * are NUMRPC_EINVAL naming what is wrong; where says where the line is. */
int pin_parse(const char *line, size_t len, const char *where, iface_t *f, err_t *err);

/* The pins of a pin file: every routine it accepts. */
typedef struct pin_set {
    iface_t *pins; /* malloc'd, count entries, each decoded (pin_set_free) */
    size_t count;
} pin_set;

/* Reads pin file path into *set: '#' lines and blank lines are comments,
 * every other line a pin; a routine pinned twice is an error. */
int pin_set_load(const char *path, pin_set *set, err_t *err);
/* The pin of routine name, or NULL. */
const iface_t *pin_set_find(const pin_set *set, const char *name);
void pin_set_free(pin_set *set);

#endif
