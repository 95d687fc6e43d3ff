/* pin.c -- pins: a routine's interface as one line "NAME HASH DESCRIPTOR"
 * (descriptor in base64), written, parsed, and read from a pin file. */
#include "pin.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PIN_FILE_MAX (16u << 20) /* bytes of a pin file we read at most */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* base64 of n bytes into out (4 * ceil(n / 3) + 1 bytes), NUL-terminated. */
static void b64_encode(const uint8_t *in, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < n) v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n) v |= in[i + 2];
        out[o++] = b64[v >> 18];
        out[o++] = b64[(v >> 12) & 63];
        out[o++] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? b64[v & 63] : '=';
    }
    out[o] = '\0';
}

static int b64_value(char c)
{
    const char *at = c ? strchr(b64, c) : NULL;
    return at ? (int)(at - b64) : -1;
}

/* Decodes the n characters of text (a multiple of 4, '=' padding only at
 * the end) into a malloc'd *out of *out_len bytes; -1 when malformed. */
static int b64_decode(const char *text, size_t n, uint8_t **out, size_t *out_len)
{
    if (n == 0 || n % 4 != 0) return -1;
    uint8_t *buf = malloc(n / 4 * 3);
    if (buf == NULL) return -1;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 4) {
        int pad = (text[i + 2] == '=') + (text[i + 3] == '=');
        int v0 = b64_value(text[i]), v1 = b64_value(text[i + 1]);
        int v2 = pad == 2 ? 0 : b64_value(text[i + 2]), v3 = pad ? 0 : b64_value(text[i + 3]);
        if (v0 < 0 || v1 < 0 || v2 < 0 || v3 < 0 || (pad && i + 4 != n) ||
            (pad == 1 && text[i + 2] == '=')) {
            free(buf);
            return -1;
        }
        uint32_t v = (uint32_t)v0 << 18 | (uint32_t)v1 << 12 | (uint32_t)v2 << 6 | (uint32_t)v3;
        buf[o++] = (uint8_t)(v >> 16);
        if (pad < 2) buf[o++] = (uint8_t)(v >> 8);
        if (pad < 1) buf[o++] = (uint8_t)v;
    }
    *out = buf;
    *out_len = o;
    return 0;
}

int pin_format(const iface_t *f, char **line_out, err_t *err)
{
    uint8_t *blob = NULL;
    size_t len = 0;
    int rc = iface_encode(f, &blob, &len, err);
    if (rc != 0) return rc;
    size_t cap = strlen(f->name) + 1 + 16 + 1 + (len + 2) / 3 * 4 + 1;
    char *line = malloc(cap);
    if (line == NULL) {
        free(blob);
        return err_set(err, NUMRPC_ENOMEM, "%s: pin line", f->name);
    }
    int head = snprintf(line, cap, "%s %016" PRIx64 " ", f->name, f->hash);
    b64_encode(blob, len, line + head);
    free(blob);
    *line_out = line;
    return 0;
}

/* The next space-separated word of line[*at .. len) (empty at the end). */
static size_t next_word(const char *line, size_t len, size_t *at, const char **word)
{
    while (*at < len && (line[*at] == ' ' || line[*at] == '\t')) (*at)++;
    *word = line + *at;
    size_t start = *at;
    while (*at < len && line[*at] != ' ' && line[*at] != '\t' && line[*at] != '\r') (*at)++;
    return *at - start;
}

