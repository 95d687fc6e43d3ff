/* codegen.c -- emits one C file per IDL file: for each routine its encoded
 * interface, a thunk in the routine's calling convention, and the table. */
#include "codegen.h"

#include <stdlib.h>
#include <string.h>

/* The C element type of an IDL type. */
static const char *c_type(uint32_t type)
{
    switch (type) {
    case NUMRPC_T_CHAR: return "char";
    case NUMRPC_T_INT: return "int";
    case NUMRPC_T_LONG: return "long";
    case NUMRPC_T_FLOAT: return "float";
    case NUMRPC_T_DOUBLE: return "double";
    case NUMRPC_T_SCOMPLEX: return "float _Complex";
    case NUMRPC_T_DCOMPLEX: return "double _Complex";
    case NUMRPC_T_STRING: return "char *";
    case NUMRPC_T_FILE: return "char *";          /* the staged file's path */
    case NUMRPC_T_RFILE: return "numrpc_rfile *"; /* stubmod.h */
    default: return "void";
    }
}

/* True when the routine receives parameter p by value. */
static int by_value(const iface_t *f, const iface_param *p)
{
    if (p->type == NUMRPC_T_STRING) return p->rank == 0; /* the char * itself */
    if (p->type == NUMRPC_T_FILE || p->type == NUMRPC_T_RFILE) return 1; /* path / handle */
    return f->lang == IFACE_LANG_C && p->rank == 0 && p->mode == IFACE_IN;
}

static void put_c_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
        else if (c >= 32 && c < 127) fputc(c, out);
        else fprintf(out, "\\%03o", c);
    }
    fputc('"', out);
}

/* True when a Fortran routine receives a hidden CHARACTER length for p
 * (appended after all the arguments, in argument order): a string (its
 * strlen) or a char, scalar or array (CHARACTER*1: length 1). */
static int has_hidden_length(const iface_t *f, const iface_param *p)
{
    return f->lang == IFACE_LANG_FORTRAN &&
           (p->type == NUMRPC_T_STRING || p->type == NUMRPC_T_CHAR);
}

/* The C return type of the routine's prototype. */
static const char *return_type(const sema_routine *r)
{
    return r->result < 0 ? "void" : c_type(r->iface.params[r->result].type);
}

/* Writes the parameter types of the routine's prototype into buf. */
static void prototype_args(const sema_routine *r, char *buf, size_t size)
{
    const iface_t *f = &r->iface;
    size_t len = 0;
    buf[0] = '\0';
    len += (size_t)snprintf(buf, size, "%s (", return_type(r));
    for (uint32_t k = 0; k < r->ncall && len < size; k++) {
        const iface_param *p = &f->params[r->call_order[k]];
        const char *sep = k ? ", " : "";
        if (by_value(f, p))
            len += (size_t)snprintf(buf + len, size - len, "%s%s", sep, c_type(p->type));
        else
            len += (size_t)snprintf(buf + len, size - len, "%s%s *", sep, c_type(p->type));
    }
    for (uint32_t k = 0; k < r->ncall && len < size; k++)
        if (has_hidden_length(f, &f->params[r->call_order[k]]))
            len += (size_t)snprintf(buf + len, size - len, ", size_t");
    if (r->ncall == 0 && len < size) len += (size_t)snprintf(buf + len, size - len, "void");
    if (len < size) snprintf(buf + len, size - len, ")");
}

static void emit_blob(FILE *out, const char *name, const uint8_t *blob, size_t len)
{
    fprintf(out, "static const uint8_t iface_%s[%zu] = {", name, len);
    for (size_t i = 0; i < len; i++)
        fprintf(out, "%s0x%02x,", i % 12 == 0 ? "\n    " : " ", blob[i]);
    fprintf(out, "\n};\n");
}

static void emit_thunk(FILE *out, const sema_routine *r)
{
    const iface_t *f = &r->iface;
    fprintf(out, "static void thunk_%s(void **argv)\n{\n", f->name);
    if (f->nparams == 0) fprintf(out, "    (void)argv;\n");
    if (r->result >= 0)
        fprintf(out, "    *(%s *)argv[%d] = %s(", c_type(f->params[r->result].type),
                r->result, f->symbol);
    else
        fprintf(out, "    %s(", f->symbol);
    for (uint32_t k = 0; k < r->ncall; k++) {
        uint32_t i = r->call_order[k];
        const iface_param *p = &f->params[i];
        const char *sep = k ? ",\n        " : "\n        ";
        if (p->type == NUMRPC_T_STRING && p->rank == 0)
            fprintf(out, "%s*(char **)argv[%u]", sep, i);
        else if (by_value(f, p))
            fprintf(out, "%s*(%s *)argv[%u]", sep, c_type(p->type), i);
        else
            fprintf(out, "%s(%s *)argv[%u]", sep, c_type(p->type), i);
    }
    for (uint32_t k = 0; k < r->ncall; k++) {
        uint32_t i = r->call_order[k];
        const iface_param *p = &f->params[i];
        if (!has_hidden_length(f, p)) continue;
        if (p->type == NUMRPC_T_STRING)
            fprintf(out, ",\n        stub_strlen(*(char **)argv[%u])", i);
        else
            fprintf(out, ",\n        (size_t)1");
    }
    fprintf(out, ");\n}\n");
}

