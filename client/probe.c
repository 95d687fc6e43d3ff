/* probe.c -- measures the link to a server (round-trip latency, then
 * throughput) with PROBE messages, for a metaserver ranking it unmeasured. */
#include "probe.h"

#include <string.h>

#include "conn.h"
#include "sock.h"

/* One probe: n bytes up, n bytes down; its wall time in *seconds. */
static int probe_once(client_conn *c, uint32_t n, double *seconds, err_t *err)
{
    uint32_t id = client_next_call_id();
    uint64_t back = 0;
    double t0 = sock_now();
    int rc = msg_write_probe(&c->m.writer, id, n, n, err);
    if (rc == 0) rc = conn_finish_hello(c, err);
    if (rc == 0) rc = msg_read_probe_reply(&c->m.reader, id, c->m.label, &back, err);
    if (rc == 0 && back != n) rc = err_set(err, NUMRPC_EPROTO, "probe: %llu bytes back, %u asked",
                                          (unsigned long long)back, n);
    *seconds = sock_now() - t0;
    return rc;
}

int probe_link(const endpoint *ep, probe_result *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    client_conn *c = NULL;
    double deadline = sock_now() + PROBE_MAX_SECONDS;
    int rc = conn_acquire(ep, deadline, &c, err);
    if (rc == 0) { /* a peer that never answers holds the caller no longer */
        wire_writer_set_deadline(&c->m.writer, deadline);
        wire_reader_set_deadline(&c->m.reader, deadline);
    }
    /* The latency: the best of three empty probes (the first may pay for
     * the connection's HELLO). */
    for (int i = 0; rc == 0 && i < 3; i++) {
        double t;
        rc = probe_once(c, 0, &t, err);
        if (rc == 0 && (i == 0 || t < out->latency)) out->latency = t;
    }
    /* The throughput: growing probes until one takes long enough to
     * measure (PROBE_MIN_SECONDS) or the largest has run, so that a slow
     * link costs little and a fast one is still measured. */
    uint32_t n = PROBE_FIRST_BYTES;
    for (; rc == 0; n *= 4) {
        rc = probe_once(c, n, &out->seconds, err);
        out->bytes = 2ull * n;
        if (out->seconds >= PROBE_MIN_SECONDS || n >= PROBE_LAST_BYTES) break;
    }
    /* A short probe is at the mercy of one scheduling hiccup: the best of
     * two at that size. */
    double again;
    if (rc == 0 && out->seconds < PROBE_MIN_SECONDS && probe_once(c, n, &again, err) == 0 && again < out->seconds)
        out->seconds = again;
    if (rc == 0) {
        double moving = out->seconds - out->latency;
        out->bytes_per_second = (double)out->bytes / (moving > 1e-6 ? moving : 1e-6);
    }
    if (c) { /* a pooled connection's calls set their own deadlines */
        wire_writer_set_deadline(&c->m.writer, 0);
        wire_reader_set_deadline(&c->m.reader, 0);
    }
    conn_done(c, rc);
    return rc;
}
