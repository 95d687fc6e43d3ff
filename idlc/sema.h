/* sema.h -- semantic checks of a parsed IDL file and its translation into
 * interface descriptors (iface_t) plus the routine's Calls argument order. */
#ifndef NUMRPC_IDLC_SEMA_H
#define NUMRPC_IDLC_SEMA_H

#include <stddef.h>
#include <stdint.h>

#include "ast.h"
#include "iface.h"

/* One routine, ready for code generation. */
typedef struct sema_routine {
    iface_t iface; /* validated, hashed; params in Define order          */
    /* call_order[k] is the parameter passed as the routine's k-th argument
     * (the order of the Calls list). */
    uint32_t call_order[IFACE_MAX_PARAMS];
    uint32_t ncall; /* entries of call_order: nparams, less the result */
    /* The OUT scalar that receives the routine's return value ("Calls
     * "Fortran" r = ddot(...)"), or -1 when the routine is called as void. */
    int32_t result;
} sema_routine;

typedef struct sema_unit {
    char *module; /* the Module name, or the file's base name */
    size_t count;
    sema_routine *routines;
} sema_unit;

/* Checks every Define of file (reporting each mistake with ast_error) and
 * fills *unit with the routines.  Returns the file's total error count;
 * the unit is only meaningful when that is 0 (free it either way). */
int sema_check(ast_file *file, sema_unit *unit);
void sema_unit_free(sema_unit *unit);

#endif
