/* typed.c -- the arguments of numrpc_call as their C types tagged them:
 * read from the va_list, then each checked against its parameter (typed.h). */
#include "typed.h"

#include <complex.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "handles.h"
#include "numrpc.h"

/* ---- Reading ---- */

int typed_read(int nargs, va_list *ap, typed_arg *out, const char *name, err_t *err)
{
    if (nargs < 0 || nargs > TYPED_MAX)
        return err_set(err, NUMRPC_EINVAL, "%s: %d arguments (at most %d)", name, nargs, TYPED_MAX);
    for (int i = 0; i < nargs; i++) {
        typed_arg *a = &out[i];
        a->tag = va_arg(*ap, int);
        switch (a->tag) {
        case NUMRPC_TAG_INT_: a->v.ll = va_arg(*ap, int); break;
        case NUMRPC_TAG_UINT_: a->v.ull = va_arg(*ap, unsigned int); break;
        case NUMRPC_TAG_LONG_: a->v.ll = va_arg(*ap, long); break;
        case NUMRPC_TAG_ULONG_: a->v.ull = va_arg(*ap, unsigned long); break;
        case NUMRPC_TAG_LLONG_: a->v.ll = va_arg(*ap, long long); break;
        case NUMRPC_TAG_ULLONG_: a->v.ull = va_arg(*ap, unsigned long long); break;
        case NUMRPC_TAG_DOUBLE_: a->v.d = va_arg(*ap, double); break;
        case NUMRPC_TAG_SCOMPLEX_: a->v.dz = va_arg(*ap, float _Complex); break;
        case NUMRPC_TAG_DCOMPLEX_: a->v.dz = va_arg(*ap, double _Complex); break;
        default:
            if (a->tag < NUMRPC_TAG_P_VOID_ || a->tag > NUMRPC_TAG_P_OTHER_)
                /* its size is unknown: nothing after it can be read */
                return err_set(err, NUMRPC_EINVAL,
                               "%s: argument %d has a C type numrpc cannot pass (a struct, a long double, ...)",
                               name, i + 1);
            a->v.p = va_arg(*ap, void *);
        }
    }
    return 0;
}

/* ---- Checking ---- */

const char *typed_tag_name(int tag)
{
    static const char *const values[] = {"an unknown type", "int", "unsigned int", "long", "unsigned long",
                                         "long long", "unsigned long long", "double", "float complex",
                                         "double complex"};
    static const char *const pointers[] = {"void *", "char *", "short *", "int *", "unsigned int *",
                                           "long *", "long long *", "float *", "double *", "float complex *",
                                           "double complex *", "char **", "numrpc_data *", "a pointer"};
    if (tag >= 0 && tag <= NUMRPC_TAG_DCOMPLEX_) return values[tag];
    if (tag >= NUMRPC_TAG_P_VOID_ && tag <= NUMRPC_TAG_P_OTHER_) return pointers[tag - NUMRPC_TAG_P_VOID_];
    return "an unknown type";
}

static int is_integer(int tag)
{
    return tag >= NUMRPC_TAG_INT_ && tag <= NUMRPC_TAG_ULLONG_;
}

static int is_unsigned(int tag)
{
    return tag == NUMRPC_TAG_UINT_ || tag == NUMRPC_TAG_ULONG_ || tag == NUMRPC_TAG_ULLONG_;
}

/* The pointer tag of an element of type t (for arrays and out scalars). */
static int pointer_tag_of(uint32_t t)
{
    switch (t) {
    case NUMRPC_T_CHAR: return NUMRPC_TAG_P_CHAR_;
    case NUMRPC_T_INT: return NUMRPC_TAG_P_INT_;
    case NUMRPC_T_LONG: return sizeof(long) == 8 ? NUMRPC_TAG_P_LONG_ : NUMRPC_TAG_P_LLONG_;
    case NUMRPC_T_FLOAT: return NUMRPC_TAG_P_FLOAT_;
    case NUMRPC_T_DOUBLE: return NUMRPC_TAG_P_DOUBLE_;
    case NUMRPC_T_SCOMPLEX: return NUMRPC_TAG_P_SCOMPLEX_;
    case NUMRPC_T_DCOMPLEX: return NUMRPC_TAG_P_DCOMPLEX_;
    case NUMRPC_T_STRING: return NUMRPC_TAG_P_STRINGS_;
    default: return NUMRPC_TAG_P_CHAR_; /* files: their paths */
    }
}

/* A pointer of tag goes where elements of type t go: its own type, void *,
 * the same-sized integer, a complex array as its parts, or a handle. */
static int pointer_fits(int tag, uint32_t t, int array)
{
    int want = pointer_tag_of(t);
    if (tag == want || tag == NUMRPC_TAG_P_VOID_) return 1;
    if (array && tag == NUMRPC_TAG_P_DATA_) return 1;
    if (t == NUMRPC_T_LONG) /* the IDL's long is 64 bits: long long, and long where it is as wide */
        return tag == NUMRPC_TAG_P_LLONG_ || (tag == NUMRPC_TAG_P_LONG_ && sizeof(long) == 8);
    if (t == NUMRPC_T_DCOMPLEX) return tag == NUMRPC_TAG_P_DOUBLE_; /* interleaved parts */
    if (t == NUMRPC_T_SCOMPLEX) return tag == NUMRPC_TAG_P_FLOAT_;
    return 0;
}

int typed_pointer_fits(int tag, uint32_t t, int array)
{
    return pointer_fits(tag, t, array);
}

