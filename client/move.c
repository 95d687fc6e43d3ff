/* move.c -- a handle copied from its server to a call's server without
 * passing through this process: ticket (DATA_GRANT), then DATA_PULL. */
#include "move.h"

#include <stdio.h>
#include <string.h>

#include "dataio.h"
#include "protocol.h"
#include "sock.h"

#define RELEASE_SECONDS 2.0 /* the FREE of the copies waits this long at most */

int moves_find(const handle_moves *m, const void *p, msg_data_id *copy)
{
    for (uint32_t i = 0; m && i < m->n; i++)
        if ((const void *)m->items[i].handle == p) {
            *copy = m->items[i].copy;
            return 1;
        }
    return 0;
}

int move_handle(handle_moves *m, const endpoint *target, const numrpc_data *h, const handle_facts *f,
                double deadline, err_t *err)
{
    msg_data_id copy;
    if (moves_find(m, h, &copy)) return 0; /* one argument named twice */
    if (m->n == 0) m->target = *target;
    msg_data_pull q = {.shape = f->shape};
    uint32_t ttl_ms, lease_ms;
    snprintf(q.source, sizeof q.source, "%s", f->server.label);
    double left = deadline > 0 ? deadline - sock_now() : 0;
    q.deadline_ms = deadline > 0 ? (left > 0.001 ? (uint32_t)(left * 1000) : 1) : 0;
    int rc = dataio_grant(&f->server, &f->id, deadline, &q.ticket, &ttl_ms, &m->info, err);
    if (rc == 0) rc = dataio_pull(target, &q, deadline, &copy, &lease_ms, &m->info, err);
    if (rc != 0) {
        char hex[2 * MSG_DATA_ID_SIZE + 1], prefix[2 * MSG_DATA_ID_SIZE + 3 * CLIENT_HOST_MAX + 64];
        msg_data_id_hex(&f->id, hex);
        snprintf(prefix, sizeof prefix, "moving handle %s from %s to %s", hex, f->server.label, target->label);
        err_prefix(err, prefix);
        return rc;
    }
    m->items[m->n].handle = h;
    m->items[m->n].copy = copy;
    m->n++;
    return 0;
}

void moves_release(handle_moves *m)
{
    if (m->n == 0) return;
    msg_data_id ids[IFACE_MAX_PARAMS];
    int32_t statuses[IFACE_MAX_PARAMS];
    uint32_t lease_ms;
    err_t ignored;
    for (uint32_t i = 0; i < m->n; i++) ids[i] = m->items[i].copy;
    (void)dataio_ids(&m->target, PROTO_DATA_FREE, ids, m->n, statuses, &lease_ms, sock_now() + RELEASE_SECONDS,
                     &m->info, &ignored);
    m->n = 0;
}
