// status_probe.h -- a server's STATUS totals and per-routine calls, read over
// a fresh plain connection (tests that link libcommon: the message layer's readers).
#ifndef NUMRPC_TESTS_STATUS_PROBE_H
#define NUMRPC_TESTS_STATUS_PROBE_H

#include <cstring>

#include "server_proc.h"

extern "C" {
#include "msg.h"
#include "msg_control.h"
}

// The totals of s's STATUS (the rows are freed); all zero, has_handles
// false, when it did not answer.
inline msg_status StatusOf(const ServerProc &s)
{
    msg_conn c;
    err_t err;
    msg_status st;
    memset(&st, 0, sizeof st);
    if (msg_conn_open(&c, "127.0.0.1", s.port(), 2000, 3000, 4096, &err) != 0) return st;
    if (msg_write_status(&c.writer, 7, &err) != 0 || msg_read_status_reply(&c.reader, 7, c.label, &st, &err) != 0)
        memset(&st, 0, sizeof st);
    else
        msg_status_free(&st); // the rows only; the totals stay
    msg_conn_free(&c);
    return st;
}

// Calls of routine the server on 127.0.0.1:port has counted (its STATUS
// rows); -1 when it did not answer.
inline long long CallsOf(int port, const char *routine)
{
    msg_conn c;
    err_t err;
    msg_status st;
    long long calls = -1;
    if (msg_conn_open(&c, "127.0.0.1", port, 2000, 3000, 4096, &err) != 0) return -1;
    if (msg_write_status(&c.writer, 7, &err) == 0 && msg_read_status_reply(&c.reader, 7, c.label, &st, &err) == 0) {
        calls = 0;
        for (uint32_t i = 0; i < st.nroutines; i++)
            if (strcmp(st.rows[i].name, routine) == 0) calls += static_cast<long long>(st.rows[i].calls);
        msg_status_free(&st);
    }
    msg_conn_free(&c);
    return calls;
}

#endif
