/* tokens.c -- the one reader of token files (`name secret rights...`), for
 * servers, metaservers and clients, and the questions asked of a token. */
#include "tokens.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TOKEN_LINE_MAX 4096

/* ---- One line ---- */

static int valid_name_char(int c)
{
    return isalnum(c) || c == '_' || c == '-' || c == '.' || c == '@';
}

static int hex_value(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* "F:LINE: " before every complaint about a line. */
static int bad_line(err_t *err, const char *path, int lineno, const char *what, const char *word)
{
    return err_set(err, NUMRPC_EINVAL, "%s:%d: %s%s%.80s%s", path, lineno, what, word ? " \"" : "",
                   word ? word : "", word ? "\"" : "");
}

static int parse_name(const char *word, token *t, const char *path, int lineno, err_t *err)
{
    size_t n = strlen(word);
    if (n > TOKEN_NAME_MAX) return bad_line(err, path, lineno, "token name longer than 64 bytes:", word);
    for (size_t i = 0; i < n; i++)
        if (!valid_name_char((unsigned char)word[i]))
            return bad_line(err, path, lineno, "token name may hold letters, digits and _ - . @ only:", word);
    memcpy(t->name, word, n + 1);
    return 0;
}

static int parse_secret(const char *word, token *t, const char *path, int lineno, err_t *err)
{
    size_t n = strlen(word);
    if (n < 2 * TOKEN_SECRET_MIN || n > 2 * TOKEN_SECRET_MAX || n % 2 != 0)
        return bad_line(err, path, lineno,
                        "the secret must be an even number of hex digits, 32 (128 bits) to 128 (e.g. "
                        "`openssl rand -hex 32`)",
                        NULL);
    for (size_t i = 0; i < n; i += 2) {
        int hi = hex_value((unsigned char)word[i]), lo = hex_value((unsigned char)word[i + 1]);
        if (hi < 0 || lo < 0) return bad_line(err, path, lineno, "the secret holds a character that is no hex digit", NULL);
        t->secret[i / 2] = (uint8_t)(hi << 4 | lo);
    }
    t->secret_len = n / 2;
    return 0;
}

/* `call:m1,m2`: the modules after the colon. */
static int parse_modules(char *list, token *t, const char *path, int lineno, err_t *err)
{
    char *save = NULL;
    for (char *m = strtok_r(list, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
        size_t n = strlen(m);
        if (n == 0 || n > IFACE_MAX_NAME) return bad_line(err, path, lineno, "bad module name in call:", m);
        for (size_t i = 0; i < n; i++)
            if (!(isalnum((unsigned char)m[i]) || m[i] == '_'))
                return bad_line(err, path, lineno, "bad module name in call:", m);
        if (t->nmodules == TOKEN_MODULES_MAX)
            return bad_line(err, path, lineno, "more than 32 modules in call:", NULL);
        memcpy(t->modules[t->nmodules++], m, n + 1);
    }
    if (t->nmodules == 0) return bad_line(err, path, lineno, "call: names no module (call:blas,lapack)", NULL);
    t->rights |= TOKEN_CALL_SOME;
    return 0;
}

static int parse_right(char *word, token *t, const char *path, int lineno, err_t *err)
{
    if (strcmp(word, "call") == 0) t->rights |= TOKEN_CALL_ALL;
    else if (strncmp(word, "call:", 5) == 0) return parse_modules(word + 5, t, path, lineno, err);
    else if (strcmp(word, "status") == 0) t->rights |= TOKEN_STATUS;
    else if (strcmp(word, "join") == 0) t->rights |= TOKEN_JOIN;
    else if (strcmp(word, "report") == 0) t->rights |= TOKEN_REPORT;
    else
        return bad_line(err, path, lineno, "unknown right (call, call:MODULES, status, join, report):", word);
    return 0;
}

/* Splits line (modified) into words; a line with no words is 0 words. */
static int split_words(char *line, char **words, int max)
{
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    int n = 0;
    char *save = NULL;
    for (char *w = strtok_r(line, " \t\r\n", &save); w && n < max; w = strtok_r(NULL, " \t\r\n", &save))
        words[n++] = w;
    return n;
}

/* A line of words into t; with_rights: a server's line (rights needed). */
static int parse_line(char **words, int n, token *t, int with_rights, const char *path, int lineno, err_t *err)
{
    memset(t, 0, sizeof *t);
    if (n < 2) return bad_line(err, path, lineno, "expected `name secret rights...`", NULL);
    int rc = parse_name(words[0], t, path, lineno, err);
    if (rc == 0) rc = parse_secret(words[1], t, path, lineno, err);
    if (!with_rights) return rc;
    if (rc == 0 && n < 3)
        rc = bad_line(err, path, lineno, "token has no rights (call, call:MODULES, status, join, report)", NULL);
    for (int i = 2; rc == 0 && i < n; i++) rc = parse_right(words[i], t, path, lineno, err);
    return rc;
}

/* ---- Files ---- */

/* Opens path for reading if it is a regular file no one else may read. */
static FILE *open_private(const char *path, err_t *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        err_set(err, NUMRPC_EINVAL, "cannot read token file %s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        err_set(err, NUMRPC_EINVAL, "token file %s is not a regular file", path);
        close(fd);
        return NULL;
    }
    if (st.st_mode & 077) {
        err_set(err, NUMRPC_EINVAL, "token file %s is readable by others; chmod 600 %s", path, path);
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "r");
    if (f == NULL) {
        err_set(err, NUMRPC_ENOMEM, "token file %s", path);
        close(fd);
    }
    return f;
}

/* Reads the next line into buf: 1, 0 at the end, or an error for a line
 * too long. */
static int next_line(FILE *f, char *buf, size_t cap, const char *path, int lineno, err_t *err)
{
    if (fgets(buf, (int)cap, f) == NULL) return 0;
    if (strchr(buf, '\n') == NULL && !feof(f)) return bad_line(err, path, lineno, "line longer than 4096 bytes", NULL);
    return 1;
}

int tokens_load(const char *path, token_table *t, err_t *err)
{
    memset(t, 0, sizeof *t);
    FILE *f = open_private(path, err);
    if (f == NULL) return err->code;
    char line[TOKEN_LINE_MAX], *words[2 + TOKEN_MODULES_MAX + 8];
    int lineno = 0, rc = 0, more;
    size_t cap = 0;
    while (rc == 0 && (more = next_line(f, line, sizeof line, path, lineno + 1, err)) != 0) {
        lineno++;
        if (more < 0) {
            rc = err->code;
            break;
        }
        int n = split_words(line, words, (int)(sizeof words / sizeof words[0]));
        if (n == 0) continue;
        if (t->count == TOKEN_TABLE_MAX) {
            rc = bad_line(err, path, lineno, "more than 4096 tokens", NULL);
            break;
        }
        if (t->count == cap) {
            size_t grown = cap ? 2 * cap : 8;
            token *items = realloc(t->items, grown * sizeof *items);
            if (items == NULL) {
                rc = err_set(err, NUMRPC_ENOMEM, "token table of %zu", grown);
                break;
            }
            t->items = items;
            cap = grown;
        }
        token *x = &t->items[t->count];
        rc = parse_line(words, n, x, 1, path, lineno, err);
        if (rc == 0 && tokens_find(t, x->name) != NULL) rc = bad_line(err, path, lineno, "token named twice:", x->name);
        if (rc == 0) t->count++;
        else memset(x, 0, sizeof *x);
    }
    fclose(f);
    memset(line, 0, sizeof line);
    if (rc == 0 && t->count == 0) rc = err_set(err, NUMRPC_EINVAL, "token file %s holds no token", path);
    if (rc != 0) tokens_free(t);
    return rc;
}

int tokens_load_own(const char *path, token *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = open_private(path, err);
    if (f == NULL) return err->code;
    char line[TOKEN_LINE_MAX], *words[3];
    int lineno = 0, rc = NUMRPC_EINVAL, more;
    err_set(err, NUMRPC_EINVAL, "token file %s holds no token (a line `name secret`)", path);
    while ((more = next_line(f, line, sizeof line, path, lineno + 1, err)) != 0) {
        lineno++;
        if (more < 0) {
            rc = err->code;
            break;
        }
        int n = split_words(line, words, 3);
        if (n == 0) continue;
        rc = parse_line(words, n < 2 ? n : 2, out, 0, path, lineno, err);
        break;
    }
    fclose(f);
    memset(line, 0, sizeof line);
    if (rc != 0) memset(out, 0, sizeof *out);
    return rc;
}

int tokens_reload(const char *path, int listen_fd, const char *bind_addr, exposure_guard guard, token_table *fresh,
                  char *summary, size_t len, err_t *err)
{
    memset(fresh, 0, sizeof *fresh);
    int rc = path[0] ? tokens_load(path, fresh, err) : 0;
    guard.tokens_on = fresh->count > 0;
    if (rc == 0) rc = exposure_check(listen_fd, bind_addr, &guard, err);
    if (rc != 0) {
        tokens_free(fresh);
        snprintf(summary, len, "tokens not changed: %s", err->detail);
    } else if (fresh->count) {
        snprintf(summary, len, "%zu token%s from %s", fresh->count, fresh->count == 1 ? "" : "s", path);
    } else {
        snprintf(summary, len, "no tokens: anyone who reaches the port may call");
    }
    return rc;
}

void tokens_free(token_table *t)
{
    if (t->items) memset(t->items, 0, t->count * sizeof *t->items);
    free(t->items);
    t->items = NULL;
    t->count = 0;
}

/* ---- Questions ---- */

const token *tokens_find(const token_table *t, const char *name)
{
    for (size_t i = 0; t && i < t->count; i++)
        if (strcmp(t->items[i].name, name) == 0) return &t->items[i];
    return NULL;
}

const token *tokens_match_text(const token_table *t, const char *name, const char *secret_hex)
{
    const token *k = tokens_find(t, name);
    size_t n = strlen(secret_hex);
    if (k == NULL || n != 2 * k->secret_len) return NULL;
    uint8_t differ = 0;
    for (size_t i = 0; i < k->secret_len; i++) {
        int hi = hex_value((unsigned char)secret_hex[2 * i]), lo = hex_value((unsigned char)secret_hex[2 * i + 1]);
        differ |= (uint8_t)((hi < 0 || lo < 0) | (k->secret[i] ^ (uint8_t)(hi << 4 | lo)));
    }
    return differ == 0 ? k : NULL;
}

int token_may_call(const token *t, const char *module)
{
    if (t->rights & TOKEN_CALL_ALL) return 1;
    for (unsigned i = 0; i < t->nmodules; i++)
        if (strcmp(t->modules[i], module) == 0) return 1;
    return 0;
}
