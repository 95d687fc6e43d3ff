/* generic.h -- expansion of generic Defines ("Define ?gemm {s, d, c, z}")
 * into one plain Define per precision, before the semantic checks. */
#ifndef NUMRPC_IDLC_GENERIC_H
#define NUMRPC_IDLC_GENERIC_H

#include "ast.h"

/* Replaces every generic Define of file by its routines, in the order of
 * its patterns and prefixes, and reports (ast_error) what only a generic
 * Define may use (T, R, "{c, z}", complex in an expression, a '?' in a
 * Calls name) when a plain one uses it. */
void generic_expand(ast_file *file);

#endif
