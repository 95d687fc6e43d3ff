/* stubmod.h -- the binary contract between a stub module (C emitted by
 * numrpc-idlc, built as a shared object) and the server that loads it. */
#ifndef NUMRPC_COMMON_STUBMOD_H
#define NUMRPC_COMMON_STUBMOD_H

#include <stddef.h>
#include <stdint.h>

#define NUMRPC_STUB_ABI 1
/* The symbol every stub module exports. */
#define NUMRPC_STUB_SYMBOL "numrpc_stub_module"

/* Calls the library routine.  argv[i] points to parameter i: to the scalar's
 * value in its C type (int, long, float, double, char, complex as two
 * floats/doubles, char* for a string) or to the base of an array block laid
 * out as the interface says.  The thunk passes them in the routine's
 * calling convention (by value for C scalars of mode in, by reference for
 * Fortran).  All memory is the server's; the thunk allocates nothing. */
typedef void (*stub_thunk_fn)(void **argv);

typedef struct stub_entry {
    const char *name;          /* routine name                          */
    const uint8_t *iface_blob; /* XDR interface descriptor (iface.h)    */
    size_t iface_len;
    stub_thunk_fn thunk;
} stub_entry;

typedef struct stub_module {
    uint32_t abi; /* NUMRPC_STUB_ABI */
    const char *module;
    size_t count;
    const stub_entry *entries;
} stub_module;

#endif
