/* generic.c -- turns a generic Define (one routine over several precisions)
 * into plain Defines: names, element types, parameters and Calls per prefix. */
#include "generic.h"

#include <stdlib.h>
#include <string.h>

/* A precision prefix: the element type T and its real type R.  Two-letter
 * prefixes name a complex routine with a real part, as BLAS does (scnrm2's
 * result, csscal's alpha). */
typedef struct precision {
    const char *prefix;
    int type;    /* T */
    int real;    /* R */
    int complex; /* the value of the word complex in its expressions */
} precision;

static const precision precisions[] = {
    {"s", NUMRPC_T_FLOAT, NUMRPC_T_FLOAT, 0},
    {"d", NUMRPC_T_DOUBLE, NUMRPC_T_DOUBLE, 0},
    {"c", NUMRPC_T_SCOMPLEX, NUMRPC_T_FLOAT, 1},
    {"z", NUMRPC_T_DCOMPLEX, NUMRPC_T_DOUBLE, 1},
    {"sc", NUMRPC_T_SCOMPLEX, NUMRPC_T_FLOAT, 1},
    {"cs", NUMRPC_T_SCOMPLEX, NUMRPC_T_FLOAT, 1},
    {"dz", NUMRPC_T_DCOMPLEX, NUMRPC_T_DOUBLE, 1},
    {"zd", NUMRPC_T_DCOMPLEX, NUMRPC_T_DOUBLE, 1},
};

static const precision *find_precision(const char *prefix)
{
    for (size_t i = 0; i < sizeof precisions / sizeof precisions[0]; i++)
        if (strcmp(precisions[i].prefix, prefix) == 0) return &precisions[i];
    return NULL;
}

static int listed(const ast_name *list, const char *name)
{
    for (; list; list = list->next)
        if (strcmp(list->name, name) == 0) return 1;
    return 0;
}

/* text with its first occurrence of what replaced by with (malloc'd). */
static char *replace(const char *text, const char *what, const char *with)
{
    const char *at = strstr(text, what);
    if (at == NULL) return ast_strdup(text);
    size_t head = (size_t)(at - text), wlen = strlen(with), tail = strlen(at + strlen(what));
    char *out = ast_alloc(head + wlen + tail + 1);
    memcpy(out, text, head);
    memcpy(out + head, with, wlen);
    memcpy(out + head + wlen, at + strlen(what), tail + 1);
    return out;
}

/* ---- Plain Defines: what only a generic one may use ---- */

/* Reports the word complex in e and makes it 0. */
static void plain_expr(ast_file *file, const ast_define *d, ast_expr *e)
{
    if (e == NULL) return;
    if (e->kind == AST_COMPLEX) {
        ast_error(file, e->loc,
                  "'complex' in an expression is 1 or 0 by precision: only in a generic "
                  "Define, and '%s' is not one",
                  d->name);
        e->kind = AST_NUM;
        e->value = 0;
    }
    plain_expr(file, d, e->lhs);
    plain_expr(file, d, e->rhs);
    plain_expr(file, d, e->cond);
}

static void check_plain(ast_file *file, ast_define *d)
{
    for (ast_param *p = d->params; p; p = p->next) {
        if (p->type_var) {
            ast_error(file, p->type_loc,
                      "type %c of '%s' names a precision's type: only in a generic Define "
                      "(Define ?%s {s, d, c, z} ...)",
                      p->type_var, p->name, d->name);
            p->type = NUMRPC_T_DOUBLE;
            p->type_var = 0;
        }
        if (p->only)
            ast_error(file, p->only_loc,
                      "'%s' is given precisions, but '%s' is not a generic Define", p->name,
                      d->name);
        plain_expr(file, d, p->bound);
        for (ast_dim *dim = p->dims; dim; dim = dim->next) {
            plain_expr(file, d, dim->size);
            plain_expr(file, d, dim->count);
            plain_expr(file, d, dim->stride);
        }
    }
    plain_expr(file, d, d->complexity);
    if (d->has_calls && strchr(d->calls_name, '?'))
        ast_error(file, d->calls_loc, "Calls name '%s' has a '?', but '%s' is not a generic Define",
                  d->calls_name, d->name);
}

/* ---- Generic Defines ---- */

