/* metajoin.h -- a server's membership of a metaserver (--metaserver HOST:PORT):
 * the options, the process that joins and reports, the dispatcher's hooks. */
#ifndef NUMRPC_SERVER_METAJOIN_H
#define NUMRPC_SERVER_METAJOIN_H

#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "worker.h"

/* Takes --metaserver HOST:PORT, --advertise HOST, --metaserver-token-file F
 * and --metaserver-tls-ca F (the link is TLS, the metaserver verified
 * against that CA) out of argv (the rest goes to config_build); reads the
 * fingerprint of --tls-cert F, which stays in argv, for the JOIN.  0, or an
 * error for a malformed value or a file that cannot be used. */
int metajoin_take_options(int *argc, char **argv, err_t *err);
/* With --metaserver: forks the helper process that measures the speed curve
 * (on this server's own workers), joins, and keeps the metaserver informed;
 * it dies with the server.  A process, not a thread: the dispatcher forks
 * workers and must stay single-threaded (a fork while another thread holds
 * a lock, the allocator's under AddressSanitizer, hangs the child).  Call
 * after the socket listens (the helper closes listen_fd), before the
 * dispatcher runs. */
int metajoin_start(const server_config *cfg, int listen_fd, err_t *err);
/* True when PID is that helper (the dispatcher reaps it like a worker). */
int metajoin_is_helper(pid_t pid);
/* --metaserver-token-file ("" when none): a secret no worker may read. */
const char *metajoin_token_file(void);
/* True when a metaserver was named (the hooks below then matter). */
int metajoin_active(void);
/* The dispatcher's state after each pass; cheap when nothing changed. */
void metajoin_note_load(int in_flight, int queued, int draining);

#endif
