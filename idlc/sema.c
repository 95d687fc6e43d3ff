/* sema.c -- resolves names, checks every rule of the IDL that the grammar
 * cannot, and builds the interface descriptor of each Define. */
#include "sema.h"

#include "generic.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* What an expression is for, in messages: "the extent of 'a'", "CalcOrder". */
typedef struct expr_ctx {
    ast_file *file;
    const ast_define *def;
    const char *what;
    int failed;
} expr_ctx;

/* The routine as diagnostics name it: a generic Define's pattern ("?gemm"),
 * so that a mistake made once is reported once, not once per precision. */
static const char *shown(const ast_define *d)
{
    return d->generic_name ? d->generic_name : d->name;
}

static const ast_param *find_param(const ast_define *d, const char *name,
                                   uint32_t *index)
{
    uint32_t i = 0;
    for (const ast_param *p = d->params; p; p = p->next, i++) {
        if (strcmp(p->name, name) == 0) {
            if (index) *index = i;
            return p;
        }
    }
    return NULL;
}

static uint32_t rank_of(const ast_param *p)
{
    uint32_t n = 0;
    for (const ast_dim *d = p->dims; d; d = d->next) n++;
    return n;
}

static const char *mode_word(int mode)
{
    return iface_mode_name((uint32_t)mode);
}

static void emit(expr_ctx *c, expr_t *out, int64_t word)
{
    if (expr_append(out, word) != 0) {
        fprintf(stderr, "numrpc-idlc: out of memory\n");
        exit(1);
    }
    (void)c;
}

/* Appends the postfix program of e to out, reporting bad names. */
static void compile_expr(expr_ctx *c, const ast_expr *e, expr_t *out)
{
    switch (e->kind) {
    case AST_NUM:
        emit(c, out, EXPR_CONST);
        emit(c, out, e->value);
        return;
    case AST_NAME: {
        uint32_t index = 0;
        const ast_param *p = find_param(c->def, e->name, &index);
        if (p == NULL) {
            ast_error(c->file, e->loc, "unknown name '%s' in %s", e->name, c->what);
            c->failed = 1;
        } else if (p->dims != NULL) {
            ast_error(c->file, e->loc, "%s uses '%s', which is an array, not a scalar",
                      c->what, e->name);
            c->failed = 1;
        } else if (!iface_type_is_integer((uint32_t)p->type)) {
            ast_error(c->file, e->loc, "%s uses '%s', which is a %s, not an integer",
                      c->what, e->name, iface_type_name((uint32_t)p->type));
            c->failed = 1;
        } else if (p->mode != IFACE_IN) {
            ast_error(c->file, e->loc, "%s uses '%s', which is %s, not IN", c->what,
                      e->name, mode_word(p->mode));
            c->failed = 1;
        }
        emit(c, out, EXPR_ARG);
        emit(c, out, index);
        return;
    }
    case AST_UNARY:
        compile_expr(c, e->lhs, out);
        emit(c, out, e->op);
        return;
    case AST_BINARY:
        compile_expr(c, e->lhs, out);
        compile_expr(c, e->rhs, out);
        emit(c, out, e->op);
        return;
    case AST_COMPLEX: /* generic.c resolved every one */
        ast_error(c->file, e->loc, "internal: 'complex' left in %s", c->what);
        c->failed = 1;
        return;
    case AST_COND:
        compile_expr(c, e->cond, out);
        compile_expr(c, e->lhs, out);
        compile_expr(c, e->rhs, out);
        emit(c, out, EXPR_COND);
        return;
    case AST_CALL: {
        int op = 0;
        if (e->rhs == NULL) { /* abs(x) = max(x, -x) */
            if (strcasecmp(e->name, "abs") != 0) {
                ast_error(c->file, e->loc, "unknown function '%s' with one argument in %s (only abs)",
                          e->name, c->what);
                c->failed = 1;
            }
            expr_t x = {0, NULL};
            compile_expr(c, e->lhs, &x);
            if (expr_concat(out, &x) != 0 || expr_concat(out, &x) != 0) {
                fprintf(stderr, "numrpc-idlc: out of memory\n");
                exit(1);
            }
            expr_free(&x);
            emit(c, out, EXPR_NEG);
            emit(c, out, EXPR_MAX);
            return;
        }
        if (strcasecmp(e->name, "min") == 0) op = EXPR_MIN;
        else if (strcasecmp(e->name, "max") == 0) op = EXPR_MAX;
        else {
            ast_error(c->file, e->loc, "unknown function '%s' with two arguments in %s (only min and max)",
                      e->name, c->what);
            c->failed = 1;
        }
        compile_expr(c, e->lhs, out);
        compile_expr(c, e->rhs, out);
        emit(c, out, op ? op : EXPR_ADD);
        return;
    }
    }
}

