/* ast.c -- construction, copying and destruction of the IDL parse tree, and
 * the compiler's "FILE:LINE:COL: error: MESSAGE" diagnostics. */
#include "ast.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *ast_alloc(size_t size)
{
    void *p = calloc(1, size ? size : 1);
    if (p == NULL) {
        fprintf(stderr, "numrpc-idlc: out of memory\n");
        exit(1);
    }
    return p;
}

char *ast_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *copy = ast_alloc(n);
    memcpy(copy, s, n);
    return copy;
}

/* FNV-1a of a diagnostic's text. */
static size_t text_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return (size_t)h;
}

static void put_said(char **table, size_t slots, char *text)
{
    size_t i = text_hash(text) & (slots - 1);
    while (table[i]) i = (i + 1) & (slots - 1);
    table[i] = text;
}

/* Adds text to the diagnostics printed (an open-addressing set, at most
 * half full); 0 when it was there already. */
static int remember(ast_file *file, const char *text)
{
    if (2 * (file->nsaid + 1) > file->said_slots) {
        size_t slots = file->said_slots ? 2 * file->said_slots : 64;
        char **table = ast_alloc(sizeof *table * slots);
        for (size_t i = 0; i < file->said_slots; i++)
            if (file->said[i]) put_said(table, slots, file->said[i]);
        free(file->said);
        file->said = table;
        file->said_slots = slots;
    }
    for (size_t i = text_hash(text) & (file->said_slots - 1);; i = (i + 1) & (file->said_slots - 1)) {
        if (file->said[i] == NULL) {
            file->said[i] = ast_strdup(text);
            file->nsaid++;
            return 1;
        }
        if (strcmp(file->said[i], text) == 0) return 0;
    }
}

void ast_error(ast_file *file, ast_loc loc, const char *fmt, ...)
{
    char text[1024];
    int at = snprintf(text, sizeof text, "%s:%d:%d: error: ", file->path, loc.line, loc.col);
    va_list ap;
    va_start(ap, fmt);
    if (at >= 0 && (size_t)at < sizeof text) vsnprintf(text + at, sizeof text - (size_t)at, fmt, ap);
    va_end(ap);
    file->nerrors++;
    if (!file->once || remember(file, text)) fprintf(stderr, "%s\n", text);
}

ast_expr *ast_expr_new(ast_expr_kind kind, ast_loc loc)
{
    ast_expr *e = ast_alloc(sizeof *e);
    e->kind = kind;
    e->loc = loc;
    return e;
}

void ast_file_init(ast_file *file, const char *path)
{
    memset(file, 0, sizeof *file);
    file->path = path;
    file->tail = &file->defines;
}

void ast_expr_free(ast_expr *e)
{
    if (e == NULL) return;
    ast_expr_free(e->lhs);
    ast_expr_free(e->rhs);
    ast_expr_free(e->cond);
    free(e->name);
    free(e);
}

void ast_dim_free(ast_dim *d)
{
    while (d) {
        ast_dim *next = d->next;
        ast_expr_free(d->size);
        ast_expr_free(d->count);
        ast_expr_free(d->stride);
        free(d);
        d = next;
    }
}

void ast_param_free(ast_param *p)
{
    while (p) {
        ast_param *next = p->next;
        free(p->name);
        ast_name_free(p->only);
        ast_expr_free(p->bound);
        ast_dim_free(p->dims);
        free(p);
        p = next;
    }
}

void ast_name_free(ast_name *n)
{
    while (n) {
        ast_name *next = n->next;
        free(n->name);
        free(n);
        n = next;
    }
}

void ast_group_free(ast_group *g)
{
    while (g) {
        ast_group *next = g->next;
        free(g->pattern);
        ast_name_free(g->prefixes);
        free(g);
        g = next;
    }
}

ast_expr *ast_expr_copy(const ast_expr *e)
{
    if (e == NULL) return NULL;
    ast_expr *c = ast_expr_new(e->kind, e->loc);
    c->op = e->op;
    c->value = e->value;
    c->name = e->name ? ast_strdup(e->name) : NULL;
    c->lhs = ast_expr_copy(e->lhs);
    c->rhs = ast_expr_copy(e->rhs);
    c->cond = ast_expr_copy(e->cond);
    return c;
}

ast_dim *ast_dim_copy(const ast_dim *d)
{
    ast_dim *head = NULL, **tail = &head;
    for (; d; d = d->next) {
        ast_dim *c = ast_alloc(sizeof *c);
        c->size = ast_expr_copy(d->size);
        c->count = ast_expr_copy(d->count);
        c->stride = ast_expr_copy(d->stride);
        c->loc = d->loc;
        *tail = c;
        tail = &c->next;
    }
    return head;
}

ast_name *ast_name_copy(const ast_name *n)
{
    ast_name *head = NULL, **tail = &head;
    for (; n; n = n->next) {
        ast_name *c = ast_alloc(sizeof *c);
        c->name = ast_strdup(n->name);
        c->loc = n->loc;
        *tail = c;
        tail = &c->next;
    }
    return head;
}

ast_param *ast_param_copy_one(const ast_param *p)
{
    ast_param *c = ast_alloc(sizeof *c);
    *c = *p;
    c->name = ast_strdup(p->name);
    c->only = ast_name_copy(p->only);
    c->bound = ast_expr_copy(p->bound);
    c->dims = ast_dim_copy(p->dims);
    c->next = NULL;
    return c;
}

void ast_define_free(ast_define *d)
{
    while (d) {
        ast_define *next = d->next;
        free(d->name);
        ast_group_free(d->groups);
        free(d->generic_name);
        ast_param_free(d->params);
        free(d->description);
        free(d->library);
        free(d->fortran_format);
        ast_expr_free(d->complexity);
        free(d->lang);
        free(d->calls_name);
        free(d->calls_result);
        ast_name_free(d->calls_args);
        free(d->backend);
        free(d);
        d = next;
    }
}

void ast_file_free(ast_file *file)
{
    ast_define_free(file->defines);
    free(file->module);
    free(file->library);
    free(file->fortran_format);
    for (size_t i = 0; i < file->said_slots; i++) free(file->said[i]);
    free(file->said);
    file->said = NULL;
    file->nsaid = file->said_slots = 0;
    file->defines = NULL;
    file->tail = &file->defines;
    file->module = file->library = file->fortran_format = NULL;
}
