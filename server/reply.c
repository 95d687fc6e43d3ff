/* reply.c -- what every reply to a CALL carries after status and detail:
 * the routine's compute seconds and the server's load (docs/protocol.md). */
#include "reply.h"

#include "msg.h"
#include "stats.h"

int reply_put_result(wire_writer *w, double compute_seconds, const worker_slot *self, err_t *err)
{
    msg_call_result res = {compute_seconds, slots_in_flight(self), 0};
    if (server_stats && atomic_load(&server_stats->load_queued) > 0)
        res.queued = (uint32_t)atomic_load(&server_stats->load_queued);
    return msg_write_call_result(w, &res, err);
}

int reply_error(wire_writer *w, uint32_t call_id, int code, const char *detail, err_t *err)
{
    int rc = msg_reply_begin(w, call_id, code, detail, err);
    if (rc == 0) rc = reply_put_result(w, 0.0, NULL, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}