int pin_parse(const char *line, size_t len, const char *where, iface_t *f, err_t *err)
{
    const char *name, *hash_text, *desc, *extra;
    size_t at = 0;
    size_t name_len = next_word(line, len, &at, &name);
    size_t hash_len = next_word(line, len, &at, &hash_text);
    size_t desc_len = next_word(line, len, &at, &desc);
    size_t extra_len = next_word(line, len, &at, &extra);
    char hex[17];
    char *end = NULL;
    uint64_t hash = 0;
    if (hash_len == 16) {
        memcpy(hex, hash_text, 16);
        hex[16] = '\0';
        hash = strtoull(hex, &end, 16);
    }
    if (name_len == 0 || name_len > IFACE_MAX_NAME || hash_len != 16 || end != hex + 16 ||
        desc_len == 0 || extra_len != 0)
        return err_set(err, NUMRPC_EINVAL, "%s: not a pin line (want NAME HASH DESCRIPTOR, "
                       "as `numrpc describe --pin` writes)", where);
    uint8_t *blob = NULL;
    size_t blob_len = 0;
    if (desc_len > (size_t)IFACE_MAX_BLOB / 3 * 4 + 4 || b64_decode(desc, desc_len, &blob, &blob_len) != 0)
        return err_set(err, NUMRPC_EINVAL, "%s: the descriptor of %.*s is not base64 of at most %u bytes",
                       where, (int)name_len, name, (unsigned)IFACE_MAX_BLOB);
    int rc = iface_decode(blob, blob_len, f, err);
    free(blob);
    if (rc != 0) {
        char why[sizeof err->detail];
        snprintf(why, sizeof why, "%s", err->detail);
        return err_set(err, NUMRPC_EINVAL, "%s: the descriptor of %.*s: %s", where, (int)name_len, name, why);
    }
    uint64_t claimed = f->hash;
    rc = iface_compute_hash(f, err);
    if (rc == 0 && (strlen(f->name) != name_len || memcmp(f->name, name, name_len) != 0 ||
                    claimed != hash || f->hash != hash))
        rc = err_set(err, NUMRPC_EINVAL, "%s: the pin of %.*s (hash %016" PRIx64 ") holds the "
                     "descriptor of %s with hash %016" PRIx64 " (it says %016" PRIx64 ")", where,
                     (int)name_len, name, hash, f->name, f->hash, claimed);
    if (rc != 0) iface_free(f);
    return rc;
}

/* Reads all of path (at most PIN_FILE_MAX bytes) into a malloc'd string. */
static int read_whole(const char *path, char **text, size_t *len, err_t *err)
{
    FILE *in = fopen(path, "r");
    if (in == NULL) return err_set(err, NUMRPC_EINVAL, "pin file %s: %s", path, strerror(errno));
    long size = fseek(in, 0, SEEK_END) == 0 ? ftell(in) : -1;
    char *buf = NULL;
    int rc = 0;
    if (size < 0 || fseek(in, 0, SEEK_SET) != 0)
        rc = err_set(err, NUMRPC_EINVAL, "pin file %s: not a regular file", path);
    else if (size > (long)PIN_FILE_MAX)
        rc = err_set(err, NUMRPC_EINVAL, "pin file %s: over %u bytes", path, PIN_FILE_MAX);
    else if ((buf = malloc((size_t)size + 1)) == NULL)
        rc = err_set(err, NUMRPC_ENOMEM, "pin file %s", path);
    size_t n = rc == 0 ? fread(buf, 1, (size_t)size, in) : 0;
    if (rc == 0 && ferror(in)) rc = err_set(err, NUMRPC_EINVAL, "pin file %s: read error", path);
    fclose(in);
    if (rc != 0) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}

int pin_set_load(const char *path, pin_set *set, err_t *err)
{
    char *text = NULL;
    size_t len = 0;
    *set = (pin_set){NULL, 0};
    int rc = read_whole(path, &text, &len, err);
    size_t cap = 0, lineno = 0;
    for (size_t at = 0; rc == 0 && at < len;) {
        const char *line = text + at, *nl = memchr(line, '\n', len - at);
        size_t n = nl ? (size_t)(nl - line) : len - at;
        at += n + 1;
        lineno++;
        size_t skip = strspn(line, " \t\r");
        if (skip >= n || line[skip] == '#') continue;
        if (set->count == cap) {
            iface_t *more = realloc(set->pins, (cap ? cap * 2 : 16) * sizeof *more);
            if (more == NULL) {
                rc = err_set(err, NUMRPC_ENOMEM, "pin file %s", path);
                break;
            }
            set->pins = more;
            cap = cap ? cap * 2 : 16;
        }
        char where[320];
        snprintf(where, sizeof where, "pin file %s, line %zu", path, lineno);
        iface_t pin;
        rc = pin_parse(line, n, where, &pin, err);
        if (rc == 0 && pin_set_find(set, pin.name)) {
            rc = err_set(err, NUMRPC_EINVAL, "%s: %s is pinned twice", where, pin.name);
            iface_free(&pin);
        }
        if (rc == 0) set->pins[set->count++] = pin;
    }
    free(text);
    if (rc != 0) pin_set_free(set);
    return rc;
}

const iface_t *pin_set_find(const pin_set *set, const char *name)
{
    for (size_t i = 0; i < set->count; i++)
        if (strcmp(set->pins[i].name, name) == 0) return &set->pins[i];
    return NULL;
}

void pin_set_free(pin_set *set)
{
    for (size_t i = 0; i < set->count; i++) iface_free(&set->pins[i]);
    free(set->pins);
    *set = (pin_set){NULL, 0};
}
