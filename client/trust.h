/* trust.h -- which interfaces the client accepts from a server: the pin
 * file's, the process's first binding of each routine, a typed header's pin. */
#ifndef NUMRPC_CLIENT_TRUST_H
#define NUMRPC_CLIENT_TRUST_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "iface.h"

/* Every refusal below is NUMRPC_EAUTH ("not authorised"): final, never
 * retried; a refetch from the same server could not make it pass. */

/* Reads the pins of pin_file (NULL or "": no pins) and makes them the
 * pins from now on; every routine's binding is forgotten (a new
 * configuration binds anew).  On failure nothing changes. */
int trust_configure(const char *pin_file, err_t *err);
/* Forgets the pins and the bindings (numrpc_finalize). */
void trust_forget(void);

/* The gate of every interface fetched from server for routine asked
 * (blob: its encoding, as received), before anything uses it: it must be
 * the routine asked for; with pins on, pinned and equal to its pin; and
 * the first one admitted for its name is frozen: a later one whose
 * parameters read or write the caller's memory differently (mode, type,
 * rank, an extent or string bound) is refused, naming the parameter. */
int trust_admit(const iface_t *f, const char *asked, const uint8_t *blob, size_t len,
                const char *server, err_t *err);

/* A typed header's check (numrpc_call_pinned): f, from server, must be
 * the interface of pin_line (pin.h), hash and parameters. */
int trust_expect(const iface_t *f, const char *pin_line, const char *server, err_t *err);

#endif
