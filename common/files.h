/* files.h -- file parameters on the wire: whole files shipped in a call's
 * request or reply (filename), and the size announcement of remote files. */
#ifndef NUMRPC_COMMON_FILES_H
#define NUMRPC_COMMON_FILES_H

#include "iface.h"
#include "marshal.h"

/* A file's length on the wire when the sender has no such file (an OUT
 * filename the routine did not write): the receiver leaves its path alone. */
#define FILES_ABSENT UINT64_MAX
/* Bytes of one remote-file block the server fetches and caches. */
#define FILES_BLOCK (1u << 20)
/* The most bytes one FILE_READ may ask for. */
#define FILES_MAX_READ (16u << 20)

/* argv[i] of a file parameter points at a char* slot holding a path: on
 * the client the user's file, on the server a file in the call's private
 * directory (for rfile on the server, the slot holds a numrpc_rfile*). */

/* The sender's check before any byte goes out: every file of direction dir
 * has a path, and every filename or rfile to be read exists and is a
 * regular file (on the client: IN files). */
int files_check(const iface_t *f, void *const *argv, marshal_dir dir, err_t *err);

/* Writes the file section of direction dir after the arrays: per filename
 * that travels, u64 length (FILES_ABSENT when the file does not exist),
 * the bytes, zero padding to 8; per rfile of a request, u64 size. */
int files_write(wire_writer *w, const iface_t *f, void *const *argv, marshal_dir dir,
                err_t *err);

/* Called for each rfile of a request with its announced size. */
typedef int (*files_rfile_fn)(void *ctx, uint32_t index, uint64_t size, err_t *call_err);

/* Reads the file section of direction dir: each filename's bytes go to the
 * path in its slot (created 0600, replaced).  A file over max_bytes, or a
 * path that cannot be written, is a call error in *call_err (the rest of
 * the message is not read; the caller skips it and answers); protocol and
 * connection errors go to *err.  Returns nonzero when either is set. */
int files_read(wire_reader *r, const iface_t *f, void *const *argv, marshal_dir dir,
               uint64_t max_bytes, files_rfile_fn on_rfile, void *ctx, err_t *call_err,
               err_t *err);

#endif
