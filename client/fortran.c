/* fortran.c -- the C side of the Fortran module (include/numrpc.f90): turns
 * TS 29113 descriptors into a checked numrpc_callv call. */
#include "fortran.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bind.h"
#include "iface_cache.h"
#include "init.h"
#include "lasterr.h"
#include "marshal.h"

/* Dummy arguments a1..aN of the Fortran interfaces; numrpc.f90 must match. */
#define FORTRAN_MAX_ARGS 24
#define FORTRAN_NAME_MAX 512

#define FORTRAN_ARGS_(T)                                                                   \
    T a1, T a2, T a3, T a4, T a5, T a6, T a7, T a8, T a9, T a10, T a11, T a12, T a13, T a14, \
        T a15, T a16, T a17, T a18, T a19, T a20, T a21, T a22, T a23, T a24
#define FORTRAN_ARG_LIST_                                                                 \
    {a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, \
     a20, a21, a22, a23, a24}

/* Called only through the bind(C) interfaces of include/numrpc.f90:
 * numrpc_fcall returns the status; numrpc_call writes it into *status, or,
 * without status=, stops the program with the message on failure (as a
 * Fortran I/O statement without iostat= does). */
NUMRPC_API int numrpc_fortran_fcall(const CFI_cdesc_t *name, FORTRAN_ARGS_(const CFI_cdesc_t *));
NUMRPC_API void numrpc_fortran_call(const CFI_cdesc_t *name, FORTRAN_ARGS_(const CFI_cdesc_t *),
                                    int *status);
/* The asynchronous family: numrpc_call_async starts the call (its id in
 * *id, 0 when it could not start); the waits, probe and cancel are the C
 * API's with the module's status convention. */
NUMRPC_API void numrpc_fortran_call_async(int *id, const CFI_cdesc_t *name, FORTRAN_ARGS_(const CFI_cdesc_t *),
                                          int *status);
NUMRPC_API void numrpc_fortran_wait(const int *id, int *status);
NUMRPC_API void numrpc_fortran_wait_any(int *id, int *status);
NUMRPC_API void numrpc_fortran_wait_all(int *status);
NUMRPC_API void numrpc_fortran_cancel(const int *id, int *status);
NUMRPC_API int numrpc_fortran_probe(const int *id);

const char *fortran_type_name(const CFI_cdesc_t *d, char *buf, size_t len)
{
    int base = d->type & CFI_type_mask, kind = d->type >> CFI_type_kind_shift;
    static const char *const names[] = {[CFI_type_Integer] = "integer",
                                        [CFI_type_Logical] = "logical",
                                        [CFI_type_Real] = "real",
                                        [CFI_type_Complex] = "complex",
                                        [CFI_type_Character] = "character"};
    if (d->type == CFI_type_struct && d->elem_len == sizeof(void *)) {
        snprintf(buf, len, "a derived type (type(numrpc_data)?)");
    } else if (d->type < 0 || base < CFI_type_Integer || base > CFI_type_Character) {
        snprintf(buf, len, "a derived or unsupported type");
    } else if (base == CFI_type_Character) {
        snprintf(buf, len, "character(len=%zu)", d->elem_len);
    } else {
        snprintf(buf, len, "%s(%d)", names[base], kind);
    }
    return buf;
}

/* The Fortran declaration a numrpc_type asks for. */
static const char *fortran_wants(uint32_t type)
{
    switch (type) {
    case NUMRPC_T_CHAR: return "character (kind=c_char)";
    case NUMRPC_T_INT: return "integer(4) (c_int)";
    case NUMRPC_T_LONG: return "integer(8) (c_long)";
    case NUMRPC_T_FLOAT: return "real(4) (c_float)";
    case NUMRPC_T_DOUBLE: return "real(8) (double precision)";
    case NUMRPC_T_SCOMPLEX: return "complex(4) (c_float_complex)";
    case NUMRPC_T_DCOMPLEX: return "complex(8) (c_double_complex)";
    case NUMRPC_T_STRING: return "character(len=*)";
    default: return iface_type_name(type);
    }
}

