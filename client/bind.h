/* bind.h -- binding a caller's arguments (a va_list or tagged array) to a
 * routine's interface, into a call object (bind.c). */
#ifndef NUMRPC_CLIENT_BIND_H
#define NUMRPC_CLIENT_BIND_H

#include <stdarg.h>
#include <stddef.h>

#include "callobj.h"
#include "typed.h"

/* Where a call's arguments come from: a va_list or a tagged array. */
typedef struct arg_source {
    int nargs;
    const numrpc_arg *tagged; /* NULL for varargs */
    va_list *va;
    const typed_arg *typed;   /* numrpc_call's tagged varargs, read (typed.h); else NULL */
} arg_source;

/* Binds src to f into k->argv/k->slots (checks arity and types) and
 * consumes a va_list: once per call.  Every later call (another server's
 * interface, a retry) only checks that f has the parameters the bind
 * used -- same count, modes, types and ranks -- else NUMRPC_EAUTH. */
int call_bind(call_obj *k, const iface_t *f, arg_source *src, err_t *err);
/* call_bind, then copies every in string and file path into k->copies and
 * evaluates the shapes and the complexity: afterwards the call no longer
 * reads the caller's argument list (an asynchronous call's). */
int call_capture(call_obj *k, const iface_t *f, arg_source *src, err_t *err);
/* Frees what call_capture duplicated. */
void call_release_args(call_obj *k);
/* Checks the bound arrays against their shapes (none NULL that travels,
 * output strings with buffers, strings within their bounds). */
int call_check_arrays(const iface_t *f, void *const *argv, const iface_shape *shapes, err_t *err);
/* "a, lda, n" : the parameter names of f, for messages. */
void bind_list_params(const iface_t *f, char *buf, size_t len);

#endif
