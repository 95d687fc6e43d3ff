/* ast.h -- the parse tree of an IDL file as the parser builds it, before
 * names are resolved; plus the diagnostics every idlc stage reports with. */
#ifndef NUMRPC_IDLC_AST_H
#define NUMRPC_IDLC_AST_H

#include <stdint.h>
#include <stdio.h>

#include "iface.h"

/* A position in the source: 1-based line and column (a tab is one column). */
typedef struct ast_loc {
    int line;
    int col;
} ast_loc;

typedef enum ast_expr_kind {
    AST_NUM,   /* value                                  */
    AST_NAME,  /* name: a parameter                      */
    AST_UNARY, /* op (EXPR_NEG) applied to lhs           */
    AST_BINARY,/* op (EXPR_ADD ...) of lhs and rhs       */
    AST_CALL,  /* name(lhs, rhs): min or max             */
    AST_COND,  /* cond ? lhs : rhs                       */
    AST_COMPLEX /* the word complex: 1 in a complex precision of a generic
                   Define, 0 in a real one (generic.c replaces it) */
} ast_expr_kind;

typedef struct ast_expr {
    ast_expr_kind kind;
    int op; /* enum expr_op for AST_UNARY and AST_BINARY */
    int64_t value;
    char *name;
    struct ast_expr *lhs, *rhs;
    struct ast_expr *cond; /* AST_COND's condition */
    ast_loc loc;
} ast_expr;

/* One bracket: [size], [size:count] or [size:count:stride]. */
typedef struct ast_dim {
    ast_expr *size, *count, *stride;
    ast_loc loc; /* the '[' */
    struct ast_dim *next;
} ast_dim;

/* A name in a list: Calls arguments, precision prefixes. */
typedef struct ast_name {
    char *name;
    ast_loc loc;
    struct ast_name *next;
} ast_name;

typedef struct ast_param {
    char *name;
    ast_loc loc; /* the name */
    int mode;    /* iface_mode */
    int type;    /* numrpc_type; unset while type_var is */
    int type_var; /* 'T' (element type) or 'R' (its real type) in a generic
                     Define, else 0 */
    ast_loc type_loc;
    ast_name *only; /* "{c, z} WORK R rwork[n]": the precisions that have
                       this parameter; NULL: all */
    ast_loc only_loc;
    ast_expr *bound; /* string<bound>, or NULL */
    ast_loc bound_loc;
    int by_pointer; /* written with '*' */
    ast_loc star_loc;
    ast_dim *dims; /* first bracket first (dimension 0, fastest varying) */
    struct ast_param *next;
} ast_param;

/* One name pattern of a generic Define, "?gemm {s, d, c, z}": '?' stands
 * for each precision prefix listed. */
typedef struct ast_group {
    char *pattern;
    ast_loc loc;
    ast_name *prefixes;
    struct ast_group *next;
} ast_group;

typedef struct ast_define {
    char *name;  /* the routine name; a generic Define's first pattern */
    ast_loc loc; /* the routine name */
    ast_group *groups; /* a generic Define's name patterns, else NULL */
    char *generic_name; /* an expanded routine's pattern ("?gemm"), which
                           diagnostics name, else NULL */
    ast_param *params;
    char *description;
    char *library;        /* own Required/Library, else the module-wide one */
    char *fortran_format; /* own FortranFormat, else the module-wide one    */
    ast_loc format_loc;
    ast_expr *complexity;
    int has_calls;
    char *lang;
    ast_loc lang_loc;
    char *calls_name;
    ast_loc calls_loc;
    char *calls_result; /* "Calls ... result = f(...)": the OUT scalar that
                           receives a function's value, or NULL */
    ast_loc result_loc;
    ast_name *calls_args;
    /* Backend "MPI" [ranks]: where the routine runs (docs/idl.md, "Backend"). */
    int has_backend;
    char *backend;
    ast_loc backend_loc;
    int64_t backend_ranks; /* -1: not given (the server's configured job) */
    ast_loc ranks_loc;
    int damaged; /* a syntax error followed it: some clauses may be lost */
    struct ast_define *next;
} ast_define;

/* The whole file.  The module-wide Library and FortranFormat apply to the
 * Defines that follow them. */
typedef struct ast_file {
    const char *path; /* for diagnostics */
    char *module;
    ast_loc module_loc;
    char *library;
    char *fortran_format;
    ast_loc format_loc;
    ast_define *defines;
    ast_define **tail;
    ast_loc comment_loc; /* where an open comment began (lexer) */
    int orphan; /* after a syntax error: drop clauses until the next Define */
    int nerrors;
    int once; /* set while the routines of a generic Define are checked: a
                 message printed then is not printed again */
    char **said; /* those messages, a hash set of said_slots (a power of
                    2) holding nsaid */
    size_t said_slots, nsaid;
} ast_file;

/* Reports "PATH:LINE:COL: error: MESSAGE" on stderr and counts it; while
 * file->once is set, the same message at the same place (one per precision
 * of a generic Define) is counted but printed once. */
void ast_error(ast_file *file, ast_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Constructors; each aborts the compiler (after a message) when memory runs
 * out, which keeps the grammar actions readable. */
char *ast_strdup(const char *s);
ast_expr *ast_expr_new(ast_expr_kind kind, ast_loc loc);
void ast_file_init(ast_file *file, const char *path);
void ast_file_free(ast_file *file);
void ast_define_free(ast_define *d);
void ast_param_free(ast_param *p);
void ast_dim_free(ast_dim *d);
void ast_expr_free(ast_expr *e);
void ast_name_free(ast_name *n);
void ast_group_free(ast_group *g);
void *ast_alloc(size_t size);

/* Deep copies (NULL for NULL), for the expansion of generic Defines. */
ast_expr *ast_expr_copy(const ast_expr *e);
ast_dim *ast_dim_copy(const ast_dim *d);
ast_name *ast_name_copy(const ast_name *n);
/* One parameter, without the ones after it. */
ast_param *ast_param_copy_one(const ast_param *p);

/* Parses the file at file->path (already initialised); returns 0 when the
 * file was read (syntax errors are counted in file->nerrors) or -1 when it
 * cannot be opened. */
int ast_parse_file(ast_file *file);
/* The same on an open stream (the caller closes it); file->path only names
 * it in diagnostics.  -1 when the scanner cannot start. */
int ast_parse_stream(ast_file *file, FILE *in);

#endif