uint32_t fortran_element_type(const CFI_cdesc_t *d)
{
    switch (d->type) {
    case CFI_type_char: return NUMRPC_T_CHAR;
    case CFI_type_int32_t: return NUMRPC_T_INT;
    case CFI_type_int64_t: return NUMRPC_T_LONG;
    case CFI_type_float: return NUMRPC_T_FLOAT;
    case CFI_type_double: return NUMRPC_T_DOUBLE;
    case CFI_type_float_Complex: return NUMRPC_T_SCOMPLEX;
    case CFI_type_double_Complex: return NUMRPC_T_DCOMPLEX;
    default: return NUMRPC_T_VOID;
    }
}

/* True when a descriptor of the caller's holds elements of IDL type `type`. */
static int type_matches(const CFI_cdesc_t *d, uint32_t type)
{
    if (type == NUMRPC_T_STRING) type = NUMRPC_T_CHAR; /* a character scalar */
    return type != NUMRPC_T_VOID && fortran_element_type(d) == type;
}

/* A section with a stride is not contiguous: the library reads and writes
 * the IDL's layout in place.  An assumed-size array's size is unknown. */
int64_t fortran_contiguous_elems(const CFI_cdesc_t *d)
{
    int64_t n = 1;
    ptrdiff_t expect = (ptrdiff_t)d->elem_len;
    for (int r = 0; r < d->rank; r++) {
        CFI_index_t ext = d->dim[r].extent;
        if (ext < 0) return INT64_MAX; /* the last extent of an assumed-size array */
        if (ext > 1 && d->dim[r].sm != expect) return -1;
        n *= ext;
        expect *= ext;
    }
    return n;
}

/* A Fortran character scalar as a malloc'd C string without the trailing
 * blanks Fortran pads with. */
static char *fortran_string(const CFI_cdesc_t *d)
{
    size_t len = d->elem_len;
    const char *s = d->base_addr;
    while (len > 0 && s[len - 1] == ' ') len--;
    char *out = malloc(len + 1);
    if (out) {
        memcpy(out, s, len);
        out[len] = '\0';
    }
    return out;
}

/* The interface of routine `name` from the first server that answers, as
 * numrpc_callv will find it. */
static int fetch_iface(const char *name, iface_ref **out, err_t *err)
{
    endpoint eps[CLIENT_MAX_SERVERS];
    char routine[IFACE_MAX_NAME + 1];
    int pinned, n = client_locate(name, eps, routine, sizeof routine, &pinned, err);
    return n < 0 ? n : iface_lookup(eps, n, routine, 0, out, NULL, err);
}

/* Binds argument i (descriptor d) to parameter p: checks its type, rank and
 * contiguity, fills the tagged argument and argv (for shape evaluation). */
