/* reply.c -- replies both the dispatcher and the workers send: what every
 * reply to a CALL carries after status and detail (the routine's compute
 * seconds and the server's load, docs/protocol.md), errors, HELLO's answer. */
#include "reply.h"

#include <stdio.h>

#include "stats.h"

int reply_put_result(wire_writer *w, double compute_seconds, const worker_slot *self, err_t *err)
{
    msg_call_result res = {compute_seconds, slots_in_flight(self), 0};
    if (server_stats && atomic_load(&server_stats->load_queued) > 0)
        res.queued = (uint32_t)atomic_load(&server_stats->load_queued);
    return msg_write_call_result(w, &res, err);
}

int reply_hello(wire_writer *w, uint32_t call_id, const msg_hello *h, const msg_hello *proof_fields, err_t *err)
{
    if (h->version != PROTO_VERSION) {
        char detail[128];
        snprintf(detail, sizeof detail, "client speaks protocol %u, server %u", h->version, PROTO_VERSION);
        return reply_error(w, call_id, NUMRPC_EVERSION, detail, err);
    }
    msg_hello mine = {.version = PROTO_VERSION, .packet_size = PROTO_MAX_PACKET};
    if (proof_fields) mine = *proof_fields;
    mine.version = PROTO_VERSION;
    mine.packet_size = PROTO_MAX_PACKET;
    snprintf(mine.peer, sizeof mine.peer, "numrpc-server " PACKAGE_VERSION);
    return msg_write_hello_reply(w, call_id, &mine, err);
}

int reply_error(wire_writer *w, uint32_t call_id, int code, const char *detail, err_t *err)
{
    int rc = msg_reply_begin(w, call_id, code, detail, err);
    if (rc == 0) rc = reply_put_result(w, 0.0, NULL, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}
