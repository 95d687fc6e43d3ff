/* rawtcp.h -- the raw TCP baseline of the benchmark: an echo server in a
 * forked child (pinned like numrpc's server) and its client, tuned or naive. */
#ifndef NUMRPC_BENCH_RAWTCP_H
#define NUMRPC_BENCH_RAWTCP_H

#include <stddef.h>
#include <sys/types.h>

/* Tuned: 256 KiB writes/reads, SO_SNDBUF/SO_RCVBUF 4 MiB, TCP_NODELAY.
 * Naive: one send()/recv() call per buffer (looping only on partial
 * transfers), default socket options. */
enum rawtcp_mode { RAWTCP_TUNED = 0, RAWTCP_NAIVE = 1 };

#define RAWTCP_CHUNK (256u * 1024u)
#define RAWTCP_SOCKBUF (4 * 1024 * 1024)

typedef struct rawtcp_server {
    pid_t pid;
    int port[2]; /* indexed by rawtcp_mode */
} rawtcp_server;

/* Opens both listeners on 127.0.0.1 (ephemeral ports) and forks the echo
 * server; the child pins itself to cpu (if cpu >= 0) before serving.  Call
 * while the process has a single thread.  Returns 0 or -1 (errno set). */
int rawtcp_server_spawn(rawtcp_server *s, int cpu);
/* SIGTERM and reap. */
void rawtcp_server_stop(rawtcp_server *s);

/* Connects to the listener of mode; sets the mode's client options.
 * Returns a descriptor or -1. */
int rawtcp_connect(const rawtcp_server *s, enum rawtcp_mode mode);
/* Sends an 8-byte length then n bytes of src, then receives n bytes into
 * dst: the server reads the whole array before it replies (as numrpc's
 * server does).  Returns 0 or -1. */
int rawtcp_echo(int fd, enum rawtcp_mode mode, const void *src, void *dst, size_t n);
/* One 8-byte ping-pong: sends word, expects it back.  Returns 0 or -1. */
int rawtcp_ping(int fd, unsigned long long word);
/* Effective SO_SNDBUF / SO_RCVBUF of fd (as getsockopt reports them). */
void rawtcp_bufsizes(int fd, int *snd, int *rcv);

#endif