static int uses_fortran_strings(const sema_unit *unit)
{
    for (size_t n = 0; n < unit->count; n++) {
        const iface_t *f = &unit->routines[n].iface;
        if (f->lang != IFACE_LANG_FORTRAN) continue;
        for (uint32_t i = 0; i < f->nparams; i++)
            if (f->params[i].type == NUMRPC_T_STRING) return 1;
    }
    return 0;
}

/* Reports two routines that would declare one symbol differently. */
static int check_prototypes(const sema_unit *unit, const char *source_path)
{
    char mine[2048], theirs[2048];
    for (size_t a = 0; a < unit->count; a++) {
        if (unit->routines[a].iface.backend != IFACE_BACKEND_LOCAL) continue; /* no C symbol */
        prototype_args(&unit->routines[a], mine, sizeof mine);
        for (size_t b = 0; b < a; b++) {
            if (unit->routines[b].iface.backend != IFACE_BACKEND_LOCAL ||
                strcmp(unit->routines[a].iface.symbol, unit->routines[b].iface.symbol) != 0)
                continue;
            prototype_args(&unit->routines[b], theirs, sizeof theirs);
            if (strcmp(mine, theirs) != 0) {
                fprintf(stderr,
                        "%s: error: routines '%s' and '%s' call symbol '%s' with "
                        "different arguments\n",
                        source_path, unit->routines[b].iface.name,
                        unit->routines[a].iface.name, unit->routines[a].iface.symbol);
                return -1;
            }
        }
    }
    return 0;
}

int codegen_emit(FILE *out, const sema_unit *unit, const char *source_path)
{
    if (check_prototypes(unit, source_path) != 0) return -1;
    fprintf(out, "/* Stub module ");
    put_c_string(out, unit->module);
    fprintf(out, " generated by numrpc-idlc from ");
    for (const char *c = source_path; *c; c++) /* keep the comment closed */
        fputc(c[0] == '*' && c[1] == '/' ? '_' : c[0], out);
    fprintf(out, ".\n * Do not edit: change the IDL file and regenerate. */\n");
    fprintf(out, "#include <stddef.h>\n#include <stdint.h>\n\n#include \"stubmod.h\"\n");
    if (uses_fortran_strings(unit))
        fprintf(out, "\n/* Fortran's hidden CHARACTER length. */\n"
                     "static size_t stub_strlen(const char *s)\n{\n"
                     "    size_t n = 0;\n    while (s[n]) n++;\n    return n;\n}\n");

    char args[2048];
    for (size_t n = 0; n < unit->count; n++) {
        const sema_routine *r = &unit->routines[n];
        uint8_t *blob;
        size_t len;
        err_t err;
        err_clear(&err);
        if (iface_encode(&r->iface, &blob, &len, &err) != 0) {
            fprintf(stderr, "%s: error: cannot encode '%s': %s\n", source_path,
                    r->iface.name, err.detail);
            return -1;
        }
        fprintf(out, "\n/* ---- %s: %s \"%s\" ---- */\n", r->iface.name, iface_calls_language(&r->iface),
                r->iface.symbol);
        emit_blob(out, r->iface.name, blob, len);
        free(blob);
        if (r->iface.backend != IFACE_BACKEND_LOCAL) continue; /* the server runs it: no thunk */
        prototype_args(r, args, sizeof args);
        int first = 1;
        for (size_t m = 0; m < n; m++)
            if (unit->routines[m].iface.backend == IFACE_BACKEND_LOCAL &&
                strcmp(unit->routines[m].iface.symbol, r->iface.symbol) == 0)
                first = 0;
        if (first) {
            /* args is "RET (ARGS)": split it around the symbol. */
            const char *paren = strchr(args, '(');
            fprintf(out, "extern %.*s%s%s;\n", (int)(paren - args), args, r->iface.symbol,
                    paren);
        }
        emit_thunk(out, r);
    }

    fprintf(out, "\nstatic const stub_entry stub_entries[] = {\n");
    for (size_t n = 0; n < unit->count; n++) {
        const char *name = unit->routines[n].iface.name;
        if (unit->routines[n].iface.backend != IFACE_BACKEND_LOCAL)
            fprintf(out, "    {\"%s\", iface_%s, sizeof iface_%s, NULL},\n", name, name, name);
        else
            fprintf(out, "    {\"%s\", iface_%s, sizeof iface_%s, thunk_%s},\n", name, name, name, name);
    }
    fprintf(out, "};\n\n"
                 "extern const stub_module numrpc_stub_module;\n"
                 "__attribute__((visibility(\"default\")))\n"
                 "const stub_module numrpc_stub_module = {\n"
                 "    NUMRPC_STUB_ABI,\n    ");
    put_c_string(out, unit->module);
    fprintf(out, ",\n    sizeof stub_entries / sizeof stub_entries[0],\n"
                 "    stub_entries,\n};\n");
    if (ferror(out)) {
        fprintf(stderr, "%s: error: cannot write the generated C\n", source_path);
        return -1;
    }
    return 0;
}