/* Reports the mistakes of the patterns, prefixes, precision lists and Calls
 * name (the expansion skips a bad prefix, so that the rest is checked). */
static void check_generic(ast_file *file, const ast_define *d)
{
    for (const ast_group *g = d->groups; g; g = g->next) {
        const char *q = strchr(g->pattern, '?');
        if (q == NULL || strchr(q + 1, '?'))
            ast_error(file, g->loc,
                      "name pattern '%s' must hold exactly one '?' (where the precision "
                      "prefix goes)",
                      g->pattern);
        for (const ast_name *p = g->prefixes; p; p = p->next) {
            if (find_precision(p->name) == NULL)
                ast_error(file, p->loc,
                          "unknown precision '%s' (use s, d, c, z, or sc, cs, dz, zd for a "
                          "complex routine with a real part)",
                          p->name);
            else if (strlen(g->pattern) - 1 + strlen(p->name) >= IFACE_MAX_NAME)
                ast_error(file, p->loc, "the name of '%s' for '%s' is longer than %d characters",
                          g->pattern, p->name, IFACE_MAX_NAME - 1);
            for (const ast_name *q2 = g->prefixes; q2 != p; q2 = q2->next)
                if (strcmp(q2->name, p->name) == 0) {
                    ast_error(file, p->loc, "precision '%s' listed twice for '%s'", p->name,
                              g->pattern);
                    break;
                }
        }
    }
    for (const ast_param *p = d->params; p; p = p->next)
        for (const ast_name *n = p->only; n; n = n->next) {
            int found = 0;
            for (const ast_group *g = d->groups; g && !found; g = g->next)
                found = listed(g->prefixes, n->name);
            if (!found)
                ast_error(file, n->loc, "'%s' is not a precision of '%s' (for parameter '%s')",
                          n->name, d->name, p->name);
        }
    if (d->has_calls) {
        int found = 0;
        for (const ast_group *g = d->groups; g && !found; g = g->next)
            found = strstr(d->calls_name, g->pattern) != NULL;
        if (!found)
            ast_error(file, d->calls_loc,
                      "Calls name '%s' of generic '%s' must contain a name pattern of the "
                      "Define ('%s'), which stands for each routine's name",
                      d->calls_name, d->name, d->name);
    }
}

/* The precision of a prefix the expansion uses: known, first in its list,
 * giving a name short enough. */
static const precision *usable(const ast_group *g, const ast_name *prefix)
{
    for (const ast_name *p = g->prefixes; p != prefix; p = p->next)
        if (strcmp(p->name, prefix->name) == 0) return NULL;
    if (strlen(g->pattern) - 1 + strlen(prefix->name) >= IFACE_MAX_NAME) return NULL;
    return find_precision(prefix->name);
}

/* The word complex becomes the precision's 1 or 0, and "complex ? a : b"
 * the branch it chooses (the other may name a parameter this precision
 * lacks); returns e or what replaces it. */
static ast_expr *resolve_expr(ast_expr *e, const precision *prec)
{
    if (e == NULL) return NULL;
    if (e->kind == AST_COMPLEX) {
        e->kind = AST_NUM;
        e->value = prec->complex;
        return e;
    }
    if (e->kind == AST_COND && e->cond->kind == AST_COMPLEX) {
        ast_expr *chosen = prec->complex ? e->lhs : e->rhs;
        if (prec->complex) e->lhs = NULL;
        else e->rhs = NULL;
        ast_expr_free(e);
        return resolve_expr(chosen, prec);
    }
    e->lhs = resolve_expr(e->lhs, prec);
    e->rhs = resolve_expr(e->rhs, prec);
    e->cond = resolve_expr(e->cond, prec);
    return e;
}

static int param_present(const ast_param *p, const char *prefix)
{
    return p->only == NULL || listed(p->only, prefix);
}

/* True when the routine of this prefix has a parameter called name. */
static int has_param(const ast_define *d, const char *name, const char *prefix)
{
    for (const ast_param *p = d->params; p; p = p->next)
        if (strcmp(p->name, name) == 0 && param_present(p, prefix)) return 1;
    return 0;
}

/* True when name is a parameter of some precision of d. */
static int any_param(const ast_define *d, const char *name)
{
    for (const ast_param *p = d->params; p; p = p->next)
        if (strcmp(p->name, name) == 0) return 1;
    return 0;
}

