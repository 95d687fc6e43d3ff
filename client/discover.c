/* discover.c -- what a server offers: the routine list and a routine's
 * interface as IDL, a typed C wrapper or a pin (numrpc_list, numrpc_describe*). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iface_cache.h"
#include "init.h"
#include "lasterr.h"
#include "pin.h"

#define LIST_MAX (1u << 20) /* routines a server may list */

static int read_list(client_conn *c, char **names_out, err_t *err)
{
    uint32_t call_id = client_next_call_id(), count = 0;
    msg_routine_entry *items = NULL;
    char *out = NULL;
    int rc = msg_write_list(&c->m.writer, call_id, err);
    if (rc == 0) rc = conn_finish_hello(c, err);
    if (rc == 0) rc = msg_read_list_reply(&c->m.reader, call_id, c->m.label, LIST_MAX, &items, &count, err);
    if (rc != 0) goto fail;
    size_t cap = 1;
    for (uint32_t i = 0; i < count; i++) cap += strlen(items[i].name) + 1;
    out = malloc(cap);
    if (out == NULL) {
        rc = err_set(err, NUMRPC_ENOMEM, "routine list");
        goto fail;
    }
    size_t used = 0;
    out[0] = '\0';
    for (uint32_t i = 0; i < count; i++) used += (size_t)sprintf(out + used, "%s\n", items[i].name);
    *names_out = out;
    out = NULL;
fail:
    free(out);
    free(items);
    return rc;
}

int numrpc_list(const char *server, char **names_out)
{
    err_t err;
    endpoint eps[CLIENT_MAX_SERVERS];
    client_conn *c = NULL;
    int rc = names_out ? client_ensure_init(&err) : err_set(&err, NUMRPC_EINVAL, "names_out is NULL");
    if (rc == 0) rc = server ? endpoint_set(&eps[0], server, &err) : client_servers(eps, &err);
    if (rc >= 0) rc = conn_acquire(&eps[0], 0, &c, &err);
    if (rc == 0) rc = read_list(c, names_out, &err);
    conn_done(c, rc);
    if (rc != 0) return client_fail(&err);
    client_succeed();
    return 0;
}


int numrpc_describe(const char *name, char **idl_out)
{
    err_t err;
    iface_ref *ref = NULL;
    int rc = name && idl_out ? client_iface_of(name, &ref, &err)
                             : err_set(&err, NUMRPC_EINVAL, "name or idl_out is NULL");
    if (rc == 0 && iface_render_idl(&ref->iface, idl_out) != 0)
        rc = err_set(&err, NUMRPC_ENOMEM, "rendering %s", ref->iface.name);
    if (ref) iface_cache_put(ref);
    if (rc != 0) return client_fail(&err);
    client_succeed();
    return 0;
}

/* The C type of a parameter in a wrapper's prototype. */
static const char *c_type(const iface_param *p, char *buf, size_t len)
{
    static const char *const base[] = {
        [NUMRPC_T_CHAR] = "char",    [NUMRPC_T_INT] = "int",
        [NUMRPC_T_LONG] = "long",    [NUMRPC_T_FLOAT] = "float",
        [NUMRPC_T_DOUBLE] = "double", [NUMRPC_T_SCOMPLEX] = "float _Complex",
        [NUMRPC_T_DCOMPLEX] = "double _Complex"};
    if (iface_type_is_file(p->type)) return "const char *"; /* a path, whatever the mode */
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

/* The wrapper of f: a typed function that calls numrpc_call_pinned with
 * f's pin line, cut into string literals of PIN_CHUNK characters. */
#define PIN_CHUNK 72
static int render(const iface_t *f, const char *pin, char **out)
{
    size_t pin_len = strlen(pin);
    size_t cap = 1024 + 160 * f->nparams + pin_len + (pin_len / PIN_CHUNK + 1) * 12;
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
    EMIT("%s)\n{\n    /* pinned to interface %016" PRIx64 ": a server with another is refused (NUMRPC_EAUTH) */\n"
         "    return numrpc_call_pinned(", f->nparams ? "" : "void", f->hash);
    for (size_t at = 0; at < pin_len; at += PIN_CHUNK)
        EMIT("\n        \"%.*s\"", PIN_CHUNK, pin + at);
    EMIT(",\n        \"%s\"", f->name);
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
    iface_ref *ref = NULL;
    int rc = name && module_out && decl_out
                 ? client_iface_of(name, &ref, &err)
                 : err_set(&err, NUMRPC_EINVAL, "name, module_out or decl_out is NULL");
    char *pin = NULL;
    if (rc == 0) rc = pin_format(&ref->iface, &pin, &err);
    if (rc == 0 && render(&ref->iface, pin, decl_out) != 0)
        rc = err_set(&err, NUMRPC_ENOMEM, "rendering %s", ref->iface.name);
    free(pin);
    if (rc == 0 && (*module_out = strdup(ref->iface.module ? ref->iface.module : "")) == NULL) {
        free(*decl_out);
        rc = err_set(&err, NUMRPC_ENOMEM, "module name");
    }
    if (ref) iface_cache_put(ref);
    if (rc != 0) return client_fail(&err);
    client_succeed();
    return 0;
}

int numrpc_describe_pin(const char *name, char **pin_out)
{
    err_t err;
    iface_ref *ref = NULL;
    int rc = name && pin_out ? client_iface_of(name, &ref, &err)
                             : err_set(&err, NUMRPC_EINVAL, "name or pin_out is NULL");
    if (rc == 0) rc = pin_format(&ref->iface, pin_out, &err);
    if (ref) iface_cache_put(ref);
    if (rc != 0) return client_fail(&err);
    client_succeed();
    return 0;
}
