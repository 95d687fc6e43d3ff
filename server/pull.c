/* pull.c -- DATA_PULL in the worker: a new handle's file, filled by the pull
 * broker from a ticket's handle on another server; the worker never connects. */
#define _GNU_SOURCE
#include "pull.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "msg.h"
#include "protocol.h"
#include "sock.h"

/* This worker's channel to the broker (-1: none), and the last call id
 * sent on it (each request's own, so a late answer is never taken for
 * the next request's). */
static int channel_fd = -1;
static uint32_t last_call_id;

void pull_set_channel(int fd)
{
    channel_fd = fd;
}

/* Answers to earlier requests this worker stopped waiting for. */
static void drop_stale_answers(void)
{
    uint8_t buf[PULL_MSG_MAX + 1];
    while (recv(channel_fd, buf, sizeof buf, MSG_DONTWAIT) > 0) {}
}

/* Reads the answer to call_id (a REPLY in one datagram) by deadline: its
 * status, and the broker's detail when it failed. */
static int read_answer(uint32_t call_id, double deadline, int limit_ms, err_t *err)
{
    uint8_t buf[PULL_MSG_MAX + 1];
    for (;;) {
        int left = (int)((deadline - sock_now()) * 1000);
        struct pollfd p = {.fd = channel_fd, .events = POLLIN};
        int k = left > 0 ? poll(&p, 1, left) : 0;
        if (k < 0 && errno == EINTR) continue;
        if (k == 0)
            return err_set(err, NUMRPC_ETIMEDOUT, "the pull broker did not answer within %d ms", limit_ms);
        ssize_t got = recv(channel_fd, buf, sizeof buf, MSG_DONTWAIT);
        if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (got <= 0) return err_set(err, NUMRPC_ESERVER, "the pull broker is gone");
        if (got > PULL_MSG_MAX) continue; /* no answer of the broker's */
        wire_reader r;
        uint32_t type, id;
        int rc = wire_reader_init(&r, -1, PROTO_DEFAULT_PACKET, err);
        if (rc != 0) return rc;
        transport t = transport_memory(buf, (size_t)got);
        wire_reader_attach(&r, t);
        rc = wire_next_message(&r, &type, &id, err);
        int mine = rc == 0 && id == call_id;
        if (mine) rc = msg_reply_status(&r, type, id, call_id, "the pull broker", err);
        if (mine && rc == 0) rc = wire_expect_end(&r, err);
        wire_reader_attach(&r, transport_none());
        transport_close(&t);
        wire_reader_free(&r);
        if (mine) return rc;
    }
}

/* Sends q with the handle's file (file) to the broker and waits for its
 * answer: 0 once the file holds the source's elements. */
static int ask_broker(const server_config *cfg, const msg_data_pull *q, int file, err_t *err)
{
    uint32_t call_id = ++last_call_id ? last_call_id : ++last_call_id; /* never 0 */
    int limit = pull_limit_ms(cfg, q->deadline_ms);
    double deadline = sock_now() + (limit + PULL_KILL_GRACE_MS + PULL_ANSWER_GRACE_MS) / 1000.0;
    transport_bytes out = {.max = PULL_MSG_MAX};
    wire_writer w;
    drop_stale_answers();
    int rc = wire_writer_init(&w, -1, PROTO_DEFAULT_PACKET, err);
    if (rc == 0) {
        wire_writer_attach(&w, transport_memory_sink(&out));
        rc = msg_write_data_pull(&w, call_id, q, err);
    }
    if (rc == 0 && sock_send_fd(channel_fd, file, out.p, out.len) != 0)
        rc = err_set(err, NUMRPC_ESERVER, "cannot reach the pull broker: %s", strerror(errno));
    wire_writer_free(&w);
    transport_bytes_free(&out);
    return rc == 0 ? read_answer(call_id, deadline, limit, err) : rc;
}

/* The new handle's file, open for the broker to fill: -1 with err. */
static int open_file(const handle_ref *ref, err_t *err)
{
    char path[CONFIG_PATH_MAX + 128];
    handles_path(server_handles, &ref->id, "", path, sizeof path);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) err_set(err, NUMRPC_ESERVER, "handle file %s: %s", path, strerror(errno));
    return fd;
}

int pull_fetch(const server_config *cfg, const char *owner, const char *account, const msg_data_pull *q,
               handle_ref *ref, err_t *err)
{
    if (!pull_listed(cfg->pull_from, q->source)) return pull_refuse_source(cfg->pull_from, q->source, err);
    if (channel_fd < 0)
        return err_set(err, NUMRPC_ESERVER, "this server has no pull broker to fetch %s's handle with", q->source);
    int rc = handles_reserve(server_handles, owner, account, &q->shape, ref, err);
    if (rc != 0) return rc;
    int file = -1;
    rc = handles_create_file(server_handles, ref, q->shape.rows == q->shape.ld, err);
    if (rc == 0 && (file = open_file(ref, err)) < 0) rc = err->code;
    if (rc == 0) rc = ask_broker(cfg, q, file, err);
    if (file >= 0) close(file);
    if (rc != 0) {
        handles_discard(server_handles, ref);
        err_prefix(err, q->source);
        return rc;
    }
    handles_publish(server_handles, ref);
    handles_count_moved(server_handles, msg_data_wire_elems(&q->shape) * iface_type_size(q->shape.type), 0);
    return 0;
}
