/* mpi_call.h -- a worker running a routine of Backend "MPI": its arguments
 * to rank 0 of the server's job, its results back (mpi_call.c). */
#ifndef NUMRPC_SERVER_MPI_CALL_H
#define NUMRPC_SERVER_MPI_CALL_H

#include <stdint.h>

#include "error.h"
#include "iface.h"
#include "msg_mpi.h"
#include "slots.h"

/* What one call cost the job and saved (for the log line and /metrics). */
typedef struct mpi_call_figures {
    msg_mpi_phases ph;   /* rank 0's scatter, compute, gather seconds      */
    uint32_t kept;       /* arguments rank 0 held already (not sent)       */
    uint64_t kept_bytes; /* their bytes                                     */
    uint64_t sent_bytes; /* framed bytes the worker sent to rank 0          */
} mpi_call_figures;

/* Runs f on the job: waits for the job if it is (re)starting, then for
 * rank 0 to take the call, sends the scalars and the keys of the call's
 * data handles (handles, NULL: none), then the arrays rank 0 does not hold
 * already (argv, shaped as shapes say; blob is f's encoding), and reads
 * the results back into argv's buffers and its figures into *fig.  0, or a code with
 * call_err set: no job configured or the job cannot start (NUMRPC_ESERVER,
 * with mpirun's words), the job died during the call (NUMRPC_ECRASHED),
 * or the routine's own error.  No deadline here: the slot says COMPUTING,
 * and the dispatcher stops the worker at the call's deadline or cancel
 * (slot->mpi_serving then tells it the job was computing for it). */
int mpi_call_run(worker_slot *slot, const iface_t *f, const uint8_t *blob, size_t blob_len, void **argv,
                 const iface_shape *shapes, const msg_mpi_handles *handles, mpi_call_figures *fig,
                 err_t *call_err);

#endif