static int bind_one(const iface_t *f, uint32_t i, const CFI_cdesc_t *d, numrpc_arg *a,
                    char **owned, void **argv, err_t *err)
{
    const iface_param *p = &f->params[i];
    char given[64];
    a->type = (numrpc_type)p->type;
    a->v.p = d ? d->base_addr : NULL;
    argv[i] = a->v.p;
    if (p->mode == IFACE_WORK) { /* server scratch: whatever is passed stays unread */
        a->type = NUMRPC_T_VOID;
        return 0;
    }
    /* Fortran makes an unallocated allocatable actual argument absent: an
     * array then passes as NULL, fine when its shape needs no element (a
     * LAPACK job that leaves it out; check_sizes decides). */
    if (d == NULL && p->rank > 0) return 0;
    if (p->rank > 0 && d != NULL) { /* a type(numrpc_data) stands for the array */
        void *h;
        handle_facts facts;
        int is_handle = fortran_handle_of(d, &h, &facts);
        if (is_handle < 0)
            return err_set(err, NUMRPC_ENOHANDLE,
                           "%s: argument %u (%s) is a numrpc_data holding no live handle "
                           "(never put, or freed)",
                           f->name, i + 1, p->name);
        if (is_handle > 0) { /* place.c checks its type and size against the shape */
            a->v.p = h;
            argv[i] = h;
            return 0;
        }
    }
    if (d == NULL)
        return err_set(err, NUMRPC_EINVAL,
                       "%s: argument %u (%s) is missing (left out, or an unallocated "
                       "allocatable)",
                       f->name, i + 1, p->name);
    if (!type_matches(d, p->type))
        return err_set(err, NUMRPC_EINVAL,
                       "%s: argument %u (%s) must be %s (IDL %s); %s was given", f->name, i + 1,
                       p->name, fortran_wants(p->type), iface_type_name(p->type),
                       fortran_type_name(d, given, sizeof given));
    if (p->type == NUMRPC_T_STRING && p->rank != 0)
        return err_set(err, NUMRPC_EINVAL,
                       "%s: argument %u (%s) is a string array, which Fortran callers cannot "
                       "pass yet (only character scalars); call it from C",
                       f->name, i + 1, p->name);
    if (p->rank == 0 && d->rank != 0)
        return err_set(err, NUMRPC_EINVAL,
                       "%s: argument %u (%s) is a scalar; an array of rank %d was given",
                       f->name, i + 1, p->name, (int)d->rank);
    if (p->rank > 0) { /* by pointer; an unallocated one is fine if no element is needed */
        if (d->base_addr && fortran_contiguous_elems(d) < 0)
            return err_set(err, NUMRPC_EINVAL,
                           "%s: argument %u (%s) is a strided array section; pass a "
                           "contiguous array (the IDL's leading dimension and strides select "
                           "the part that travels)",
                           f->name, i + 1, p->name);
        return 0;
    }
    if (d->base_addr == NULL)
        return err_set(err, NUMRPC_EINVAL, "%s: argument %u (%s) is not allocated", f->name,
                       i + 1, p->name);
    if (p->type == NUMRPC_T_STRING && p->mode != IFACE_IN) {
        /* A buffer of the string's bound comes once the shapes are known
         * (fit_output_strings); until then a NULL char* slot. */
        a->v.s = NULL;
        argv[i] = (void *)&a->v.s;
        return 0;
    }
    if (p->mode != IFACE_IN) return 0; /* out and inout scalars by pointer */
    switch (p->type) {
    case NUMRPC_T_CHAR:
        if (d->elem_len < 1)
            return err_set(err, NUMRPC_EINVAL, "%s: argument %u (%s) is an empty string",
                           f->name, i + 1, p->name);
        a->v.c = *(const char *)d->base_addr;
        break;
    case NUMRPC_T_INT: a->v.i = *(const int32_t *)d->base_addr; break;
    case NUMRPC_T_LONG: a->v.l = *(const int64_t *)d->base_addr; break;
    case NUMRPC_T_FLOAT: a->v.f = *(const float *)d->base_addr; break;
    case NUMRPC_T_DOUBLE: a->v.d = *(const double *)d->base_addr; break;
    case NUMRPC_T_STRING:
        if ((*owned = fortran_string(d)) == NULL)
            return err_set(err, NUMRPC_ENOMEM, "%s: copying string %s", f->name, p->name);
        a->v.s = *owned;
        argv[i] = (void *)&a->v.s;
        return 0;
    default: return 0; /* complex scalars travel by pointer to their parts */
    }
    argv[i] = &a->v; /* the value, for the shape evaluator */
    return 0;
}

/* Every array the caller passed must hold the memory block its IDL shape
 * spans: the library reads and writes that much in place. */
static int check_sizes(const iface_t *f, const CFI_cdesc_t *const *d, void *const *argv,
                       iface_shape *shapes, err_t *err)
{
    int rc = marshal_eval_shapes(f, argv, shapes, err);
    for (uint32_t i = 0; rc == 0 && i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (p->rank == 0 || p->mode == IFACE_WORK) continue;
        unsigned long long need = shapes[i].mem_elems;
        if (d[i] == NULL || d[i]->base_addr == NULL) {
            if (need > 0)
                rc = err_set(err, NUMRPC_EINVAL,
                             "%s: argument %u (%s) is missing or not allocated; it needs %llu "
                             "elements",
                             f->name, i + 1, p->name, need);
            continue;
        }
        void *h;
        handle_facts facts;
        if (fortran_handle_of(d[i], &h, &facts) > 0) continue; /* checked when placed */
        int64_t elems = fortran_contiguous_elems(d[i]);
        if (elems == INT64_MAX) continue;
        /* in elements of the IDL type: a character(len=64) holds 64 chars */
        unsigned long long have = (uint64_t)elems * d[i]->elem_len / iface_type_size(p->type);
        if (have < need)
            rc = err_set(err, NUMRPC_EINVAL,
                         "%s: argument %u (%s) needs %llu elements (its IDL shape), %s holds "
                         "%llu",
                         f->name, i + 1, p->name, need,
                         d[i]->rank ? "the array passed" : "a scalar or array element", have);
    }
    return rc;
}

