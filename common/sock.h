/* sock.h -- TCP socket helpers: listen, connect, address parsing, tuning,
 * and passing descriptors between processes (SCM_RIGHTS). */
#ifndef NUMRPC_COMMON_SOCK_H
#define NUMRPC_COMMON_SOCK_H

#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* Splits "host:port" (or "[v6]:port") into host (size hostlen) and port. */
int sock_parse_hostport(const char *text, char *host, size_t hostlen,
                        int *port, err_t *err);
/* A listening TCP socket on bind_addr:port (port 0 picks a free one; the
 * chosen port is stored in *port_out).  Returns the fd or a negative code. */
int sock_listen(const char *bind_addr, int port, int *port_out, err_t *err);
/* A connected, tuned TCP socket, or a negative code. */
int sock_connect(const char *host, int port, int timeout_ms, err_t *err);
/* TCP_NODELAY and keepalive; env NUMRPC_TCP_NODELAY=0 leaves Nagle on and
 * NUMRPC_SOCKBUF=BYTES sets SO_SNDBUF/SO_RCVBUF (benchmark sweeps). */
void sock_tune(int fd);
/* Socket time limits for sends and receives (0 = none). */
void sock_set_timeouts(int fd, int send_ms, int recv_ms);
/* Waits until fd is ready for events (POLLIN or POLLOUT) within the time
 * limit a blocking recv or send on it would have (SO_RCVTIMEO, SO_SNDTIMEO;
 * none: for ever).  0, or -1 with errno (EAGAIN: the limit passed). */
int sock_await(int fd, short events);
/* Sends descriptor fd_to_pass with a small message over a Unix socket. */
int sock_send_fd(int unix_fd, int fd_to_pass, const void *msg, size_t len);
/* The same with nfds (at most SOCK_FDS_MAX) descriptors attached. */
#define SOCK_FDS_MAX 4
int sock_send_fds(int unix_fd, const int *fds, int nfds, const void *msg, size_t len);
/* Receives a message and, if one came with it, a descriptor (*fd_out, else
 * -1).  Returns bytes received, 0 on EOF, -1 on error. */
ssize_t sock_recv_fd(int unix_fd, int *fd_out, void *msg, size_t len);
/* The same with up to nmax descriptors (fds[i] -1 where none came; any
 * beyond nmax are closed). */
ssize_t sock_recv_fds(int unix_fd, int *fds, int nmax, void *msg, size_t len);
/* Seconds on a monotonic clock. */
double sock_now(void);

#endif
