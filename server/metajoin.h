/* metajoin.h -- a server's membership of a metaserver (--metaserver HOST:PORT):
 * the options, the thread that joins and reports, the dispatcher's hooks. */
#ifndef NUMRPC_SERVER_METAJOIN_H
#define NUMRPC_SERVER_METAJOIN_H

#include "server.h"

/* Takes --metaserver HOST:PORT and --advertise HOST out of argv (the rest
 * goes to config_build).  0, or an error for a malformed value. */
int metajoin_take_options(int *argc, char **argv, err_t *err);
/* With --metaserver: starts the thread that measures the speed curve (on
 * this server's own workers), joins, and keeps the metaserver informed.
 * Call after the socket listens, before the dispatcher runs. */
int metajoin_start(const server_config *cfg, err_t *err);
/* True when a metaserver was named (the hooks below then matter). */
int metajoin_active(void);
/* The dispatcher's state after each pass; cheap when nothing changed. */
void metajoin_note_load(int in_flight, int queued, int draining);

#endif
