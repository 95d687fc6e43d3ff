/* fuzz_support.h -- what the libFuzzer targets share: the fuzzer's bytes as
 * a peer's stream, the tree's real interfaces, and bytes taken off the front. */
#ifndef NUMRPC_FUZZ_SUPPORT_H
#define NUMRPC_FUZZ_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "iface.h"
#include "stubmod.h"
#include "wire.h"

/* ---- A peer's bytes through the real framing ---- */
/* The process's one reader (its 512 KiB buffer allocated on the first call),
 * refusing packets over max_packet bytes as the real processes do. */
wire_reader *fuzz_reader(size_t max_packet);
/* Gives r a fresh stream over data[0..n): nothing buffered, nothing half
 * read; the end of the bytes is the peer closing the connection. */
void fuzz_reader_feed(wire_reader *r, const uint8_t *data, size_t n);
/* Closes the stream fed last. */
void fuzz_reader_close(void);

/* Reads the body of a HELLO, LIST or GET_IFACE request (a server and the
 * metaserver both answer them); name gets GET_IFACE's routine.  1 when type
 * is none of them (nothing read), else the readers' code. */
int fuzz_read_peer_request(wire_reader *r, uint32_t type, char name[IFACE_MAX_NAME + 1], err_t *err);

/* ---- The real interfaces ----
 * Every routine of stubs/linpack.idl, blas.idl, lapack.idl, sdpa.idl and
 * tests/client/strmod.idl, compiled by idlc's own parser and checks, then
 * registered as a server registers a module (encoded, decoded, validated).
 * Loaded on the first call; the process aborts if one does not load. */
uint32_t fuzz_iface_count(void);
const iface_t *fuzz_iface_at(uint32_t i);
/* By name, as a server finds a CALL's routine; NULL when unknown. */
const iface_t *fuzz_iface_find(const char *name);

/* ---- One call's argument storage, as stubmod.h lays it out ---- */

typedef struct fuzz_args {
    void *argv[IFACE_MAX_PARAMS];
    stub_scalar scalars[IFACE_MAX_PARAMS];
    iface_shape shapes[IFACE_MAX_PARAMS];
    void *owned[IFACE_MAX_PARAMS]; /* fuzz_args_fill's blocks and tables */
} fuzz_args;

/* ---- Bytes taken off the front of an input (choices, then the stream) ---- */
typedef struct fuzz_cursor {
    const uint8_t *p;
    size_t left;
} fuzz_cursor;
/* The next byte, or 0 once the input is used up. */
uint8_t fuzz_take_byte(fuzz_cursor *c);

/* ---- A caller's arguments, as a client program passes them ----
 * Each integer scalar takes one byte from c: int and long the byte mod 32,
 * char one of "NVULTA"; other scalars are fixed.  Then the shapes, and
 * every array a malloc'd block of its shape holding a pattern; IN strings
 * "abc", OUT and INOUT ones buffers of bound + 1 bytes; file slots hold
 * file_path.  0, or -1 when the shapes fail (no call would be made).
 * Free with fuzz_args_free (also after a failure). */
int fuzz_args_fill(const iface_t *f, fuzz_cursor *c, const char *file_path, fuzz_args *a);
void fuzz_args_free(const iface_t *f, fuzz_args *a);

#endif
