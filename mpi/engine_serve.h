/* engine_serve.h -- rank 0's side of the job: the Unix socket the server's
 * workers call through, one call at a time (engine_serve.c). */
#ifndef NUMRPC_MPI_ENGINE_SERVE_H
#define NUMRPC_MPI_ENGINE_SERVE_H

#include <stdint.h>
#include <sys/types.h>

#include "msg.h"
#include "msg_mpi.h"

typedef struct engine_server {
    int listen_fd;
    int serving_fd;     /* the file naming the worker served (pid), or -1 */
    uint64_t max_bytes; /* array bytes of one call at most               */
    msg_conn conn;      /* the worker's connection, while one is served */
    int has_conn;
    uint32_t call_id;   /* of the call read                              */
    pid_t worker;       /* who sent it                                   */
} engine_server;

/* Listens on socket_path (made under a temporary name and renamed into
 * place once listening, so that its appearance means "ready"); serving_path
 * is where the pid of the worker whose call the job runs is kept, from the
 * end of its request to its reply ("" = nowhere).
 * 0, or -1 with a sentence in why. */
int engine_serve_open(engine_server *s, const char *socket_path, const char *serving_path, uint64_t max_bytes,
                      char *why, size_t len);
/* Waits for a worker, tells it the job has taken its call (MPI_START) and
 * reads the call's scalars and handle keys into *c (its arrays come with
 * engine_serve_arrays).  A connection that fails or sends something
 * unusable is answered if it can be and dropped, and the next one taken.
 * Returns 0 with a call, -1 when the listening socket failed. */
int engine_serve_next(engine_server *s, msg_mpi_call *c);
/* Tells the worker which arrays rank 0 holds (c->shapes[i].held: MPI_HELD)
 * and reads the others into c's blocks (MPI_ARRAYS).  0, or -1 with the
 * connection answered if it could be and dropped (the caller frees c). */
int engine_serve_arrays(engine_server *s, msg_mpi_call *c);
/* Answers the call being served (code 0: results from c->argv) and drops
 * the connection; a worker that left is not an error. */
void engine_serve_reply(engine_server *s, const msg_mpi_call *c, int code, const char *detail,
                        const msg_mpi_phases *ph);
void engine_serve_close(engine_server *s);

#endif
