/* typed.h -- numrpc_call's arguments with the C types their tags say
 * (numrpc.h NUMRPC_TAG_*), read and checked against a routine (typed.c). */
#ifndef NUMRPC_CLIENT_TYPED_H
#define NUMRPC_CLIENT_TYPED_H

#include <stdarg.h>
#include <stdint.h>

#include "callobj.h"

#define TYPED_MAX 64 /* arguments of one call at most (numrpc.h counts 63) */

/* One argument as its caller passed it. */
typedef struct typed_arg {
    int tag; /* enum numrpc_tag_ */
    union {
        long long ll;           /* signed integers  */
        unsigned long long ull; /* unsigned ones    */
        double d;
        double _Complex dz;     /* float complex widened */
        void *p;
    } v;
} typed_arg;

/* Reads nargs (tag, value) pairs from ap into out (TYPED_MAX at most).
 * 0, or NUMRPC_EINVAL (err names the routine and the argument) for a tag
 * of a type numrpc cannot pass: nothing after it can be read. */
int typed_read(int nargs, va_list *ap, typed_arg *out, const char *name, err_t *err);
/* Checks argument i of f against its parameter and binds it: by_value
 * (in scalars; strings and files) into *v with *ptr = v, else the
 * caller's pointer into *ptr.  The conversions a C prototype makes are
 * made; anything else is NUMRPC_EINVAL naming the routine, the parameter
 * and both types. */
int typed_bind_one(const iface_t *f, uint32_t i, const typed_arg *a, int by_value, value_slot *v, void **ptr,
                   err_t *err);
/* True when a pointer of tag may stand where elements of type t go (an
 * array's when array): what typed_bind_one accepts. */
int typed_pointer_fits(int tag, uint32_t t, int array);
/* "double *", "int", ... for a tag. */
const char *typed_tag_name(int tag);

#endif