static int mismatch(const iface_t *f, uint32_t i, const typed_arg *a, err_t *err)
{
    const iface_param *p = &f->params[i];
    const char *what = p->rank > 0 ? " array" : p->mode == IFACE_IN ? "" : " (an output: by pointer)";
    return err_set(err, NUMRPC_EINVAL, "%s: argument %u (%s) is %s%s, %s was given: nothing was sent", f->name,
                   i + 1, p->name, iface_type_name(p->type), what, typed_tag_name(a->tag));
}

/* An integer argument into an int-sized or long parameter, in range. */
static int integer_into(const iface_t *f, uint32_t i, const typed_arg *a, int64_t lo, int64_t hi, int64_t *out,
                        err_t *err)
{
    int fits = is_unsigned(a->tag) ? a->v.ull <= (unsigned long long)hi : a->v.ll >= lo && a->v.ll <= hi;
    if (!fits)
        return err_set(err, NUMRPC_EINVAL, "%s: argument %u (%s) is %s, and %s%lld does not fit it", f->name, i + 1,
                       f->params[i].name, iface_type_name(f->params[i].type), is_unsigned(a->tag) ? "+" : "",
                       is_unsigned(a->tag) ? (long long)(a->v.ull > LLONG_MAX ? LLONG_MAX : a->v.ull) : a->v.ll);
    *out = is_unsigned(a->tag) ? (int64_t)a->v.ull : (int64_t)a->v.ll;
    return 0;
}

/* A scalar of mode in, by value: the conversions a C prototype makes
 * (integers to wider or floating types, reals to complex), complex by
 * value or, as before, by pointer to its parts. */
static int value_into(const iface_t *f, uint32_t i, const typed_arg *a, value_slot *v, err_t *err)
{
    uint32_t t = f->params[i].type;
    int64_t n = 0;
    switch (t) {
    case NUMRPC_T_CHAR:
    case NUMRPC_T_INT:
        if (!is_integer(a->tag)) return mismatch(f, i, a, err);
        if (integer_into(f, i, a, t == NUMRPC_T_CHAR ? CHAR_MIN : INT32_MIN, t == NUMRPC_T_CHAR ? UCHAR_MAX : INT32_MAX,
                         &n, err) != 0)
            return err->code;
        if (t == NUMRPC_T_CHAR) v->c = (char)n;
        else v->i = (int32_t)n;
        return 0;
    case NUMRPC_T_LONG:
        if (!is_integer(a->tag)) return mismatch(f, i, a, err);
        if (integer_into(f, i, a, INT64_MIN, INT64_MAX, &n, err) != 0) return err->code;
        v->l = n;
        return 0;
    case NUMRPC_T_FLOAT:
    case NUMRPC_T_DOUBLE: {
        double d;
        if (a->tag == NUMRPC_TAG_DOUBLE_) d = a->v.d;
        else if (is_integer(a->tag)) d = is_unsigned(a->tag) ? (double)a->v.ull : (double)a->v.ll;
        else return mismatch(f, i, a, err);
        if (t == NUMRPC_T_FLOAT) v->f = (float)d;
        else v->d = d;
        return 0;
    }
    case NUMRPC_T_SCOMPLEX:
    case NUMRPC_T_DCOMPLEX: {
        double _Complex z;
        if (a->tag == NUMRPC_TAG_DCOMPLEX_ || a->tag == NUMRPC_TAG_SCOMPLEX_) z = a->v.dz;
        else if (a->tag == NUMRPC_TAG_DOUBLE_) z = a->v.d;
        else if (is_integer(a->tag)) z = is_unsigned(a->tag) ? (double)a->v.ull : (double)a->v.ll;
        else if (a->tag >= NUMRPC_TAG_P_VOID_ && pointer_fits(a->tag, t, 0)) { /* by pointer to its parts */
            if (a->v.p == NULL) return err_set(err, NUMRPC_EINVAL, "%s: %s is NULL", f->name, f->params[i].name);
            memcpy(v, a->v.p, iface_type_size(t));
            return 0;
        } else
            return mismatch(f, i, a, err);
        if (t == NUMRPC_T_SCOMPLEX) v->fz = (float _Complex)z;
        else v->dz = z;
        return 0;
    }
    default: /* strings and files: their char * */
        if (a->tag != NUMRPC_TAG_P_CHAR_ && a->tag != NUMRPC_TAG_P_VOID_ && !(is_integer(a->tag) && a->v.ll == 0))
            return mismatch(f, i, a, err);
        v->s = is_integer(a->tag) ? NULL : (const char *)a->v.p;
        return 0;
    }
}

int typed_bind_one(const iface_t *f, uint32_t i, const typed_arg *a, int by_value, value_slot *v, void **ptr,
                   err_t *err)
{
    const iface_param *p = &f->params[i];
    if (by_value) { /* in scalars; strings and files (any mode) as their char * */
        if (value_into(f, i, a, v, err) != 0) return err->code;
        *ptr = v;
        return 0;
    }
    if (is_integer(a->tag) && !is_unsigned(a->tag) && a->v.ll == 0) { /* a literal 0: NULL (C++'s NULL too) */
        *ptr = NULL;
        return 0;
    }
    if (a->tag < NUMRPC_TAG_P_VOID_ || !pointer_fits(a->tag, p->type, p->rank > 0)) return mismatch(f, i, a, err);
    handle_facts facts;
    if (a->tag == NUMRPC_TAG_P_DATA_ && a->v.p != NULL && handles_lookup(a->v.p, &facts) == 0)
        return err_set(err, NUMRPC_EINVAL, "%s: argument %u (%s): handle %p was freed (or is no numrpc_data of this process)",
                       f->name, i + 1, p->name, a->v.p);
    *ptr = a->v.p;
    return 0;
}
