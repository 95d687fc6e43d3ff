// msg_link.h -- two message connections joined by a Unix socketpair: what a
// writer on side a sends, side b's reader reads (the message-layer tests).
#ifndef NUMRPC_TESTS_COMMON_MSG_LINK_H
#define NUMRPC_TESTS_COMMON_MSG_LINK_H

#include <gtest/gtest.h>
#include <sys/socket.h>

extern "C" {
#include "msg.h"
}

struct Link {
    msg_conn a, b;
    Link()
    {
        int fd[2];
        err_t err;
        EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
        EXPECT_EQ(msg_conn_init(&a, 4096, &err), 0) << err.detail;
        EXPECT_EQ(msg_conn_init(&b, 4096, &err), 0) << err.detail;
        msg_conn_attach(&a, transport_tcp(fd[0]), "side-a");
        msg_conn_attach(&b, transport_tcp(fd[1]), "side-b");
    }
    ~Link()
    {
        msg_conn_free(&a);
        msg_conn_free(&b);
    }
    // b reads the next message's header: its type and call id.
    void Next(uint32_t *type, uint32_t *id)
    {
        err_t err;
        ASSERT_EQ(wire_next_message(&b.reader, type, id, &err), 0) << err.detail;
    }
};

#endif
