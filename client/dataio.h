/* dataio.h -- one data-handle request to one server on a pooled connection
 * (DATA_PUT, GET, FREE, RENEW, GRANT, PULL), its bytes counted (dataio.c). */
#ifndef NUMRPC_CLIENT_DATAIO_H
#define NUMRPC_CLIENT_DATAIO_H

#include "config.h"
#include "msg_data.h"

/* Every function adds the bytes it moved and the connections it opened to
 * *info, and waits no longer than deadline (monotonic seconds; 0 = only
 * the sockets' limits).  A pooled connection the server had closed is
 * replaced once, while no reply byte has come. */

/* Makes a handle shaped s on ep: the rows x cols elements of a (leading
 * dimension s->ld, the caller's memory), or zeros when a is NULL.  The new
 * handle's id and lease go to *id and *lease_ms. */
int dataio_put(const endpoint *ep, const msg_data_shape *s, const void *a, double deadline, msg_data_id *id,
               uint32_t *lease_ms, numrpc_call_info *info, err_t *err);
/* Copies handle id, which must be shaped like want (type, rows, cols), into
 * a with leading dimension ld (>= want->rows; the caller's memory). */
int dataio_get(const endpoint *ep, const msg_data_id *id, const msg_data_shape *want, void *a, uint64_t ld,
               double deadline, numrpc_call_info *info, err_t *err);
/* DATA_FREE or DATA_RENEW (type) of n ids, MSG_DATA_MAX_IDS a message: the
 * server's status of each into statuses (n entries, the caller's) and the
 * lease the last reply granted into *lease_ms. */
int dataio_ids(const endpoint *ep, uint32_t type, const msg_data_id *ids, uint32_t n, int32_t *statuses,
               uint32_t *lease_ms, double deadline, numrpc_call_info *info, err_t *err);
/* A one-time ticket for handle id on ep (DATA_GRANT), good for *ttl_ms. */
int dataio_grant(const endpoint *ep, const msg_data_id *id, double deadline, msg_data_id *ticket, uint32_t *ttl_ms,
                 numrpc_call_info *info, err_t *err);
/* Asks ep to fetch pull->ticket's handle from pull->source (DATA_PULL): the
 * new handle's id on ep and its lease go to *id and *lease_ms. */
int dataio_pull(const endpoint *ep, const msg_data_pull *pull, double deadline, msg_data_id *id, uint32_t *lease_ms,
                numrpc_call_info *info, err_t *err);

#endif
