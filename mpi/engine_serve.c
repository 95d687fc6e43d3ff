/* engine_serve.c -- rank 0's socket: accepts one worker at a time, tells it
 * its call is taken, reads the call, says which arrays it holds, reads the
 * others, answers it; records whom it serves. */
#define _GNU_SOURCE
#include "engine_serve.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sock.h"

/* A worker that stops sending or reading mid-message is dropped after this. */
#define ENGINE_IO_MS 30000

static int path_fits(const char *path, struct sockaddr_un *a)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof a->sun_path) return 0;
    memcpy(a->sun_path, path, strlen(path));
    return 1;
}

int engine_serve_open(engine_server *s, const char *socket_path, const char *serving_path, uint64_t max_bytes,
                      char *why, size_t len)
{
    memset(s, 0, sizeof *s);
    s->listen_fd = s->serving_fd = -1;
    s->max_bytes = max_bytes;
    char tmp[sizeof ((struct sockaddr_un *)0)->sun_path + 8];
    struct sockaddr_un a;
    snprintf(tmp, sizeof tmp, "%s.new", socket_path);
    if (!path_fits(tmp, &a)) {
        snprintf(why, len, "socket path %s is too long", socket_path);
        return -1;
    }
    err_t err;
    if (msg_conn_init(&s->conn, MSG_MPI_PACKET, &err) != 0) {
        snprintf(why, len, "%s", err.detail);
        return -1;
    }
    unlink(tmp);
    s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->listen_fd < 0 || bind(s->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(s->listen_fd, 64) != 0 || rename(tmp, socket_path) != 0) {
        snprintf(why, len, "cannot listen on %s: %s", socket_path, strerror(errno));
        engine_serve_close(s);
        return -1;
    }
    if (serving_path[0] &&
        (s->serving_fd = open(serving_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0) {
        snprintf(why, len, "cannot write %s: %s", serving_path, strerror(errno));
        engine_serve_close(s);
        return -1;
    }
    return 0;
}

/* The pid of the worker served now (0: none), for the server's supervisor. */
static void note_serving(engine_server *s, pid_t pid)
{
    char line[16];
    int n = snprintf(line, sizeof line, "%10d\n", (int)pid);
    if (s->serving_fd >= 0 && pwrite(s->serving_fd, line, (size_t)n, 0) != n)
        fprintf(stderr, "numrpc-mpi-engine: cannot record the worker served: %s\n", strerror(errno));
}

static void drop(engine_server *s)
{
    if (s->has_conn) msg_conn_close(&s->conn);
    s->has_conn = 0;
    note_serving(s, 0);
}

/* Whether the rest of the message being read could be skipped. */
static int skip_rest(engine_server *s)
{
    err_t ignored;
    return !wire_reader_broken(&s->conn.reader) &&
           (!wire_reader_in_message(&s->conn.reader) || wire_skip_message(&s->conn.reader, &ignored) == 0);
}

/* Answers a call that cannot run (the stream still in step) and drops it;
 * after_call: its MPI_CALL was read, so MPI_HELD (nothing held) comes
 * first and its MPI_ARRAYS are skipped, as the worker sends them. */
static void refuse(engine_server *s, uint32_t call_id, int after_call, const err_t *why)
{
    msg_mpi_phases none = {0, 0, 0};
    err_t ignored;
    uint32_t type, id;
    int in_step = skip_rest(s);
    if (in_step && after_call)
        in_step = msg_mpi_write_held(&s->conn.writer, call_id, NULL, &ignored) == 0 &&
                  wire_next_message(&s->conn.reader, &type, &id, &ignored) == 0 && type == PROTO_MPI_ARRAYS &&
                  id == call_id && skip_rest(s);
    if (in_step)
        msg_mpi_write_reply(&s->conn.writer, call_id, why->code, why->detail, &none, NULL, NULL, NULL, &ignored);
    drop(s);
}

/* Takes one worker's connection: 0 with the call read, or -1 (dropped). */
static int take(engine_server *s, int fd, msg_mpi_call *c)
{
    struct ucred who = {0};
    socklen_t wlen = sizeof who;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &who, &wlen) != 0 || who.uid != getuid()) {
        close(fd);
        return -1;
    }
    sock_set_timeouts(fd, ENGINE_IO_MS, ENGINE_IO_MS);
    msg_conn_attach(&s->conn, transport_tcp(fd), "worker");
    s->has_conn = 1;
    err_t err;
    uint32_t type = 0;
    int rc = msg_mpi_write_start(&s->conn.writer, &err);
    if (rc == 0) rc = wire_next_message(&s->conn.reader, &type, &s->call_id, &err);
    if (rc != 0) {
        drop(s); /* the worker left (cancelled, timed out) before its call */
        return -1;
    }
    if (type != PROTO_MPI_CALL) {
        err_set(&err, NUMRPC_EPROTO, "the MPI job takes MPI_CALL, not message type %u", type);
        refuse(s, s->call_id, 0, &err);
        return -1;
    }
    if (msg_mpi_read_call(&s->conn.reader, s->max_bytes, c, &err) != 0) {
        refuse(s, s->call_id, 1, &err);
        return -1;
    }
    s->worker = who.pid;
    return 0;
}

int engine_serve_next(engine_server *s, msg_mpi_call *c)
{
    for (;;) {
        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            fprintf(stderr, "numrpc-mpi-engine: accept: %s\n", strerror(errno));
            return -1;
        }
        if (take(s, fd, c) == 0) return 0;
    }
}

int engine_serve_arrays(engine_server *s, msg_mpi_call *c)
{
    err_t err;
    uint32_t type = 0, id = 0;
    int rc = msg_mpi_write_held(&s->conn.writer, s->call_id, c, &err);
    if (rc == 0) rc = wire_next_message(&s->conn.reader, &type, &id, &err);
    if (rc != 0) {
        drop(s); /* the worker left (cancelled, timed out) before its arrays */
        return -1;
    }
    if (type != PROTO_MPI_ARRAYS || id != s->call_id)
        rc = err_set(&err, NUMRPC_EPROTO, "the MPI job takes MPI_ARRAYS for call %u, not message type %u for %u",
                     s->call_id, type, id);
    if (rc == 0) rc = msg_mpi_read_arrays(&s->conn.reader, c, &err);
    if (rc != 0) {
        refuse(s, s->call_id, 0, &err);
        return -1;
    }
    /* From here the job works for this worker: if it dies, nobody reads the
     * result (a worker that dies before sees its call dropped at once). */
    note_serving(s, s->worker);
    return 0;
}

void engine_serve_reply(engine_server *s, const msg_mpi_call *c, int code, const char *detail,
                        const msg_mpi_phases *ph)
{
    err_t ignored; /* a worker that left (cancel, deadline) reads nothing */
    msg_mpi_write_reply(&s->conn.writer, s->call_id, code, detail, ph, &c->f, c->argv, c->shapes, &ignored);
    drop(s);
}

void engine_serve_close(engine_server *s)
{
    drop(s);
    msg_conn_free(&s->conn);
    if (s->listen_fd >= 0) close(s->listen_fd);
    if (s->serving_fd >= 0) close(s->serving_fd);
    s->listen_fd = s->serving_fd = -1;
}
