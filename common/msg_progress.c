/* msg_progress.c -- the PROGRESS message's one writer and one reader, and
 * the cleaning of a routine's own words before they travel. */
#include "msg_progress.h"

#include <math.h>
#include <string.h>

int msg_write_progress(wire_writer *w, uint32_t call_id, const msg_progress *p, err_t *err)
{
    wire_begin(w, PROTO_PROGRESS, call_id);
    int rc = wire_put_double(w, p->elapsed, err);
    if (rc == 0) rc = wire_put_double(w, p->predicted, err);
    if (rc == 0) rc = wire_put_double(w, p->fraction, err);
    if (rc == 0) rc = wire_put_string(w, p->message, err);
    if (rc == 0) rc = wire_end(w, err);
    return rc;
}

int msg_read_progress(wire_reader *r, msg_progress *p, err_t *err)
{
    int rc = wire_get_double(r, &p->elapsed, err);
    if (rc == 0) rc = wire_get_double(r, &p->predicted, err);
    if (rc == 0) rc = wire_get_double(r, &p->fraction, err);
    if (rc == 0)
        rc = wire_get_string_into(r, p->message, sizeof p->message, PROTO_PROGRESS_MESSAGE_MAX, err);
    if (rc == 0) rc = wire_expect_end(r, err);
    if (rc != 0) return rc;
    if (!isfinite(p->elapsed) || p->elapsed < 0)
        return err_set(err, NUMRPC_EPROTO, "progress frame with an elapsed time of %g s", p->elapsed);
    if (p->predicted != -1 && !(isfinite(p->predicted) && p->predicted >= 0))
        return err_set(err, NUMRPC_EPROTO, "progress frame with a predicted time of %g s", p->predicted);
    if (p->fraction != -1 && !(p->fraction >= 0 && p->fraction <= 1))
        return err_set(err, NUMRPC_EPROTO, "progress frame with a fraction of %g", p->fraction);
    return 0;
}

void msg_progress_clean(msg_progress *p, const char *raw_message, size_t raw_size, double raw_fraction)
{
    size_t n = 0, cap = raw_size < PROTO_PROGRESS_MESSAGE_MAX ? raw_size : PROTO_PROGRESS_MESSAGE_MAX;
    if (raw_message != NULL)
        for (; n < cap && raw_message[n] != '\0'; n++) {
            unsigned char c = (unsigned char)raw_message[n];
            p->message[n] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
        }
    p->message[n] = '\0';
    p->fraction = raw_fraction >= 0 && raw_fraction <= 1 ? raw_fraction : -1; /* NaN fails both */
}
