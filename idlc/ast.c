/* ast.c -- construction and destruction of the IDL parse tree, and the
 * compiler's "FILE:LINE:COL: error: MESSAGE" diagnostics. */
#include "ast.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ast_error(ast_file *file, ast_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d:%d: error: ", file->path, loc.line, loc.col);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    file->nerrors++;
}

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

void ast_define_free(ast_define *d)
{
    while (d) {
        ast_define *next = d->next;
        free(d->name);
        ast_param_free(d->params);
        free(d->description);
        free(d->library);
        free(d->fortran_format);
        ast_expr_free(d->complexity);
        free(d->lang);
        free(d->calls_name);
        free(d->calls_result);
        ast_name_free(d->calls_args);
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
    file->defines = NULL;
    file->tail = &file->defines;
    file->module = file->library = file->fortran_format = NULL;
}