/* Compiles an optional expression into *out (left empty when e is NULL). */
static void compile_opt(ast_file *file, const ast_define *d, const char *what,
                        const ast_expr *e, uint32_t nparams, expr_t *out)
{
    if (e == NULL) return;
    expr_ctx c = {file, d, what, 0};
    compile_expr(&c, e, out);
    err_t err;
    err_clear(&err);
    if (!c.failed && expr_validate(out, nparams, &err) != 0)
        ast_error(file, e->loc, "%s is too complex: %s", what, err.detail);
}

/* Files: a plain name (no dimensions, bound or '*'); filename IN or OUT,
 * rfile IN only (docs/idl.md, "Files"). */
static void check_file_param(ast_file *file, const ast_param *p, uint32_t rank)
{
    const char *type = p->type == NUMRPC_T_FILE ? "filename" : "rfile";
    if (rank > 0)
        ast_error(file, p->loc, "%s '%s' cannot have dimensions (one file per parameter)", type,
                  p->name);
    if (p->bound != NULL)
        ast_error(file, p->bound_loc, "only strings have a bound; '%s' is a %s", p->name, type);
    if (p->by_pointer)
        ast_error(file, p->star_loc, "%s '%s' is a path, not a pointer: remove the '*'", type,
                  p->name);
    if (p->type == NUMRPC_T_FILE && p->mode != IFACE_IN && p->mode != IFACE_OUT)
        ast_error(file, p->loc, "filename '%s' must be IN (sent to the server) or OUT (sent back)",
                  p->name);
    if (p->type == NUMRPC_T_RFILE && p->mode != IFACE_IN)
        ast_error(file, p->loc, "rfile '%s' must be IN (the server reads the client's file)",
                  p->name);
}

static void check_param(ast_file *file, const ast_define *d, const ast_param *p)
{
    uint32_t rank = rank_of(p);
    if (rank > IFACE_MAX_RANK) {
        const ast_dim *extra = p->dims;
        for (uint32_t i = 0; i < IFACE_MAX_RANK; i++) extra = extra->next;
        ast_error(file, extra->loc, "'%s' has %u dimensions; at most %d are allowed",
                  p->name, rank, IFACE_MAX_RANK);
    }
    if (p->type == NUMRPC_T_FILE || p->type == NUMRPC_T_RFILE) {
        check_file_param(file, p, rank);
        return;
    }
    if (p->bound != NULL && p->type != NUMRPC_T_STRING)
        ast_error(file, p->bound_loc, "only strings have a bound; '%s' is a %s", p->name,
                  iface_type_name((uint32_t)p->type));
    if (p->type == NUMRPC_T_STRING) {
        if (p->mode == IFACE_WORK)
            ast_error(file, p->loc, "string '%s' cannot be WORK", p->name);
        else if (p->mode != IFACE_IN && p->bound == NULL)
            ast_error(file, p->loc,
                      "%s string '%s' needs a bound: write string<N> %s (N characters, "
                      "the caller's buffer holds N+1 bytes)",
                      mode_word(p->mode), p->name, p->name);
        if (p->by_pointer)
            ast_error(file, p->star_loc, "string '%s' is already a pointer: remove the '*'",
                      p->name);
        if (rank > 1)
            ast_error(file, p->loc, "string array '%s' has %u dimensions; at most 1 is allowed",
                      p->name, rank);
        if (rank == 1 && d->lang && strcasecmp(d->lang, "Fortran") == 0)
            ast_error(file, p->loc,
                      "string array '%s' in a Fortran routine: declare a CHARACTER array as "
                      "a char array (char %s[len][n])",
                      p->name, p->name);
        return;
    }
    if (rank == 0 && p->mode != IFACE_IN && !p->by_pointer)
        ast_error(file, p->loc,
                  "%s scalar '%s' is passed by pointer: write '*%s'", mode_word(p->mode),
                  p->name, p->name);
    if (rank == 0 && p->mode == IFACE_IN && p->by_pointer)
        ast_error(file, p->star_loc, "IN scalar '%s' is passed by value: remove the '*'",
                  p->name);
    if (rank != 0 && p->by_pointer)
        ast_error(file, p->star_loc, "array '%s' cannot be written with '*'", p->name);
    (void)d;
}

