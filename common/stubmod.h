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

/* Storage a scalar's argv[i] may point at: large and aligned enough for
 * every IDL scalar type (the server's call arguments, a test harness's). */
typedef union stub_scalar {
    int32_t i;
    int64_t l;
    float f;
    double d;
    char c;
    char *s;
    double z[2];
} stub_scalar;

typedef struct stub_entry {
    const char *name;          /* routine name                          */
    const uint8_t *iface_blob; /* XDR interface descriptor (iface.h)    */
    size_t iface_len;
    stub_thunk_fn thunk;       /* NULL for a routine of another backend
                                  (iface_t.backend: the MPI job runs it) */
} stub_entry;

/* ---- Files (docs/idl.md, "Files") ----
 * An IN or OUT filename reaches the routine as a char* path in a private
 * directory of the call (the server removes it afterwards).  An IN rfile
 * reaches it as a numrpc_rfile*: a client file read on demand through the
 * call's connection, in blocks cached for the call.  Owned by the server,
 * valid during the call (also in a child the routine forks, as long as the
 * worker waits for it and does nothing else meanwhile). */
typedef struct numrpc_rfile {
    const char *name;  /* the parameter's name, for messages */
    uint64_t size;     /* bytes in the client's file         */
    /* Copies up to len bytes at offset into buf; returns the count (0 at
     * the end), or -1 with errno set (EIO) when the client could not send. */
    long (*pread)(struct numrpc_rfile *rf, void *buf, size_t len, uint64_t offset);
    /* A new seekable read-only stdio stream over the file (fopencookie),
     * or NULL; the routine fcloses it. */
    void *(*open_stream)(struct numrpc_rfile *rf);
    void *impl;        /* the server's */
} numrpc_rfile;

/* Services the server offers a routine during a call.  A module that wants
 * them exports `const stub_services *numrpc_stub_services;` (a variable):
 * the server sets it when it loads the module. */
#define NUMRPC_STUB_SERVICES_SYMBOL "numrpc_stub_services"
typedef struct stub_services {
    /* The call ends with error code (a NUMRPC_E*) and this detail instead
     * of results.  Call at most once, from the worker, before returning. */
    void (*fail)(int code, const char *detail);
    /* Appended after fail (a module built before reads fail only).  How far
     * the routine has come: fraction 0..1 (-1 = unknown) and a line of its
     * own words (at most 256 bytes kept, "" or NULL for none), shown to a
     * caller that asked for progress in its next frame.  Cheap: nothing is
     * sent from here, and nothing is done when the call asked for none.
     * From any thread of the routine, or a child process it forked. */
    void (*progress)(double fraction, const char *message);
} stub_services;

typedef struct stub_module {
    uint32_t abi; /* NUMRPC_STUB_ABI */
    const char *module;
    size_t count;
    const stub_entry *entries;
} stub_module;

#endif
