/* files_call.h -- a call's files (files_call.c): staged files in a private
 * directory (mkdtemp, removed after the call), remote files read through
 * the connection in cached blocks, and the routine services of stubmod.h. */
#ifndef NUMRPC_SERVER_FILES_CALL_H
#define NUMRPC_SERVER_FILES_CALL_H

#include <stdint.h>

#include "error.h"
#include "iface.h"
#include "msg.h"
#include "slots.h"
#include "stubmod.h"

/* One call's files; lives on the serving worker's stack for the call. */
typedef struct files_call {
    msg_conn *conn;                   /* the caller's connection (borrowed) */
    worker_slot *slot;                /* held while a remote file is read   */
    uint64_t max_bytes;               /* a staged file's bytes at most      */
    uint32_t call_id;
    const iface_t *f;
    void **argv;
    char dir[512];                    /* "" when the call stages nothing */
    void *rfiles[IFACE_MAX_PARAMS];   /* rfile handles, owned            */
} files_call;

/* ---- The routine services a module may link (stubmod.h) ---- */
extern const stub_services server_stub_services;
/* Clears, and reports, what the routine of the call (files_call_begin
 * first) leaves: its stub_services.fail and its remote-file exchanges,
 * made in the worker or in a child process the routine forked. */
void files_routine_begin(void);
int files_routine_failed(err_t *call_err);

/* ---- A call's files ---- */
/* Fills the file slots of argv (paths in a new private directory); at the
 * worker's first call, also makes the page its routines' state is shared in. */
int files_call_begin(files_call *fc, msg_conn *conn, worker_slot *slot, uint64_t max_bytes,
                     uint32_t call_id, const iface_t *f, void **argv, err_t *call_err);
/* Reads the request's file section (limit: max_bytes per file). */
int files_call_read(files_call *fc, err_t *call_err, err_t *err);
/* After the routine: nonzero, with *err saying why, when a remote-file
 * exchange broke (or was cut short): the stream is out of step and the
 * connection must be closed (docs/protocol.md, "Files"). */
int files_call_broken(const files_call *fc, err_t *err);
/* Bytes a child process of the routine read from (*in) and wrote to (*out)
 * the connection in remote-file exchanges: the call's, though the worker's
 * reader and writer never counted them. */
void files_call_child_bytes(uint64_t *in, uint64_t *out);
/* Frees paths and handles and removes the directory; safe to repeat. */
void files_call_end(files_call *fc);

#endif
