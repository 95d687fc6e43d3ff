// handle_peer.h -- a raw peer of a server's data handles (DATA_PUT, GET,
// FREE, RENEW, GRANT, STATUS) over common/msg_data.c, for the handle tests.
#ifndef NUMRPC_TESTS_HANDLE_PEER_H
#define NUMRPC_TESTS_HANDLE_PEER_H

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "protocol.h"
#include "raw_peer.h"
extern "C" {
#include "auth.h"
#include "iface.h"
#include "marshal.h"
#include "msg.h"
#include "msg_control.h"
#include "msg_data.h"
#include "sock.h"
#include "tokens.h"
#include "transport.h"
}

// A token named name whose secret is the hex text hex.
inline token MakeToken(const char *name, const char *hex)
{
    token t = {};
    snprintf(t.name, sizeof t.name, "%s", name);
    t.secret_len = strlen(hex) / 2;
    for (size_t i = 0; i < t.secret_len; i++)
        t.secret[i] = static_cast<uint8_t>(std::stoi(std::string(hex + 2 * i, 2), nullptr, 16));
    return t;
}

// One array of a handle as the test holds it: ld x cols elements of esize bytes.
struct Array {
    msg_data_shape shape;
    std::vector<uint8_t> bytes;
    Array(uint32_t type, uint64_t rows, uint64_t cols, uint64_t ld) : shape{type, rows, cols, ld}
    {
        bytes.assign(ld * cols * iface_type_size(type), 0);
    }
    // The rows x cols elements that travel, in order.
    std::vector<uint8_t> Traveling() const
    {
        size_t es = iface_type_size(shape.type);
        std::vector<uint8_t> out;
        for (uint64_t j = 0; j < shape.cols; j++)
            out.insert(out.end(), bytes.begin() + j * shape.ld * es, bytes.begin() + (j * shape.ld + shape.rows) * es);
        return out;
    }
};

// A raw connection to the server on 127.0.0.1, as the holder of a token or
// of none, from source address `from` (any 127.x.y.z; NULL: the kernel's
// choice, 127.0.0.1).
struct Raw {
    msg_conn c;
    err_t err;
    uint32_t next = 10;
    explicit Raw(int port, const char *name = nullptr, const char *secret = nullptr, const char *from = nullptr)
        : port_(port), name_(name), secret_(secret), from_(from)
    {
        if (from == nullptr) {
            EXPECT_EQ(msg_conn_open(&c, "127.0.0.1", port, 5000, 20000, PROTO_DEFAULT_PACKET, &err), 0)
                << err.detail;
        } else {
            EXPECT_EQ(msg_conn_init(&c, PROTO_DEFAULT_PACKET, &err), 0) << err.detail;
            int fd = ConnectFrom(from, port);
            EXPECT_GE(fd, 0) << "cannot connect from " << from;
            if (fd >= 0) sock_set_timeouts(fd, 20000, 20000);
            if (fd >= 0) msg_conn_attach(&c, transport_tcp(fd), "127.0.0.1");
        }
        if (name == nullptr) return;
        token t = MakeToken(name, secret);
        msg_hello hello = {};
        hello.version = PROTO_VERSION;
        hello.packet_size = PROTO_DEFAULT_PACKET;
        EXPECT_EQ(auth_client_hello(&c, &t, &hello, nullptr, 1, 2, &err), 0) << err.detail;
        EXPECT_EQ(wire_flush(&c.writer, &err), 0) << err.detail;
        EXPECT_EQ(auth_client_finish(&c, 2, &err), 0) << err.detail;
    }
    ~Raw() { msg_conn_free(&c); }