static ast_param *variant_params(const ast_define *d, const precision *prec)
{
    ast_param *head = NULL, **tail = &head;
    for (const ast_param *p = d->params; p; p = p->next) {
        if (!param_present(p, prec->prefix)) continue;
        ast_param *c = ast_param_copy_one(p);
        ast_name_free(c->only);
        c->only = NULL;
        if (c->type_var) c->type = c->type_var == 'T' ? prec->type : prec->real;
        c->type_var = 0;
        c->bound = resolve_expr(c->bound, prec);
        for (ast_dim *dim = c->dims; dim; dim = dim->next) {
            dim->size = resolve_expr(dim->size, prec);
            dim->count = resolve_expr(dim->count, prec);
            dim->stride = resolve_expr(dim->stride, prec);
        }
        *tail = c;
        tail = &c->next;
    }
    return head;
}

/* The Calls arguments of the routine of this prefix: the generic list less
 * the parameters other precisions have and it has not. */
static ast_name *variant_args(const ast_define *d, const char *prefix)
{
    ast_name *head = NULL, **tail = &head;
    for (const ast_name *a = d->calls_args; a; a = a->next) {
        if (any_param(d, a->name) && !has_param(d, a->name, prefix)) continue;
        ast_name *c = ast_alloc(sizeof *c);
        c->name = ast_strdup(a->name);
        c->loc = a->loc;
        *tail = c;
        tail = &c->next;
    }
    return head;
}

/* The plain Define of one pattern and prefix. */
static ast_define *variant(const ast_define *d, const ast_group *g, const ast_name *prefix,
                           const precision *prec)
{
    ast_define *v = ast_alloc(sizeof *v);
    v->name = replace(g->pattern, "?", prefix->name);
    v->loc = g->loc;
    v->generic_name = ast_strdup(g->pattern);
    v->params = variant_params(d, prec);
    if (d->description) v->description = replace(d->description, g->pattern, v->name);
    if (d->library) v->library = ast_strdup(d->library);
    if (d->fortran_format) v->fortran_format = ast_strdup(d->fortran_format);
    v->format_loc = d->format_loc;
    v->complexity = resolve_expr(ast_expr_copy(d->complexity), prec);
    v->has_calls = d->has_calls;
    v->damaged = d->damaged;
    v->has_backend = d->has_backend;
    if (d->backend) v->backend = ast_strdup(d->backend);
    v->backend_loc = d->backend_loc;
    v->backend_ranks = d->backend_ranks;
    v->ranks_loc = d->ranks_loc;
    if (d->has_calls) {
        v->lang = ast_strdup(d->lang);
        v->lang_loc = d->lang_loc;
        const ast_group *named = d->groups; /* the pattern the Calls name holds */
        while (named && strstr(d->calls_name, named->pattern) == NULL) named = named->next;
        v->calls_name = named ? replace(d->calls_name, named->pattern, v->name)
                              : ast_strdup(d->calls_name);
        v->calls_loc = d->calls_loc;
        if (d->calls_result) v->calls_result = ast_strdup(d->calls_result);
        v->result_loc = d->result_loc;
        v->calls_args = variant_args(d, prefix->name);
    }
    return v;
}

/* The routines of a generic Define, linked in order. */
static ast_define *expand(const ast_define *d)
{
    ast_define *head = NULL, **tail = &head;
    for (const ast_group *g = d->groups; g; g = g->next)
        for (const ast_name *p = g->prefixes; p; p = p->next) {
            const precision *prec = usable(g, p);
            if (prec == NULL) continue;
            *tail = variant(d, g, p, prec);
            tail = &(*tail)->next;
        }
    return head;
}

void generic_expand(ast_file *file)
{
    ast_define **link = &file->defines;
    while (*link) {
        ast_define *d = *link;
        if (d->groups == NULL) {
            check_plain(file, d);
            link = &d->next;
            continue;
        }
        check_generic(file, d);
        ast_define *routines = expand(d);
        ast_define *last = routines;
        while (last && last->next) last = last->next;
        ast_define *next = d->next;
        d->next = NULL;
        ast_define_free(d);
        if (routines) {
            *link = routines;
            last->next = next;
            link = &last->next;
        } else {
            *link = next;
        }
    }
    file->tail = link;
}
