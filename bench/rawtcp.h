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

/* Opens both listeners on NUMRPC_BENCH_HOST or 127.0.0.1 (ephemeral ports) and forks the echo
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
/* One-way bulk (TTCP style): sends an 8-byte length then n bytes of src;
 * the server reads them all and answers rawtcp_sink_ack of what it got
 * (stored in *ack).  Returns 0 or -1. */
int rawtcp_sink(int fd, enum rawtcp_mode mode, const void *src, size_t n, double *ack);
/* The acknowledgement every one-way baseline answers: x[0] + x[k/2] +
 * x[k-1] of the k = n/8 doubles received (0 if none). */
double rawtcp_sink_ack(const void *data, size_t n);
/* Paced one-way (LSB): as rawtcp_sink, and *arrived := the server's
 * CLOCK_MONOTONIC seconds when the last byte came (one host: our clock). */
int rawtcp_sink_at(int fd, enum rawtcp_mode mode, const void *src, size_t n, double *ack, double *arrived);
/* count one-way messages of n bytes sent back to back, their acks read (and
 * checked) only after the last is sent.  The acks (8 bytes each) wait in our
 * receive buffer meanwhile, so count * 8 must fit in it.  Returns 0 or -1. */
int rawtcp_sink_stream(int fd, enum rawtcp_mode mode, const void *src, size_t n, int count);
/* count 8-byte pings sent back to back, then their answers read and checked. */
int rawtcp_ping_stream(int fd, int count);
/* One 8-byte ping-pong: sends word, expects it back.  Returns 0 or -1. */
int rawtcp_ping(int fd, unsigned long long word);
/* Effective SO_SNDBUF / SO_RCVBUF of fd (as getsockopt reports them). */
void rawtcp_bufsizes(int fd, int *snd, int *rcv);

#endif
