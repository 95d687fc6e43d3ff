/* describe_c.c -- numrpc_describe_c: a routine's interface as a typed C
 * wrapper around numrpc_call, for headers with compile-time type checks. */
#include "client.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The C type of a parameter in a wrapper's prototype. */
static const char *c_type(const iface_param *p, char *buf, size_t len)
{
    static const char *const base[] = {
        [NUMRPC_T_CHAR] = "char",    [NUMRPC_T_INT] = "int",
        [NUMRPC_T_LONG] = "long",    [NUMRPC_T_FLOAT] = "float",
        [NUMRPC_T_DOUBLE] = "double", [NUMRPC_T_SCOMPLEX] = "float _Complex",
        [NUMRPC_T_DCOMPLEX] = "double _Complex"};
    if (p->type == NUMRPC_T_STRING) { /* out strings: a buffer of bound + 1 bytes */
        int in = p->mode == IFACE_IN;
        if (p->rank == 0) return in ? "const char *" : "char *";
        return in ? "const char *const *" : "char *const *";
    }
    const char *t = p->type < sizeof base / sizeof *base && base[p->type] ? base[p->type] : "void";
    int complex_scalar = p->type == NUMRPC_T_SCOMPLEX || p->type == NUMRPC_T_DCOMPLEX;
    if (p->rank == 0 && p->mode == IFACE_IN && !complex_scalar) return t;
    snprintf(buf, len, "%s%s *", p->mode == IFACE_IN ? "const " : "", t);
    return buf;
}

static int render(const iface_t *f, char **out)
{
    size_t cap = 1024 + 160 * f->nparams;
    char *text = malloc(cap);
    if (text == NULL) return NUMRPC_ENOMEM;
    size_t n = 0;
#define EMIT(...) n += (size_t)snprintf(text + n, n < cap ? cap - n : 0, __VA_ARGS__)
    const char *about = f->description && f->description[0] && !strstr(f->description, "*/")
                            ? f->description
                            : "(no description)";
    EMIT("/* %s: %s */\nstatic inline int numrpc_%s(", f->name, about, f->name);
    for (uint32_t i = 0; i < f->nparams; i++) {
        char buf[64];
        const char *t = c_type(&f->params[i], buf, sizeof buf);
        size_t tl = strlen(t);
        EMIT("%s%s%s%s", i ? ", " : "", t, tl && t[tl - 1] == '*' ? "" : " ", f->params[i].name);
    }
    EMIT("%s)\n{\n    return numrpc_call(\"%s\"", f->nparams ? "" : "void", f->name);
    for (uint32_t i = 0; i < f->nparams; i++) EMIT(", %s", f->params[i].name);
    EMIT(");\n}\n");
#undef EMIT
    if (n >= cap) {
        free(text);
        return NUMRPC_ENOMEM;
    }
    *out = text;
    return 0;
}

int numrpc_describe_c(const char *name, char **module_out, char **decl_out)
{
    err_t err;
    endpoint eps[CLIENT_MAX_SERVERS];
    char routine[IFACE_MAX_NAME + 1];
    client_conn *c = NULL;
    iface_ref *ref = NULL;
    int n = 1, rc = name && module_out && decl_out
                        ? client_ensure_init(&err)
                        : err_set(&err, NUMRPC_EINVAL, "name, module_out or decl_out is NULL");
    if (rc == 0) {
        int is_url = client_parse_url(name, &eps[0], routine, sizeof routine, &err);
        if (is_url < 0) rc = is_url;
        else if (!is_url && (n = client_servers(eps, &err)) < 0) rc = n;
    }
    if (rc == 0) rc = conn_acquire(&eps[0], &c, &err);
    if (rc == 0) rc = iface_cache_get(c, routine, &ref, &err);
    if (rc == 0 && render(&ref->iface, decl_out) != 0)
        rc = err_set(&err, NUMRPC_ENOMEM, "rendering %s", routine);
    if (rc == 0 && (*module_out = strdup(ref->iface.module ? ref->iface.module : "")) == NULL) {
        free(*decl_out);
        rc = err_set(&err, NUMRPC_ENOMEM, "module name");
    }
    if (ref) iface_cache_put(ref);
    if (c) {
        if (rc == 0 || rc == NUMRPC_ENOENT) conn_release(c);
        else conn_discard(c);
    }
    if (rc != 0) return client_fail(&err);
    client_succeed();
    return 0;
}
