/* codegen.h -- writes the C source of a stub module: descriptor blobs,
 * call thunks and the exported numrpc_stub_module table. */
#ifndef NUMRPC_IDLC_CODEGEN_H
#define NUMRPC_IDLC_CODEGEN_H

#include <stdio.h>

#include "sema.h"

/* Writes the stub module for unit (compiled from source_path) to out.
 * Returns 0, or -1 after printing why on stderr. */
int codegen_emit(FILE *out, const sema_unit *unit, const char *source_path);

#endif
