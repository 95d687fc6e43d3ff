// errors_test.cc -- bad input of every kind gets a clear error, and the
// server keeps serving: each case is followed by a good call that succeeds.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../support/server_proc.h"
#include "numrpc.h"
extern "C" {
#include "marshal.h"
#include "msg.h"
#include "sock.h"
#include "wire.h"
}

namespace {

class BadInput : public ::testing::Test {
  protected:
    static void SetUpTestSuite() { server_ = new ServerProc({"--max-array-elems", "100000"}); }
    static void TearDownTestSuite()
    {
        numrpc_finalize();
        delete server_;
        server_ = nullptr;
    }
    void SetUp() override
    {
        std::string addr = server_->address();
        numrpc_config cfg{addr.c_str(), 0, nullptr, nullptr};
        ASSERT_EQ(numrpc_init(&cfg), NUMRPC_OK);
    }
    // The good call that must still work after every bad one.
    void ExpectServerStillServes()
    {
        ASSERT_TRUE(server_->alive());
        const int n = 50;
        std::vector<double> x(n), y(n, 0.0);
        for (int i = 0; i < n; i++) x[i] = 3.0 * i - 1.0;
        ASSERT_EQ(numrpc_call("dcopy", n, x.data(), 1, y.data(), 1), NUMRPC_OK)
            << numrpc_last_error_detail();
        EXPECT_EQ(x, y);
    }
    static std::string Detail() { return numrpc_last_error_detail(); }
    static ServerProc *server_;
};
ServerProc *BadInput::server_ = nullptr;

// Sends one crafted message of `type` on a raw connection (its body written
// by `body`) and reads the reply's status and detail; `after` reads the rest
// of a successful reply.  The status, or a negative transport failure.
template <typename Body, typename After>
int RawExchange(int port, uint32_t type, uint32_t call_id, Body body, After after, std::string *detail_out)
{
    int fd = connect_loopback(port);
    if (fd < 0) return -1000;
    err_t err;
    wire_writer w;
    wire_reader r;
    wire_writer_init(&w, fd, 4096, &err);
    wire_reader_init(&r, fd, 0, &err);
    wire_begin(&w, type, call_id);
    body(&w, &err);
    wire_end(&w, &err);
    uint32_t rtype = 0, id = 0, status = 12345;
    char *detail = nullptr;
    int rc = wire_next_message(&r, &rtype, &id, &err);
    if (rc == 0) rc = wire_get_u32(&r, &status, &err);
    if (rc == 0) rc = wire_get_string(&r, &detail, 1 << 20, &err);
    if (rc == 0 && status == 0) rc = after(&r, &err);
    if (detail) *detail_out = detail;
    free(detail);
    wire_writer_free(&w);
    wire_reader_free(&r);
    close(fd);
    if (rc != 0) return rc * 1000;
    EXPECT_EQ(rtype, static_cast<uint32_t>(PROTO_REPLY));
    EXPECT_EQ(id, call_id);
    return static_cast<int32_t>(status);
}

// One crafted CALL: its header, then the arguments written by `body`.
template <typename Body>
int RawCall(int port, uint32_t call_id, const char *routine, uint64_t hash, uint32_t nargs,
            Body body, std::string *detail_out, uint32_t deadline_ms = 0)
{
    auto call = [&](wire_writer *w, err_t *err) {
        wire_put_string(w, routine, err);
        wire_put_u64(w, hash, err);
        wire_put_u32(w, deadline_ms, err);
        wire_put_u32(w, 0, err);
        wire_put_u32(w, 0, err);
        wire_put_u32(w, nargs, err);
        body(w, err);
    };
    return RawExchange(port, PROTO_CALL, call_id, call, [](wire_reader *, err_t *) { return 0; }, detail_out);
}

// One PROBE: n bytes up, reply_bytes asked back; *back: the count announced.
int RawProbe(int port, uint32_t reply_bytes, uint32_t n, std::string *detail_out, uint64_t *back)
{
    auto probe = [&](wire_writer *w, err_t *err) {
        wire_put_u32(w, reply_bytes, err);
        wire_put_u64(w, n, err);
        std::vector<uint8_t> payload(n, 0x5a);
        wire_put(w, payload.data(), payload.size(), err);
        wire_pad8(w, err);
    };
    return RawExchange(port, PROTO_PROBE, 77, probe,
                       [&](wire_reader *r, err_t *err) { return wire_get_u64(r, back, err); }, detail_out);
}

TEST_F(BadInput, ProbeAsksWithinItsLimit)
{
    std::string detail;
    uint64_t back = 0;
    EXPECT_EQ(RawProbe(server_->port(), 1000, 5000, &detail, &back), NUMRPC_OK) << detail;
    EXPECT_EQ(back, 1000u);
    EXPECT_EQ(RawProbe(server_->port(), 1u << 30, 0, &detail, &back), NUMRPC_EINVAL);
    EXPECT_NE(detail.find("a probe moves at most"), std::string::npos) << detail;
    ExpectServerStillServes();
}

TEST_F(BadInput, UnknownRoutine)
{
    EXPECT_EQ(numrpc_call("no_such_routine", 1, 2), NUMRPC_ENOENT);
    EXPECT_NE(Detail().find("unknown routine \"no_such_routine\""), std::string::npos) << Detail();
    EXPECT_STREQ(numrpc_strerror(NUMRPC_ENOENT), "unknown routine");
    ExpectServerStillServes();
}

TEST_F(BadInput, NegativeDimension)
{
    std::vector<double> a(9);
    std::vector<int> ipvt(3);
    int info = 0;
    EXPECT_EQ(numrpc_call("dgefa", a.data(), 3, -3, ipvt.data(), &info), NUMRPC_EINVAL);
    EXPECT_NE(Detail().find("dgefa"), std::string::npos) << Detail();
    EXPECT_NE(Detail().find("-3"), std::string::npos) << Detail();
    ExpectServerStillServes();
}

TEST_F(BadInput, NegativeDimensionReachingTheServer)
{
    // A hostile client skips the client-side check: the server checks too.
    std::string detail;
    int status = RawCall(server_->port(), 41, "dcopy", 0, 5,
                         [](wire_writer *w, err_t *err) {
                             wire_put_u32(w, static_cast<uint32_t>(-5), err);  // n
                             wire_put_u32(w, 1, err);                         // incx
                             wire_put_u32(w, 1, err);                         // incy
                             wire_pad8(w, err);
                         },
                         &detail);
    EXPECT_EQ(status, NUMRPC_EINVAL) << detail;
    EXPECT_NE(detail.find("count of x"), std::string::npos) << detail;
    ExpectServerStillServes();
}

TEST_F(BadInput, WrongNumberOfArguments)
{
    std::vector<double> a(9);
    EXPECT_EQ(numrpc_call("dgefa", a.data(), 3, 3), NUMRPC_EINVAL);
    EXPECT_NE(Detail().find("dgefa takes 5 arguments (a, lda, n, ipvt, info), 3 given"), std::string::npos)
        << Detail();
    ExpectServerStillServes();
}

TEST_F(BadInput, NullOutputPointer)
{
    std::vector<double> a(4, 1.0);
    std::vector<int> ipvt(2);
    EXPECT_EQ(numrpc_call("dgefa", a.data(), 2, 2, ipvt.data(), (int *)nullptr), NUMRPC_EINVAL);
    EXPECT_NE(Detail().find("info"), std::string::npos) << Detail();
    ExpectServerStillServes();
}

TEST_F(BadInput, TruncatedMessage)
{
    int fd = connect_loopback(server_->port());
    ASSERT_GE(fd, 0);
    // A CALL packet that announces 4000 payload bytes but delivers 24.
    uint8_t packet[16 + 24] = {0x4E, 0x52, PROTO_VERSION, PROTO_CALL, 0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0x0F, 0xA0};
    ASSERT_EQ(send(fd, packet, sizeof packet, MSG_NOSIGNAL), static_cast<ssize_t>(sizeof packet));
    close(fd);
    ExpectServerStillServes();
}

TEST_F(BadInput, GarbageBytes)
{
    int fd = connect_loopback(server_->port());
    ASSERT_GE(fd, 0);
    std::mt19937 gen(17);
    std::vector<uint8_t> junk(8192);
    for (auto &b : junk) b = static_cast<uint8_t>(gen());
    send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
    // The server closes the connection: a read ends (bounded by a timeout).
    timeval tv{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char buf[64];
    EXPECT_EQ(recv(fd, buf, sizeof buf, 0), 0);
    close(fd);
    ExpectServerStillServes();
}

TEST_F(BadInput, ArrayOverTheServersLimit)
{
    const int n = 200000;  // the server allows 100000 elements per array
    std::vector<double> x(n, 1.0), y(n, 0.0);
    EXPECT_EQ(numrpc_call("dcopy", n, x.data(), 1, y.data(), 1), NUMRPC_ELIMIT);
    EXPECT_NE(Detail().find("limit of 100000"), std::string::npos) << Detail();
    EXPECT_EQ(y[0], 0.0) << "nothing written on failure";
    ExpectServerStillServes();
}

TEST_F(BadInput, HugeDeclaredSizeIsRefusedBeforeAllocating)
{
    std::string detail;
    int status = RawCall(server_->port(), 42, "dcopy", 0, 5,
                         [](wire_writer *w, err_t *err) {
                             wire_put_u32(w, 0x7fffffff, err);  // n: 16 GiB of doubles
                             wire_put_u32(w, 1, err);
                             wire_put_u32(w, 1, err);
                             wire_pad8(w, err);
                         },
                         &detail);
    EXPECT_EQ(status, NUMRPC_ELIMIT) << detail;
    ExpectServerStillServes();
}

TEST_F(BadInput, StaleInterfaceHashIsRefused)
{
    std::string detail;
    int status = RawCall(server_->port(), 43, "ping", 0x1234, 0, [](wire_writer *, err_t *) {}, &detail);
    EXPECT_EQ(status, NUMRPC_ESTALE) << detail;
    EXPECT_NE(detail.find("out of date"), std::string::npos) << detail;
    ExpectServerStillServes();
}

TEST_F(BadInput, DeadlineStopsTheRoutine)
{
    // linpack with n = 3000 sends 72 MB and computes for a while; a 30 ms
    // deadline, counted from the request's first byte, stops its worker
    // (while the request arrives, or while it computes) and the caller
    // gets ETIMEDOUT, not a hang (tests/client/failover_test.cc times
    // each phase).
    const int n = 3000;
    const size_t elems = static_cast<size_t>(n) * n;
    ServerProc big;  // this suite's server limits arrays to 100000 elements
    std::string detail;
    int status = RawCall(big.port(), 44, "linpack", 0, 6,
                         [&](wire_writer *w, err_t *err) {
                             wire_put_u32(w, n, err);  // lda
                             wire_put_u32(w, n, err);  // n
                             wire_pad8(w, err);
                             // a: n*n doubles (zeros: LU still does all its
                             // work), then b: n doubles, as the walker lays them out.
                             wire_put_u64(w, elems, err);
                             for (size_t done = 0; done < elems * 8;) {
                                 uint8_t *dst;
                                 size_t avail;
                                 wire_reserve(w, &dst, &avail, err);
                                 size_t m = avail < elems * 8 - done ? avail : elems * 8 - done;
                                 memset(dst, 0, m);
                                 wire_commit(w, m);
                                 done += m;
                             }
                             wire_put_u64(w, n, err);
                             for (int i = 0; i < n; i++) wire_put_double(w, 1.0, err);
                         },
                         &detail, 30);
    EXPECT_EQ(status, NUMRPC_ETIMEDOUT) << detail;
    EXPECT_EQ(detail.find("linpack"), 0u) << detail;
    EXPECT_NE(detail.find("deadline"), std::string::npos) << detail;
    EXPECT_TRUE(big.alive());
    std::string addr = big.address();
    numrpc_config cfg{addr.c_str(), 0, nullptr, nullptr};
    ASSERT_EQ(numrpc_init(&cfg), NUMRPC_OK);
    ExpectServerStillServes();
}

TEST_F(BadInput, ProtocolVersionMismatch)
{
    int fd = connect_loopback(server_->port());
    ASSERT_GE(fd, 0);
    err_t err;
    wire_writer w;
    wire_reader r;
    wire_writer_init(&w, fd, 4096, &err);
    wire_reader_init(&r, fd, 0, &err);
    wire_begin(&w, PROTO_HELLO, 5);
    wire_put_u32(&w, 99, &err);
    wire_put_u32(&w, 4096, &err);
    wire_put_string(&w, "future client", &err);
    ASSERT_EQ(wire_end(&w, &err), 0);
    uint32_t type, id, status;
    ASSERT_EQ(wire_next_message(&r, &type, &id, &err), 0) << err.detail;
    ASSERT_EQ(wire_get_u32(&r, &status, &err), 0);
    EXPECT_EQ(static_cast<int32_t>(status), NUMRPC_EVERSION);
    wire_writer_free(&w);
    wire_reader_free(&r);
    close(fd);
    ExpectServerStillServes();
}

TEST_F(BadInput, NoServerListening)
{
    EXPECT_EQ(numrpc_call("numrpc://127.0.0.1:1/ping"), NUMRPC_ECONNECT);
    EXPECT_NE(Detail().find("cannot connect to 127.0.0.1:1"), std::string::npos) << Detail();
    EXPECT_EQ(numrpc_call("numrpc://nohostport/ping"), NUMRPC_EINVAL);
    ExpectServerStillServes();
}

// A hostile server's side of an accepted connection fd: c speaks on it
// (and owns it) once true; on false fd is closed.
bool AcceptPeer(int fd, msg_conn *c)
{
    err_t err;
    if (fd < 0) return false;
    if (msg_conn_init(c, 4096, &err) != 0) {
        close(fd);
        return false;
    }
    msg_conn_attach(c, transport_tcp(fd), "client");
    return true;
}

// A broken server that answers the HELLO with status +7 (no numrpc code):
// the call fails with NUMRPC_EPROTO (the peer broke the protocol), never with
// the peer's positive number.
TEST(HostileServer, HelloReplyWithAPositiveStatusIsAProtocolError)
{
    int port = 0;
    err_t lerr;
    int lfd = sock_listen("127.0.0.1", 0, &port, &lerr);
    ASSERT_GE(lfd, 0) << lerr.detail;
    std::thread broken([lfd] {
        msg_conn c;
        err_t err;
        uint32_t type = 0, id = 0;
        if (!AcceptPeer(accept(lfd, nullptr, nullptr), &c)) return;
        if (wire_next_message(&c.reader, &type, &id, &err) == 0 && type == PROTO_HELLO &&
            wire_skip_message(&c.reader, &err) == 0)
            msg_reply_simple(&c.writer, id, 7, "seven", &err);
        while (wire_next_message(&c.reader, &type, &id, &err) == 0 && wire_skip_message(&c.reader, &err) == 0) {
        }
        msg_conn_free(&c);
    });
    std::string url = "numrpc://127.0.0.1:" + std::to_string(port) + "/ping";
    int rc = numrpc_call(url.c_str());
    EXPECT_EQ(rc, NUMRPC_EPROTO) << numrpc_last_error_detail();
    EXPECT_NE(std::string(numrpc_last_error_detail()).find("status 7"), std::string::npos)
        << numrpc_last_error_detail();
    numrpc_finalize(); /* closes the pooled connections: the listener's thread ends */
    broken.join();
    close(lfd);
}

// A server that takes a call and never answers it: it replies to HELLO and
// GET_IFACE (with the real interface of ping), then after the CALL sends
// keepalives every 50 ms (or nothing at all) until the client leaves.
// How a hostile server stops answering once a CALL has begun.
enum class Hang { kSilent, kKeepalives, kStopsReading, kNoInterface };

struct HangingServer {
    int lfd = -1;
    int port = 0;
    std::string routine;
    std::vector<uint8_t> iface_blob; // the real interface of routine
    Hang hang;
    std::thread thread;
    std::vector<std::thread> sessions; // one per connection

    HangingServer(Hang how, const std::string &name) : routine(name), hang(how)
    {
        ServerProc real;
        msg_conn c;
        err_t err;
        uint8_t *blob = nullptr;
        uint32_t len = 0;
        EXPECT_EQ(msg_conn_open(&c, "127.0.0.1", real.port(), 5000, 5000, 4096, &err), 0) << err.detail;
        EXPECT_EQ(msg_write_get_iface(&c.writer, 1, routine.c_str(), &err), 0);
        EXPECT_EQ(msg_read_iface_reply(&c.reader, 1, c.label, &blob, &len, &err), 0) << err.detail;
        if (blob) iface_blob.assign(blob, blob + len);
        free(blob);
        msg_conn_free(&c);
        lfd = sock_listen("127.0.0.1", 0, &port, &err);
        EXPECT_GE(lfd, 0) << err.detail;
        thread = std::thread([this] { Serve(); });
    }
    ~HangingServer()
    {
        shutdown(lfd, SHUT_RDWR);
        thread.join();
        for (auto &t : sessions) t.join();
        close(lfd);
    }
    // Until the client hangs up (bounded: 30 s).
    void Hold(int fd, msg_conn *c, uint32_t id)
    {
        err_t err;
        // Not reading, it cannot see the client's FIN behind the request:
        // held long enough for the client's deadline only.
        const int rounds = hang == Hang::kStopsReading ? 80 : 600;
        for (int i = 0; i < rounds; i++) {
            pollfd p = {fd, POLLIN, 0};
            if (hang == Hang::kStopsReading) p.fd = -1; // only waits
            if (poll(&p, 1, 50) > 0) break;
            if (hang == Hang::kKeepalives && wire_send_empty(&c->tp, PROTO_KEEPALIVE, id, &err) != 0) break;
        }
    }
    void Serve()
    {
        for (;;) {
            int fd = accept(lfd, nullptr, nullptr);
            if (fd < 0) return;
            sessions.emplace_back([this, fd] { Session(fd); });
        }
    }
    void Session(int fd)
    {
        msg_conn c;
        err_t err;
        uint32_t type = 0, id = 0;
        if (!AcceptPeer(fd, &c)) return;
        while (wire_next_message(&c.reader, &type, &id, &err) == 0) {
            if (type == PROTO_CALL && hang == Hang::kStopsReading) { // not a byte more is read
                Hold(fd, &c, id);
                break;
            }
            if (wire_skip_message(&c.reader, &err) != 0) break;
            if (type == PROTO_GET_IFACE && hang == Hang::kNoInterface) { // never answered
                Hold(fd, &c, id);
                break;
            }
            msg_hello h = {PROTO_VERSION, PROTO_MAX_PACKET, "hanging", 0, "", {}, {}, 0};
            if (type == PROTO_HELLO) msg_write_hello_reply(&c.writer, id, &h, &err);
            if (type == PROTO_GET_IFACE)
                msg_write_iface_reply(&c.writer, id, iface_blob.data(), static_cast<uint32_t>(iface_blob.size()),
                                      &err);
            if (type != PROTO_CALL) continue;
            Hold(fd, &c, id);
            break;
        }
        msg_conn_free(&c);
    }
};

class ClientDeadline : public ::testing::TestWithParam<Hang> {};

// A call's own deadline holds on the client, blocking or async, whether the
// server falls silent, sends keepalives forever, stops reading the request
// (a send blocked on a full socket), or never answers the interface fetch
// before the call (before, the client waited for its socket's own time
// limit in the last two: 98 s in the soak).
TEST_P(ClientDeadline, AHungServerCannotHoldACallPastItsDeadline)
{
    const bool big = GetParam() == Hang::kStopsReading;
    HangingServer hung(GetParam(), big ? "dcopy" : "ping");
    ASSERT_FALSE(hung.iface_blob.empty());
    std::string url = "numrpc://127.0.0.1:" + std::to_string(hung.port) + "/" + hung.routine;
    const int n = big ? 8 << 20 : 0; // 64 MiB: far more than the sockets hold
    std::vector<double> x(n > 0 ? n : 1, 1.0), y(x.size(), 0.0);
    auto call = [&](int *id) {
        if (!big) return id ? numrpc_call_async(id, url.c_str()) : numrpc_call(url.c_str());
        return id ? numrpc_call_async(id, url.c_str(), n, x.data(), 1, y.data(), 1)
                  : numrpc_call(url.c_str(), n, x.data(), 1, y.data(), 1);
    };
    ASSERT_EQ(numrpc_set_timeout(0.5), NUMRPC_OK);
    EXPECT_EQ(call(nullptr), NUMRPC_ETIMEDOUT) << numrpc_last_error_detail();
    std::string detail = numrpc_last_error_detail();
    const char *why = big                                ? "could not send its whole request"
                      : GetParam() == Hang::kNoInterface ? "deadline passed"
                                                         : "no answer from";
    EXPECT_NE(detail.find(why), std::string::npos) << detail;
    int id = -1;
    int rc = call(&id);
    if (rc == NUMRPC_OK) rc = numrpc_wait(id);
    EXPECT_EQ(rc, NUMRPC_ETIMEDOUT) << numrpc_last_error_detail();
    numrpc_set_timeout(0);
    numrpc_finalize();
}

INSTANTIATE_TEST_SUITE_P(SilentKeepalivesOrNotReading, ClientDeadline,
                         ::testing::Values(Hang::kSilent, Hang::kKeepalives, Hang::kStopsReading,
                                           Hang::kNoInterface));

TEST(ErrorList, EveryCodeHasANameAndAMessage)
{
#define CHECK_ENTRY(name, value, msg)                                                             \
    EXPECT_STREQ(numrpc_strerror(value), msg);                                                    \
    EXPECT_STREQ(numrpc_errname(value), "NUMRPC_" #name);
    NUMRPC_ERROR_LIST(CHECK_ENTRY)
#undef CHECK_ENTRY
    EXPECT_STREQ(numrpc_strerror(-999), "unknown error");
}

}  // namespace

namespace {

// Mutated copies of a valid request, sent one per connection: whatever the
// flipped bytes do (bad lengths, bad shapes, bad framing), the server answers
// or closes that connection, and keeps serving everyone else.
TEST(HostileMessages, RandomMutationsNeverTakeTheServerDown)
{
    ServerProc server({"--max-array-elems", "100000", "--io-timeout", "2000"});
    const pid_t pid = server.pid();
    // A valid dcopy request (n = 16) as bytes, built with the library's writer.
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    err_t err;
    wire_writer w;
    wire_writer_init(&w, sv[0], 4096, &err);
    wire_begin(&w, PROTO_CALL, 7);
    wire_put_string(&w, "dcopy", &err);
    wire_put_u64(&w, 0, &err);
    for (uint32_t v : {0u, 0u, 0u, 5u}) wire_put_u32(&w, v, &err);
    for (uint32_t v : {16u, 1u, 1u}) wire_put_u32(&w, v, &err);
    wire_pad8(&w, &err);
    wire_put_u64(&w, 16, &err);
    for (int i = 0; i < 16; i++) wire_put_double(&w, i * 0.5, &err);
    ASSERT_EQ(wire_end(&w, &err), 0);
    wire_writer_free(&w);
    std::vector<uint8_t> valid(4096);
    ssize_t len = recv(sv[1], valid.data(), valid.size(), 0);
    close(sv[0]);
    close(sv[1]);
    ASSERT_GT(len, 0);
    valid.resize(static_cast<size_t>(len));

    std::mt19937 gen(2026);
    for (int trial = 0; trial < 1000; trial++) {
        std::vector<uint8_t> bad = valid;
        int flips = 1 + static_cast<int>(gen() % 4);
        for (int k = 0; k < flips; k++) bad[gen() % bad.size()] = static_cast<uint8_t>(gen());
        if (trial % 10 == 0) bad.resize(gen() % bad.size());  // truncated, too
        int fd = connect_loopback(server.port());
        ASSERT_GE(fd, 0) << "trial " << trial;
        send(fd, bad.data(), bad.size(), MSG_NOSIGNAL);
        shutdown(fd, SHUT_WR);
        timeval tv{5, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        char sink[256];
        while (recv(fd, sink, sizeof sink, 0) > 0) {
        }
        close(fd);
    }
    EXPECT_TRUE(server.alive());
    EXPECT_EQ(server.pid(), pid);
    std::string addr = server.address();
    numrpc_config cfg{addr.c_str(), 0, nullptr, nullptr};
    ASSERT_EQ(numrpc_init(&cfg), NUMRPC_OK);
    std::vector<double> x(64, 2.5), y(64, 0.0);
    EXPECT_EQ(numrpc_call("dcopy", 64, x.data(), 1, y.data(), 1), NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_EQ(x, y);
    numrpc_finalize();
}

}  // namespace
