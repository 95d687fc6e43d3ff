/* mpi_call.c -- a worker's side of an MPI routine: connect to rank 0's
 * socket, wait for MPI_START, send MPI_CALL, learn what rank 0 holds
 * (MPI_HELD), send the rest (MPI_ARRAYS), read MPI_REPLY into the call. */
#define _GNU_SOURCE
#include "mpi_call.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "mpi_job.h"
#include "msg.h"
#include "progress.h"
#include "sock.h"

#define RETRY_US 20000      /* between tries while the job (re)starts      */
#define END_NOTICE_S 2.0    /* how long a crash report waits for its cause */

static msg_conn conn; /* this worker's, made at its first MPI call */
static int conn_made;

static int connect_job(void)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    const char *path = mpi_job_socket_path();
    if (strlen(path) >= sizeof a.sun_path) return -1;
    memcpy(a.sun_path, path, strlen(path));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Connected to rank 0 and told it took the call: 0, or a code in call_err
 * when the job cannot come. */
static int wait_for_rank0(const iface_t *f, unsigned *ends, err_t *call_err)
{
    const mpi_job_state *st = mpi_job_state_get();
    const mpi_job_options *o = mpi_job_get_options();
    double give_up = sock_now() + o->start_seconds + 5;
    char text[MPI_JOB_TEXT];
    for (;;) {
        if (atomic_load(&st->phase) != MPI_JOB_READY && atomic_load(&st->failures) > 0) {
            mpi_job_text(text, sizeof text);
            return err_set(call_err, NUMRPC_ESERVER, "%s: the MPI job is not running: %s", f->name, text);
        }
        *ends = atomic_load(&st->ends);
        int fd = connect_job();
        if (fd >= 0) {
            err_t err;
            msg_conn_attach(&conn, transport_tcp(fd), "MPI job");
            if (msg_mpi_read_start(&conn.reader, &err) == 0) return 0;
            msg_conn_close(&conn); /* it went down before taking the call: the next job will */
        }
        if (sock_now() > give_up)
            return err_set(call_err, NUMRPC_ESERVER, "%s: the MPI job did not come up within %d s", f->name,
                           o->start_seconds + 5);
        usleep(RETRY_US);
    }
}

/* The job's end as the supervisor tells it (it may take a moment); 1 when
 * it was stopped for another worker's abandoned call, not for this one. */
static int why_it_ended(unsigned ends_before, char *text, size_t len)
{
    const mpi_job_state *st = mpi_job_state_get();
    double until = sock_now() + END_NOTICE_S;
    while (atomic_load(&st->ends) == ends_before && sock_now() < until) usleep(RETRY_US);
    if (atomic_load(&st->ends) == ends_before) {
        snprintf(text, len, "no word from its supervisor yet");
        return 0;
    }
    mpi_job_text(text, len);
    return atomic_load(&st->ends) == ends_before + 1 && atomic_load(&st->ended_for_abandoned);
}

/* The request in two steps: scalars and keys, then the arrays rank 0 does
 * not hold (MPI_HELD said which); the figures of what was held and sent. */
static int send_request(const iface_t *f, const uint8_t *blob, size_t blob_len, void **argv,
                        const iface_shape *shapes, const msg_mpi_handles *handles, mpi_call_figures *fig,
                        err_t *err)
{
    iface_shape sent[IFACE_MAX_PARAMS];
    for (uint32_t i = 0; i < f->nparams; i++) {
        sent[i] = shapes[i];
        sent[i].held = 0; /* a data handle's array travels unless rank 0 holds it */
    }
    uint64_t before = wire_writer_bytes(&conn.writer);
    int rc = msg_mpi_write_call(&conn.writer, 1, blob, (uint32_t)blob_len, f, argv, handles, err);
    if (rc == 0) rc = msg_mpi_read_held(&conn.reader, 1, handles, sent, err);
    if (rc == 0) progress_service(-1, "sending the arrays to rank 0");
    if (rc == 0) rc = msg_mpi_write_arrays(&conn.writer, 1, f, argv, sent, err);
    /* Rank 0 scatters, computes and gathers before it answers: the worker
     * sees those three as one wait. */
    if (rc == 0) progress_service(-1, "on the MPI job: scatter, compute, gather");
    fig->sent_bytes = wire_writer_bytes(&conn.writer) - before;
    for (uint32_t i = 0; rc == 0 && i < f->nparams; i++)
        if (sent[i].held) {
            fig->kept++;
            fig->kept_bytes += sent[i].mem_elems * iface_type_size(f->params[i].type);
        }
    return rc;
}

int mpi_call_run(worker_slot *slot, const iface_t *f, const uint8_t *blob, size_t blob_len, void **argv,
                 const iface_shape *shapes, const msg_mpi_handles *handles, mpi_call_figures *fig,
                 err_t *call_err)
{
    err_t err;
    err_clear(call_err);
    memset(fig, 0, sizeof *fig);
    if (!mpi_job_configured())
        return err_set(call_err, NUMRPC_ESERVER,
                       "%s runs on an MPI job, and this server was started without --mpi-ranks (docs/mpi.md)",
                       f->name);
    if (!conn_made && msg_conn_init(&conn, MSG_MPI_PACKET, &err) != 0)
        return err_set(call_err, err.code, "%s: %s", f->name, err.detail);
    conn_made = 1;
    /* A job the supervisor stops for another worker's abandoned call may
     * have taken this call already (rank 0 finished the abandoned one just
     * then): the call runs again, once, on the next job -- only while no
     * byte of its reply has been read, so argv is as the client sent it. */
    int rc = 0;
    for (int attempt = 0;; attempt++) {
        unsigned ends = 0;
        progress_service(-1, "waiting for the MPI job"); /* the phases a caller sees (progress.c) */
        rc = wait_for_rank0(f, &ends, call_err);
        if (rc != 0) return rc;
        atomic_store(&slot->mpi_serving, 1);
        rc = send_request(f, blob, blob_len, argv, shapes, handles, fig, &err);
        uint64_t before_reply = wire_reader_bytes(&conn.reader);
        if (rc == 0) rc = msg_mpi_read_reply(&conn.reader, 1, f, argv, shapes, &fig->ph, call_err, &err);
        int reply_untouched = wire_reader_bytes(&conn.reader) == before_reply;
        atomic_store(&slot->mpi_serving, 0);
        msg_conn_close(&conn);
        if (rc == 0 || !(err.code == NUMRPC_EIO || err.code == NUMRPC_ETIMEDOUT)) break;
        char text[MPI_JOB_TEXT];
        if (why_it_ended(ends, text, sizeof text) && reply_untouched && attempt == 0) {
            memset(fig, 0, sizeof *fig);
            continue;
        }
        return err_set(call_err, NUMRPC_ECRASHED, "%s: the MPI job died during the call (%s); it is restarted", f->name,
                       text);
    }
    if (rc != 0) return err_set(call_err, NUMRPC_ESERVER, "%s: the MPI job's reply: %s", f->name, err.detail);
    return call_err->code;
}