/* Gives every out and inout character argument a C buffer of its bound
 * (and of its own length, if longer) + 1 bytes, owned by *owned; an inout
 * one starts with the Fortran text, trailing blanks removed. */
static int fit_output_strings(const iface_t *f, const CFI_cdesc_t *const *d,
                              const iface_shape *shapes, numrpc_arg *args, char **owned,
                              err_t *err)
{
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (p->type != NUMRPC_T_STRING || p->rank != 0 || p->mode == IFACE_IN) continue;
        size_t have = d[i]->elem_len, bound = (size_t)shapes[i].bound;
        size_t cap = (bound > have ? bound : have) + 1;
        if ((owned[i] = calloc(cap, 1)) == NULL)
            return err_set(err, NUMRPC_ENOMEM, "%s: buffer of string %s", f->name, p->name);
        if (p->mode == IFACE_INOUT) {
            size_t len = have;
            while (len > 0 && ((const char *)d[i]->base_addr)[len - 1] == ' ') len--;
            memcpy(owned[i], d[i]->base_addr, len);
        }
        args[i].v.s = owned[i];
    }
    return 0;
}

/* Copies the out and inout strings back into the caller's character
 * variables: truncated or blank-padded to their length, as Fortran assigns. */
static void return_output_strings(const iface_t *f, const CFI_cdesc_t *const *d,
                                  char *const *owned)
{
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (p->type != NUMRPC_T_STRING || p->rank != 0 || p->mode == IFACE_IN) continue;
        size_t have = d[i]->elem_len, len = strlen(owned[i]);
        if (len > have) len = have;
        memcpy(d[i]->base_addr, owned[i], len);
        memset((char *)d[i]->base_addr + len, ' ', have - len);
    }
}

int fortran_handle_of(const CFI_cdesc_t *d, void **h, handle_facts *facts)
{
    if (d == NULL || d->rank != 0 || d->elem_len != sizeof(void *) || d->base_addr == NULL ||
        (d->type != CFI_type_struct && d->type != CFI_type_cptr))
        return 0;
    memcpy(h, d->base_addr, sizeof *h);
    return handles_lookup(*h, facts) ? 1 : -1;
}

void fortran_report(int rc, int *status, const char *what)
{
    if (status) {
        *status = rc;
        return;
    }
    if (rc != NUMRPC_OK) {
        fprintf(stderr, "%s: %s: %s\n", what, numrpc_strerror(rc), numrpc_last_error_detail());
        exit(EXIT_FAILURE);
    }
}