static char *dup_or_empty(const char *s)
{
    return ast_strdup(s ? s : "");
}

/* Forms the library symbol from the Calls name; NULL after an error. */
static char *make_symbol(ast_file *file, const ast_define *d, int fortran)
{
    if (!fortran) return ast_strdup(d->calls_name);
    const char *format = d->fortran_format ? d->fortran_format : "%s_";
    int holes = 0, bad = 0;
    for (const char *s = format; *s; s++) {
        if (*s != '%') continue;
        if (s[1] == 's') holes++;
        else if (s[1] != '%') bad = 1;
        if (s[1]) s++;
    }
    if (holes != 1 || bad) {
        ast_error(file, d->format_loc,
                  "FortranFormat \"%s\" must contain exactly one %%s and no other %%",
                  format);
        return NULL;
    }
    size_t size = strlen(format) + strlen(d->calls_name) + 1;
    char *symbol = ast_alloc(size);
    char *o = symbol;
    for (const char *s = format; *s; s++) {
        if (s[0] == '%' && s[1] == 's') {
            size_t n = strlen(d->calls_name);
            memcpy(o, d->calls_name, n);
            o += n;
            s++;
        } else if (s[0] == '%' && s[1] == '%') {
            *o++ = '%';
            s++;
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
    return symbol;
}

/* Checks the Calls clause and records its argument order. */
static void check_calls(ast_file *file, const ast_define *d, uint32_t nparams,
                        sema_routine *r)
{
    uint8_t seen[IFACE_MAX_PARAMS] = {0};
    uint32_t k = 0;
    r->result = -1;
    if (d->calls_result) {
        uint32_t index;
        const ast_param *p = find_param(d, d->calls_result, &index);
        if (p == NULL) {
            ast_error(file, d->result_loc, "Calls result '%s' is not a parameter of '%s'",
                      d->calls_result, shown(d));
        } else if (p->dims != NULL || p->mode != IFACE_OUT || p->type == NUMRPC_T_STRING ||
                   p->type == NUMRPC_T_FILE || p->type == NUMRPC_T_RFILE) {
            ast_error(file, d->result_loc,
                      "Calls result '%s' must be an OUT scalar of a numeric or char type "
                      "(e.g. OUT double *%s)",
                      d->calls_result, d->calls_result);
        } else if (index < IFACE_MAX_PARAMS) {
            seen[index] = 1;
            r->result = (int32_t)index;
        }
    }
    for (const ast_name *a = d->calls_args; a; a = a->next) {
        uint32_t index;
        if (find_param(d, a->name, &index) == NULL) {
            ast_error(file, a->loc, "Calls argument '%s' is not a parameter of '%s'",
                      a->name, shown(d));
            continue;
        }
        if (index >= IFACE_MAX_PARAMS) continue;
        if (seen[index]) {
            if ((int32_t)index == r->result)
                ast_error(file, a->loc, "Calls result '%s' cannot also be an argument",
                          a->name);
            else
                ast_error(file, a->loc, "Calls names '%s' twice", a->name);
            continue;
        }
        seen[index] = 1;
        if (k < IFACE_MAX_PARAMS) r->call_order[k++] = index;
    }
    r->ncall = k;
    uint32_t i = 0;
    for (const ast_param *p = d->params; p && i < nparams; p = p->next, i++)
        if (!seen[i] && find_param(d, p->name, NULL) == p)
            ast_error(file, d->calls_loc, "Calls of '%s' does not pass parameter '%s'",
                      shown(d), p->name);
}

/* True when the Define runs on the MPI job: Backend "MPI", or, without a
 * Backend, Calls "MPI" (then reported as missing it). */
static int is_mpi(const ast_define *d)
{
    return (d->has_backend && strcasecmp(d->backend, "MPI") == 0) ||
           (!d->has_backend && d->has_calls && strcasecmp(d->lang, "MPI") == 0);
}

/* Backend "MPI" [ranks] with Calls "MPI" engine_routine(every parameter,
 * in the Define's order): the engine receives the arguments as the Define
 * lists them (mpi/engine.h).  Numbers and chars only: no strings, no
 * files.  Fills f's backend part and symbol. */
static void check_mpi(ast_file *file, const ast_define *d, iface_t *f)
{
    if (!d->has_backend) {
        ast_error(file, d->lang_loc, "Calls \"MPI\" of '%s' needs Backend \"MPI\" in its Define", shown(d));
        return;
    }
    if (d->backend_ranks == 0 || d->backend_ranks < -1)
        ast_error(file, d->ranks_loc,
                  "Backend \"MPI\" %lld: the job's ranks are at least 1 (leave the number out for the "
                  "server's configured job)",
                  (long long)d->backend_ranks);
    else if (d->backend_ranks > IFACE_MAX_RANKS)
        ast_error(file, d->ranks_loc, "Backend \"MPI\" %lld: at most %d ranks", (long long)d->backend_ranks,
                  IFACE_MAX_RANKS);
    f->backend = IFACE_BACKEND_MPI;
    f->ranks = d->backend_ranks > 0 && d->backend_ranks <= IFACE_MAX_RANKS ? (uint32_t)d->backend_ranks : 0;
    if (!d->has_calls) return;
    if (strcasecmp(d->lang, "MPI") != 0) {
        ast_error(file, d->lang_loc,
                  "'%s' runs on the MPI job: its Calls names the engine's routine, Calls \"MPI\" %s(...)",
                  shown(d), d->calls_name);
        return;
    }
    if (d->calls_result)
        ast_error(file, d->result_loc, "Calls \"MPI\" has no result: the engine's routine fills OUT parameters");
    const ast_param *p = d->params;
    for (const ast_name *a = d->calls_args; a && p; a = a->next, p = p->next)
        if (strcmp(a->name, p->name) != 0) {
            ast_error(file, a->loc,
                      "Calls \"MPI\" passes the parameters in the Define's order: '%s' here, not '%s'",
                      p->name, a->name);
            break;
        }
    for (p = d->params; p; p = p->next)
        if (p->type == NUMRPC_T_STRING || p->type == NUMRPC_T_FILE || p->type == NUMRPC_T_RFILE)
            ast_error(file, p->type_loc, "'%s' is a %s: an MPI routine takes numbers and chars only", p->name,
                      iface_type_name((uint32_t)p->type));
    f->symbol = ast_strdup(d->calls_name);
}

/* Checks one Define and fills r; returns 0 when it had no errors. */
static int check_define(ast_file *file, const char *module, const ast_define *d,
                        sema_routine *r)
{
    int errors_before = file->nerrors;
    iface_t *f = &r->iface;
    uint32_t nparams = 0;

    for (const ast_param *p = d->params; p; p = p->next) {
        nparams++;
        if (nparams == IFACE_MAX_PARAMS + 1)
            ast_error(file, p->loc, "'%s' has more than %d parameters", shown(d),
                      IFACE_MAX_PARAMS);
    }
    if (nparams > IFACE_MAX_PARAMS) nparams = IFACE_MAX_PARAMS;

    f->name = ast_strdup(d->name);
    f->module = ast_strdup(module);
    f->description = dup_or_empty(d->description);
    f->library = dup_or_empty(d->library);
    if (strlen(f->description) > IFACE_MAX_TEXT)
        ast_error(file, d->loc, "description of '%s' is longer than %d bytes", shown(d),
                  IFACE_MAX_TEXT);
    if (strlen(f->library) > IFACE_MAX_TEXT)
        ast_error(file, d->loc, "Required text of '%s' is longer than %d bytes", shown(d),
                  IFACE_MAX_TEXT);
    f->params = ast_alloc(sizeof *f->params * (nparams ? nparams : 1));
    f->nparams = nparams;

    uint32_t i = 0;
    for (const ast_param *p = d->params; p && i < nparams; p = p->next, i++) {
        const ast_param *first = find_param(d, p->name, NULL);
        if (first != p)
            ast_error(file, p->loc, "duplicate parameter '%s' (first at line %d, column %d)",
                      p->name, first->loc.line, first->loc.col);
        check_param(file, d, p);
        iface_param *q = &f->params[i];
        q->name = ast_strdup(p->name);
        q->type = (uint32_t)p->type;
        q->mode = (uint32_t)p->mode;
        uint32_t rank = 0;
        for (const ast_dim *dim = p->dims; dim && rank < IFACE_MAX_RANK;
             dim = dim->next, rank++) {
            char what[IFACE_MAX_NAME + 32];
            snprintf(what, sizeof what, "the extent of '%s'", p->name);
            compile_opt(file, d, what, dim->size, nparams, &q->dims[rank].size);
            compile_opt(file, d, what, dim->count, nparams, &q->dims[rank].count);
            compile_opt(file, d, what, dim->stride, nparams, &q->dims[rank].stride);
        }
        q->rank = rank;
        char what[IFACE_MAX_NAME + 32];
        snprintf(what, sizeof what, "the bound of '%s'", p->name);
        compile_opt(file, d, what, p->bound, nparams, &q->bound);
    }
    compile_opt(file, d, "CalcOrder", d->complexity, nparams, &f->complexity);

    if (d->has_backend && strcasecmp(d->backend, "MPI") != 0)
        ast_error(file, d->backend_loc, "unknown backend \"%s\" (the one backend is \"MPI\")", d->backend);
    if (!d->has_calls) {
        if (!d->damaged) ast_error(file, d->loc, "Define '%s' has no Calls clause", shown(d));
        if (is_mpi(d)) check_mpi(file, d, f);
    } else if (is_mpi(d)) {
        check_mpi(file, d, f);
        check_calls(file, d, nparams, r);
    } else {
        int fortran = 0;
        if (strcasecmp(d->lang, "Fortran") == 0) fortran = 1;
        else if (strcasecmp(d->lang, "C") != 0)
            ast_error(file, d->lang_loc, "unknown language \"%s\" (use \"C\" or \"Fortran\")",
                      d->lang);
        f->lang = fortran ? IFACE_LANG_FORTRAN : IFACE_LANG_C;
        f->symbol = make_symbol(file, d, fortran);
        if (f->symbol && strlen(f->symbol) >= IFACE_MAX_NAME)
            ast_error(file, d->calls_loc, "symbol '%s' is longer than %d characters",
                      f->symbol, IFACE_MAX_NAME - 1);
        check_calls(file, d, nparams, r);
    }
    if (f->symbol == NULL) f->symbol = ast_strdup("");

    if (file->nerrors != errors_before) return -1;
    err_t err;
    err_clear(&err);
    if (iface_validate(f, &err) != 0 || iface_compute_hash(f, &err) != 0) {
        ast_error(file, d->loc, "internal: interface of '%s' is invalid: %s", d->name,
                  err.detail);
        return -1;
    }
    return 0;
}

/* The file's base name without its extension, as a default module name. */
static char *base_module_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *name = ast_strdup(slash ? slash + 1 : path);
    char *dot = strrchr(name, '.');
    if (dot && dot != name) *dot = '\0';
    return name;
}

int sema_check(ast_file *file, sema_unit *unit)
{
    memset(unit, 0, sizeof *unit);
    generic_expand(file);
    unit->module = file->module ? ast_strdup(file->module) : base_module_name(file->path);
    size_t n = 0;
    for (const ast_define *d = file->defines; d; d = d->next) n++;
    unit->routines = ast_alloc(sizeof *unit->routines * (n ? n : 1));
    for (const ast_define *d = file->defines; d; d = d->next) {
        for (const ast_define *e = file->defines; e != d; e = e->next) {
            if (strcmp(e->name, d->name) == 0) {
                ast_error(file, d->loc, "routine '%s' defined twice (first at line %d)",
                          d->name, e->loc.line);
                break;
            }
        }
        sema_routine *r = &unit->routines[unit->count++];
        file->once = d->generic_name != NULL; /* its mistakes are its siblings' */
        check_define(file, unit->module, d, r);
        file->once = 0;
    }
    if (n == 0 && file->nerrors == 0)
        ast_error(file, (ast_loc){1, 1}, "no Define in this file");
    return file->nerrors;
}

void sema_unit_free(sema_unit *unit)
{
    for (size_t i = 0; i < unit->count; i++) iface_free(&unit->routines[i].iface);
    free(unit->routines);
    free(unit->module);
    memset(unit, 0, sizeof *unit);
}
