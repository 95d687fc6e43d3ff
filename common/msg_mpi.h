/* msg_mpi.h -- the messages between a server's worker and rank 0 of the
 * resident MPI job (docs/protocol.md, "The MPI job"): one writer, one reader each. */
#ifndef NUMRPC_COMMON_MSG_MPI_H
#define NUMRPC_COMMON_MSG_MPI_H

#include <stdint.h>

#include "error.h"
#include "iface.h"
#include "stubmod.h"
#include "wire.h"

/* Packets on the worker <-> rank 0 socket (a Unix socket: few, large). */
#define MSG_MPI_PACKET (256u << 10)

/* Readers run after wire_next_message gave the message's type, except
 * msg_mpi_read_start and msg_mpi_read_reply, which read the whole message. */

/* ---- MPI_START (rank 0 -> worker): empty.  Rank 0 has taken this
 * connection and reads its call next; until it comes, the worker's call
 * has not started on the job (and may go to a restarted one) ---- */
int msg_mpi_write_start(wire_writer *w, err_t *err);
int msg_mpi_read_start(wire_reader *r, err_t *err);

/* ---- MPI_CALL (worker -> rank 0): the routine's descriptor (opaque),
 * its scalars as the walker writes them, then a key per data handle the
 * call names; its arrays follow in MPI_ARRAYS, once rank 0 has said which
 * ones it holds already (MPI_HELD) ---- */

/* A handle's bytes as the job may keep them: the handle's id (16 random
 * bytes) and a version the server gives each of its contents once. */
typedef struct msg_mpi_key {
    uint8_t id[16];
    uint64_t version;
} msg_mpi_key;
enum {
    MSG_MPI_KEY_NOW = 0x1u,  /* the argument's bytes are key's (IN, INOUT)      */
    MSG_MPI_KEY_NEXT = 0x2u, /* a success gives the handle next (INOUT, OUT) */
};
typedef struct msg_mpi_handle {
    uint32_t param, flags;
    msg_mpi_key key;       /* key.id always; key.version with KEY_NOW */
    uint64_t next_version; /* with KEY_NEXT                           */
} msg_mpi_handle;
typedef struct msg_mpi_handles {
    uint32_t n; /* ascending by param, each param once */
    msg_mpi_handle h[IFACE_MAX_PARAMS];
} msg_mpi_handles;

/* The whole message.  blob/len: f's encoding; handles: the call's (NULL:
 * none). */
int msg_mpi_write_call(wire_writer *w, uint32_t call_id, const uint8_t *blob, uint32_t len, const iface_t *f,
                       void *const *argv, const msg_mpi_handles *handles, err_t *err);

/* A call as rank 0 reads it: everything owned (msg_mpi_call_free). */
typedef struct msg_mpi_call {
    iface_t f;                              /* decoded, validated, MPI's */
    void *argv[IFACE_MAX_PARAMS];           /* scalars[i], or a calloc'd block */
    stub_scalar scalars[IFACE_MAX_PARAMS];
    iface_shape shapes[IFACE_MAX_PARAMS];   /* held: rank 0 keeps the array */
    uint64_t array_bytes;                   /* of every block together        */
    msg_mpi_handles handles;
} msg_mpi_call;
/* Reads the body: decodes the descriptor (an MPI routine without strings
 * or files, else NUMRPC_EPROTO), its scalars, evaluates the shapes, checks
 * that all its arrays (work arrays too) fit in max_bytes (else
 * NUMRPC_ELIMIT) before allocating them zeroed, reads the handles (each an
 * array parameter of the call, ascending, flags that fit its mode,
 * versions not 0) and the message's end.  On failure nothing is left
 * allocated, and the rest of the message is the caller's to drain
 * (wire_skip_message) if the stream is not broken. */
int msg_mpi_read_call(wire_reader *r, uint64_t max_bytes, msg_mpi_call *c, err_t *err);
void msg_mpi_call_free(msg_mpi_call *c);

/* ---- MPI_HELD (rank 0 -> worker): u32 count, then the parameters whose
 * bytes rank 0 holds (each named by MPI_CALL with KEY_NOW): the worker
 * does not send them.  Rank 0 answers every MPI_CALL so (c NULL: nothing
 * held, the call refused), then every MPI_ARRAYS with MPI_REPLY ---- */
int msg_mpi_write_held(wire_writer *w, uint32_t call_id, const msg_mpi_call *c, err_t *err);
/* Reads the next message as MPI_HELD for want_id: marks the parameters
 * held in shapes, after checking each against handles. */
int msg_mpi_read_held(wire_reader *r, uint32_t want_id, const msg_mpi_handles *handles, iface_shape *shapes,
                      err_t *err);

/* ---- MPI_ARRAYS (worker -> rank 0): the IN and INOUT arrays not held,
 * as the walker writes a request's ---- */
int msg_mpi_write_arrays(wire_writer *w, uint32_t call_id, const iface_t *f, void *const *argv,
                         const iface_shape *shapes, err_t *err);
/* The body, after wire_next_message: into c's blocks, skipping the held. */
int msg_mpi_read_arrays(wire_reader *r, msg_mpi_call *c, err_t *err);

/* ---- MPI_REPLY (rank 0 -> worker): i32 status, string detail, the
 * seconds of the three phases; then, for status 0, the results as the
 * walker writes a reply ---- */
typedef struct msg_mpi_phases {
    double scatter_s, compute_s, gather_s;
} msg_mpi_phases;
/* The whole message; code != 0 sends no results (argv may be NULL). */
int msg_mpi_write_reply(wire_writer *w, uint32_t call_id, int code, const char *detail,
                        const msg_mpi_phases *ph, const iface_t *f, void *const *argv,
                        const iface_shape *shapes, err_t *err);
/* Reads the next message as the reply to want_id.  A failure status is the
 * routine's: it goes to call_err with its detail (rc 0).  On success the
 * results go where argv points, checked against shapes (every OUT and
 * INOUT array travels, a handle's too).  rc != 0: the stream is
 * unusable (peer gone, garbage, deadline). */
int msg_mpi_read_reply(wire_reader *r, uint32_t want_id, const iface_t *f, void *const *argv,
                       const iface_shape *shapes, msg_mpi_phases *ph, err_t *call_err, err_t *err);

#endif
