/* fortran.h -- what the Fortran module's C side shares between the call
 * path (fortran.c) and the handle functions (fortran_data.c). */
#ifndef NUMRPC_CLIENT_FORTRAN_H
#define NUMRPC_CLIENT_FORTRAN_H

#include <ISO_Fortran_binding.h>
#include <stddef.h>
#include <stdint.h>

#include "handles.h"

/* The numrpc_type of a descriptor's elements (NUMRPC_T_CHAR for any
 * character); NUMRPC_T_VOID when numrpc has no such type. */
uint32_t fortran_element_type(const CFI_cdesc_t *d);
/* A descriptor's type in words a Fortran programmer recognises. */
const char *fortran_type_name(const CFI_cdesc_t *d, char *buf, size_t len);
/* Number of elements; -1 if not contiguous; INT64_MAX if assumed-size. */
int64_t fortran_contiguous_elems(const CFI_cdesc_t *d);
/* Whether d is a type(numrpc_data) (or a type(c_ptr)) scalar: 0 when it is
 * not shaped like one; 1 when it holds a live handle (*h and *facts
 * filled); -1 when it holds none (never put, or freed). */
int fortran_handle_of(const CFI_cdesc_t *d, void **h, handle_facts *facts);
/* The module's failure convention: with status present, *status = rc;
 * without it, a failure prints "what: reason: detail" and exits 1. */
void fortran_report(int rc, int *status, const char *what);

#endif
