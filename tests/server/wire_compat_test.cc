// wire_compat_test.cc -- protocol 2 stays byte-for-byte: the bytes a client
// of before the message layer sent (recorded) are still served right.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <vector>

#include "../support/server_proc.h"
extern "C" {
#include "msg.h"
}

namespace {

// tests/server/data/client-v2.capture: what libnumrpc 0.1.0 (commit
// 8207b1c, before its move onto common/msg.h) wrote to a server for
//   numrpc_call("dcopy", 5, x, 1, y, 1); numrpc_call("ping");
// with x = {1.5, -2, 3.25, 4, 1e300}: HELLO (id 1), GET_IFACE dcopy (2),
// CALL dcopy (3) with the interface hash of stubs/blas.idl's dcopy, GET_IFACE
// ping (4), CALL ping (5).  Recorded through a relay on loopback.  If dcopy's
// IDL ever changes, its hash changes and this capture must be recorded anew.
std::vector<uint8_t> Capture()
{
    std::ifstream in(TOP_SRCDIR "/tests/server/data/client-v2.capture", std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

TEST(WireCompat, ACaptureOfAProtocol2ClientIsServed)
{
    ServerProc server;
    std::vector<uint8_t> bytes = Capture();
    ASSERT_EQ(bytes.size(), 256u);
    int fd = connect_loopback(server.port());
    ASSERT_GE(fd, 0);
    ASSERT_EQ(send(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
    msg_conn c;
    err_t err;
    ASSERT_EQ(msg_conn_init(&c, 4096, &err), 0);
    msg_conn_attach(&c, transport_tcp(fd), server.address().c_str());

    msg_hello h = {};
    ASSERT_EQ(msg_read_hello_reply(&c.reader, 1, c.label, &h, &err), 0) << err.detail;
    EXPECT_EQ(h.version, PROTO_VERSION);
    uint8_t *blob = nullptr;
    uint32_t len = 0;
    ASSERT_EQ(msg_read_iface_reply(&c.reader, 2, c.label, &blob, &len, &err), 0) << err.detail;
    free(blob);

    ASSERT_EQ(msg_read_reply(&c.reader, 3, c.label, &err), 0) << err.detail;
    msg_call_result res;
    ASSERT_EQ(msg_read_call_result(&c.reader, &res, &err), 0);
    uint64_t count = 0;
    ASSERT_EQ(wire_skip_pad8(&c.reader, &err), 0);  // the (empty) out scalars
    ASSERT_EQ(wire_get_u64(&c.reader, &count, &err), 0);
    ASSERT_EQ(count, 5u);
    const double x[5] = {1.5, -2, 3.25, 4, 1e300};
    for (double want : x) {
        double y = 0;
        ASSERT_EQ(wire_get_double(&c.reader, &y, &err), 0);
        EXPECT_EQ(y, want);
    }
    ASSERT_EQ(wire_skip_pad8(&c.reader, &err), 0);
    ASSERT_EQ(wire_expect_end(&c.reader, &err), 0) << err.detail;

    ASSERT_EQ(msg_read_iface_reply(&c.reader, 4, c.label, &blob, &len, &err), 0) << err.detail;
    free(blob);
    ASSERT_EQ(msg_read_reply(&c.reader, 5, c.label, &err), 0) << err.detail;
    ASSERT_EQ(wire_skip_message(&c.reader, &err), 0);
    msg_conn_free(&c);
}

}  // namespace