/* The call, blocking (async_id NULL) or started (its id in *async_id). */
static int fortran_callv(const CFI_cdesc_t *name_d, const CFI_cdesc_t *const *d, int status_kw, int *async_id)
{
    err_t err;
    err_clear(&err);
    char name[FORTRAN_NAME_MAX];
    numrpc_arg args[FORTRAN_MAX_ARGS];
    void *argv[IFACE_MAX_PARAMS];
    char *owned[FORTRAN_MAX_ARGS] = {0};
    iface_shape shapes[IFACE_MAX_PARAMS];
    iface_ref *ref = NULL;
    int nargs = 0, rc = 0;

    if (name_d == NULL || name_d->type != CFI_type_char || name_d->rank != 0)
        rc = err_set(&err, NUMRPC_EINVAL, "the routine name must be a character scalar");
    else if (name_d->elem_len >= sizeof name)
        rc = err_set(&err, NUMRPC_EINVAL, "routine name longer than %zu characters",
                     sizeof name - 1);
    if (rc == 0) {
        size_t len = name_d->elem_len;
        if (len > 0) memcpy(name, name_d->base_addr, len);
        while (len > 0 && name[len - 1] == ' ') len--;
        name[len] = '\0';
        for (int i = 0; i < FORTRAN_MAX_ARGS; i++)
            if (d[i]) nargs = i + 1;
    }
    if (rc == 0) rc = fetch_iface(name, &ref, &err);
    if (rc == 0) {
        const iface_t *f = &ref->iface;
        if (nargs != (int)f->nparams) {
            char list[256];
            bind_list_params(f, list, sizeof list);
            const char *hint = "";
            if (!status_kw && nargs == (int)f->nparams + 1)
                hint = " (give numrpc_call's status as status=...)";
            else if (nargs < (int)f->nparams)
                hint = " (an unallocated allocatable counts as left out)";
            rc = err_set(&err, NUMRPC_EINVAL, "%s takes %u arguments (%s), %d given%s", f->name,
                         f->nparams, list, nargs, hint);
        }
        for (uint32_t i = 0; rc == 0 && i < f->nparams; i++)
            rc = bind_one(f, i, d[i], &args[i], &owned[i], argv, &err);
        if (rc == 0) rc = check_sizes(f, d, argv, shapes, &err);
        for (uint32_t i = 0; rc == 0 && async_id && i < f->nparams; i++)
            if (f->params[i].type == NUMRPC_T_STRING && f->params[i].mode != IFACE_IN)
                rc = err_set(&err, NUMRPC_EINVAL,
                             "%s: argument %u (%s) is a character output, which an asynchronous call "
                             "cannot return into its variable: call numrpc_call",
                             f->name, i + 1, f->params[i].name);
        if (rc == 0) rc = fit_output_strings(f, d, shapes, args, owned, &err);
    }
    if (rc == 0 && async_id) rc = numrpc_callv_async(async_id, name, args, nargs); /* copies the in scalars */
    else if (rc == 0) rc = numrpc_callv(name, args, nargs); /* records its own outcome */
    else client_fail(&err);
    if (rc == 0 && !async_id) return_output_strings(&ref->iface, d, owned);
    if (ref) iface_cache_put(ref);
    for (int i = 0; i < FORTRAN_MAX_ARGS; i++) free(owned[i]);
    return rc;
}

int numrpc_fortran_fcall(const CFI_cdesc_t *name, FORTRAN_ARGS_(const CFI_cdesc_t *))
{
    const CFI_cdesc_t *d[FORTRAN_MAX_ARGS] = FORTRAN_ARG_LIST_;
    return fortran_callv(name, d, 1, NULL);
}

void numrpc_fortran_call(const CFI_cdesc_t *name, FORTRAN_ARGS_(const CFI_cdesc_t *), int *status)
{
    const CFI_cdesc_t *d[FORTRAN_MAX_ARGS] = FORTRAN_ARG_LIST_;
    fortran_report(fortran_callv(name, d, status != NULL, NULL), status, "numrpc_call");
}

void numrpc_fortran_call_async(int *id, const CFI_cdesc_t *name, FORTRAN_ARGS_(const CFI_cdesc_t *), int *status)
{
    const CFI_cdesc_t *d[FORTRAN_MAX_ARGS] = FORTRAN_ARG_LIST_;
    *id = 0;
    fortran_report(fortran_callv(name, d, status != NULL, id), status, "numrpc_call_async");
}

void numrpc_fortran_wait(const int *id, int *status)
{
    fortran_report(numrpc_wait(*id), status, "numrpc_wait");
}

void numrpc_fortran_wait_any(int *id, int *status)
{
    fortran_report(numrpc_wait_any(id), status, "numrpc_wait_any");
}

void numrpc_fortran_wait_all(int *status)
{
    fortran_report(numrpc_wait_all(), status, "numrpc_wait_all");
}

void numrpc_fortran_cancel(const int *id, int *status)
{
    fortran_report(numrpc_cancel(*id), status, "numrpc_cancel");
}

int numrpc_fortran_probe(const int *id)
{
    return numrpc_probe(*id);
}