    // DATA_PUT of a (empty: no elements, zeros); the reply's code.
    int Put(const Array &a, msg_data_id *id, bool empty = false)
    {
        uint32_t call = next++, lease = 0;
        iface_param p;
        iface_shape sh;
        msg_data_as_param(&a.shape, &p, &sh);
        int rc = msg_write_data_put_header(&c.writer, call, &a.shape, empty ? MSG_DATA_EMPTY : 0, &err);
        if (rc == 0 && !empty) rc = marshal_write_block(&c.writer, &p, &sh, a.bytes.data(), &err);
        if (rc == 0) rc = wire_end(&c.writer, &err);
        if (rc == 0) rc = msg_read_reply(&c.reader, call, c.label, &err);
        if (rc == 0) rc = msg_read_data_put_reply(&c.reader, id, &lease, &err);
        return rc;
    }
    // DATA_GET into out (its shape must be the handle's); the reply's code.
    int Get(const msg_data_id &id, Array *out)
    {
        uint32_t call = next++;
        msg_data_shape got;
        int rc = msg_write_data_get(&c.writer, call, &id, &err);
        if (rc == 0) rc = msg_read_reply(&c.reader, call, c.label, &err);
        if (rc == 0) rc = msg_read_data_get_reply_header(&c.reader, &got, &err);
        if (rc != 0) return rc;
        EXPECT_EQ(got.type, out->shape.type);
        EXPECT_EQ(got.rows, out->shape.rows);
        EXPECT_EQ(got.cols, out->shape.cols);
        EXPECT_EQ(got.ld, out->shape.ld);
        iface_param p;
        iface_shape sh;
        msg_data_as_param(&got, &p, &sh);
        rc = marshal_read_block(&c.reader, &p, &sh, out->bytes.data(), &err);
        if (rc == 0) rc = wire_expect_end(&c.reader, &err);
        return rc;
    }
    // DATA_FREE or DATA_RENEW of ids: the reply's code, statuses in *st.
    int Ids(uint32_t type, std::vector<msg_data_id> ids, std::vector<int32_t> *st)
    {
        uint32_t call = next++, lease;
        msg_data_ids l = {static_cast<uint32_t>(ids.size()), ids.data()};
        st->assign(ids.size(), 1);
        int rc = msg_write_data_ids(&c.writer, type, call, &l, &err);
        if (rc == 0) rc = msg_read_reply(&c.reader, call, c.label, &err);
        if (rc == 0) rc = msg_read_data_ids_reply(&c.reader, &lease, st->data(), l.count, &err);
        return rc;
    }
    // A DATA_PUT of shape whose elements are only a count (what a hostile
    // peer may send): the reply's code.
    int PutHeaderOnly(const msg_data_shape &shape, uint64_t count)
    {
        uint32_t call = next++;
        int rc = msg_write_data_put_header(&c.writer, call, &shape, 0, &err);
        if (rc == 0) rc = wire_put_u64(&c.writer, count, &err);
        if (rc == 0) rc = wire_end(&c.writer, &err);
        if (rc == 0) rc = msg_read_reply(&c.reader, call, c.label, &err);
        return rc;
    }
    int FreeOne(const msg_data_id &id)
    {
        std::vector<int32_t> st;
        int rc = Ids(PROTO_DATA_FREE, {id}, &st);
        return rc != 0 ? rc : st[0];
    }
    // STATUS (on a new connection of the same identity: the dispatcher
    // answers it): handles and their bytes.
    void Handles(uint64_t *count, uint64_t *bytes) const
    {
        Raw fresh(port_, name_, secret_, from_);
        msg_status st = {};
        ASSERT_EQ(msg_write_status(&fresh.c.writer, 3, &fresh.err), 0);
        ASSERT_EQ(msg_read_status_reply(&fresh.c.reader, 3, fresh.c.label, &st, &fresh.err), 0) << fresh.err.detail;
        EXPECT_TRUE(st.has_handles);
        *count = st.handles;
        *bytes = st.handle_bytes;
        msg_status_free(&st);
    }

    // DATA_GRANT of id: the reply's code, the ticket in *ticket.
    int Grant(const msg_data_id &id, msg_data_id *ticket)
    {
        uint32_t call = next++, ttl_ms = 0;
        int rc = msg_write_data_grant(&c.writer, call, &id, &err);
        if (rc == 0) rc = msg_read_reply(&c.reader, call, c.label, &err);
        if (rc == 0) rc = msg_read_data_grant_reply(&c.reader, ticket, &ttl_ms, &err);
        return rc;
    }

  private:
    int port_;
    const char *name_, *secret_, *from_;
};

#endif
