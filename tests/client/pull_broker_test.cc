// pull_broker_test.cc -- the pull broker (server/pull_broker.c) driven over its
// channels directly, as a worker taken over by its routine would drive it.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "../support/server_proc.h"
extern "C" {
#include "marshal.h"
#include "msg.h"
#include "msg_data.h"
#include "protocol.h"
#include "pull.h"
#include "sock.h"
#include "transport.h"
}

namespace {

// A TCP port on 127.0.0.1 that takes connections (the kernel's backlog) and
// never answers: a source that holds every fetch until its time limit.
struct MuteSource {
    int fd = -1, port = 0;
    MuteSource()
    {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        sockaddr_in a = {};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
        EXPECT_EQ(listen(fd, 16), 0);
        getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
        port = ntohs(a.sin_port);
    }
    ~MuteSource() { close(fd); }
    std::string address() const { return "127.0.0.1:" + std::to_string(port); }
    // Takes the connections waiting now: how many there were (their
    // sockets in *kept when given, else closed).
    int Take(std::vector<int> *kept = nullptr)
    {
        int n = 0, c;
        while ((c = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC)) >= 0) {
            n++;
            if (kept) kept->push_back(c);
            else close(c);
        }
        return n;
    }
};

// A port nothing listens on (bound, then closed).
int ClosedPort()
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a = {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
    getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
    close(fd);
    return ntohs(a.sin_port);
}

// A file of bytes bytes (each fill), open read-write, its name gone.
int TempFile(size_t bytes, unsigned char fill, int flags = O_RDWR)
{
    char name[] = "/tmp/numrpc-pull-broker-XXXXXX";
    int fd = mkstemp(name);
    std::vector<unsigned char> b(bytes, fill);
    EXPECT_EQ(write(fd, b.data(), b.size()), static_cast<ssize_t>(b.size()));
    int out = flags == O_RDWR ? fd : open(name, flags | O_CLOEXEC);
    if (out != fd) close(fd);
    unlink(name);
    return out;
}

// The broker's answer: status, detail, the call id it answers.
struct Answer {
    int code = 1;
    std::string detail;
    uint32_t call_id = 0;
};

class PullBroker : public ::testing::Test {
  protected:
    static void SetUpTestSuite()
    {
        src_ = new ServerProc({"--handle-ticket-ms", "10000"});
        mute_ = new MuteSource();
        closed_ = "127.0.0.1:" + std::to_string(ClosedPort());
        server_config cfg = Config();
        err_t err;
        ASSERT_EQ(pull_broker_start(&cfg, &err), 0) << err.detail;
    }
    // The broker's configuration: these sources (default: all three).
    static server_config Config(const std::string &pull_from = "")
    {
        server_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.io_timeout_ms = 5000;
        cfg.handle_bytes = 1 << 20;
        cfg.log_level = LOG_LEVEL_ERROR;
        cfg.quiet = 1;
        std::string all = src_->address() + ", " + mute_->address() + "," + closed_;
        snprintf(cfg.pull_from, sizeof cfg.pull_from, "%s", pull_from.empty() ? all.c_str() : pull_from.c_str());
        return cfg;
    }
    static void TearDownTestSuite()
    {
        pull_broker_stop();
        delete mute_;
        delete src_;
    }
    void SetUp() override
    {
        err_t err;
        ch_ = pull_broker_channel(&err);
        ASSERT_GE(ch_, 0) << err.detail;
    }
    void TearDown() override { close(ch_); }

    static msg_data_pull Request(const std::string &source, size_t n, uint32_t deadline_ms = 3000)
    {
        msg_data_pull q = {};
        snprintf(q.source, sizeof q.source, "%s", source.c_str());
        memset(q.ticket.b, 0x11, sizeof q.ticket.b);
        q.shape = {NUMRPC_T_DOUBLE, n, 1, n};
        q.deadline_ms = deadline_ms;
        return q;
    }
    // Sends q (as DATA_PULL call_id) with fd on ch (-1: none).
    static void Send(int ch, const msg_data_pull &q, int fd, uint32_t call_id)
    {
        transport_bytes out = {};
        out.max = PULL_MSG_MAX;
        wire_writer w;
        err_t err;
        ASSERT_EQ(wire_writer_init(&w, -1, PROTO_DEFAULT_PACKET, &err), 0);
        wire_writer_attach(&w, transport_memory_sink(&out));
        ASSERT_EQ(msg_write_data_pull(&w, call_id, &q, &err), 0) << err.detail;
        SendBytes(ch, out.p, out.len, fd);
        wire_writer_free(&w);
        transport_bytes_free(&out);
    }
    static void SendBytes(int ch, const void *p, size_t n, int fd)
    {
        ASSERT_EQ(sock_send_fd(ch, fd, p, n), 0) << strerror(errno);
    }
    // The next answer on ch within ms; code 1 when none came.
    static Answer Receive(int ch, int ms = 5000)
    {
        Answer a;
        pollfd p = {ch, POLLIN, 0};
        if (poll(&p, 1, ms) != 1) return a;
        uint8_t buf[PULL_MSG_MAX];
        ssize_t got = recv(ch, buf, sizeof buf, 0);
        if (got <= 0) {
            a.detail = "the channel closed";
            return a;
        }
        wire_reader r;
        err_t err;
        uint32_t type;
        EXPECT_EQ(wire_reader_init(&r, -1, PROTO_DEFAULT_PACKET, &err), 0);
        transport t = transport_memory(buf, static_cast<size_t>(got));
        wire_reader_attach(&r, t);
        EXPECT_EQ(wire_next_message(&r, &type, &a.call_id, &err), 0) << err.detail;
        a.code = msg_reply_status(&r, type, a.call_id, a.call_id, "broker", &err);
        a.detail = err.detail;
        if (a.code == 0) {
            EXPECT_EQ(wire_expect_end(&r, &err), 0);
        }
        wire_reader_attach(&r, transport_none());
        transport_close(&t);
        wire_reader_free(&r);
        return a;
    }
    // A handle of v put at the source and a ticket for it.
    static msg_data_id Ticket(const std::vector<double> &v)
    {
        msg_conn c;
        err_t err;
        msg_data_id id = {}, ticket = {};
        uint32_t lease, ttl;
        EXPECT_EQ(msg_conn_open(&c, "127.0.0.1", src_->port(), 2000, 5000, PROTO_DEFAULT_PACKET, &err), 0);
        msg_hello h = {};
        h.version = PROTO_VERSION;
        h.packet_size = PROTO_DEFAULT_PACKET;
        snprintf(h.peer, sizeof h.peer, "pull_broker_test");
        EXPECT_EQ(msg_write_hello(&c.writer, 1, &h, &err), 0);
        EXPECT_EQ(msg_read_hello_reply(&c.reader, 1, c.label, &h, &err), 0) << err.detail;
        msg_data_shape s = {NUMRPC_T_DOUBLE, v.size(), 1, v.size()};
        iface_param p;
        iface_shape sh;
        msg_data_as_param(&s, &p, &sh);
        EXPECT_EQ(msg_write_data_put_header(&c.writer, 2, &s, 0, &err), 0);
        EXPECT_EQ(marshal_write_block(&c.writer, &p, &sh, v.data(), &err), 0);
        EXPECT_EQ(wire_end(&c.writer, &err), 0);
        EXPECT_EQ(msg_read_reply(&c.reader, 2, c.label, &err), 0) << err.detail;
        EXPECT_EQ(msg_read_data_put_reply(&c.reader, &id, &lease, &err), 0) << err.detail;
        EXPECT_EQ(msg_write_data_grant(&c.writer, 3, &id, &err), 0);
        EXPECT_EQ(msg_read_reply(&c.reader, 3, c.label, &err), 0) << err.detail;
        EXPECT_EQ(msg_read_data_grant_reply(&c.reader, &ticket, &ttl, &err), 0) << err.detail;
        msg_conn_free(&c);
        return ticket;
    }

    static ServerProc *src_;
    static MuteSource *mute_;
    static std::string closed_;
    int ch_ = -1;
};
ServerProc *PullBroker::src_ = nullptr;
MuteSource *PullBroker::mute_ = nullptr;
std::string PullBroker::closed_;

// The broker fills the file it was sent, exactly the shape's bytes of it.
TEST_F(PullBroker, APullFillsTheFileItWasSentAndNothingBeyond)
{
    std::vector<double> v = {1.5, -2, 3.25, 4, 5e10, 6, 7};
    msg_data_pull q = Request(src_->address(), v.size());
    q.ticket = Ticket(v);
    const size_t bytes = v.size() * sizeof(double), extra = 4096;
    int file = TempFile(bytes + extra, 0xab);
    Send(ch_, q, file, 41);
    Answer a = Receive(ch_);
    EXPECT_EQ(a.code, 0) << a.detail;
    EXPECT_EQ(a.call_id, 41u);
    std::vector<double> got(v.size());
    ASSERT_EQ(pread(file, got.data(), bytes, 0), static_cast<ssize_t>(bytes));
    EXPECT_EQ(got, v);
    std::vector<unsigned char> tail(extra), want(extra, 0xab);
    ASSERT_EQ(pread(file, tail.data(), extra, static_cast<off_t>(bytes)), static_cast<ssize_t>(extra));
    EXPECT_EQ(tail, want) << "the broker wrote beyond the shape's bytes";
    close(file);
}

// Whatever a worker says, the broker's own --pull-from decides.
TEST_F(PullBroker, ASourceNotInItsPullFromIsRefused)
{
    int file = TempFile(8 * sizeof(double), 0);
    Send(ch_, Request("127.0.0.1:1", 8), file, 7);
    Answer a = Receive(ch_);
    EXPECT_EQ(a.code, NUMRPC_EAUTH) << a.detail;
    EXPECT_EQ(a.call_id, 7u);
    EXPECT_NE(a.detail.find("--pull-from"), std::string::npos) << a.detail;
    close(file);
}

// SIGHUP's settings reach the broker: a source taken out of --pull-from
// is refused from then on.
TEST_F(PullBroker, AReloadedPullFromIsTheBrokersFromThenOn)
{
    int file = TempFile(8 * sizeof(double), 0);
    server_config fewer = Config(closed_);
    pull_broker_reload(&fewer);
    Send(ch_, Request(src_->address(), 8), file, 1);
    Answer a = Receive(ch_);
    EXPECT_EQ(a.code, NUMRPC_EAUTH) << a.detail;
    Send(ch_, Request(closed_, 8), file, 2);
    EXPECT_EQ(Receive(ch_).code, NUMRPC_ECONNECT);
    server_config all = Config();
    pull_broker_reload(&all);
    Send(ch_, Request(mute_->address(), 8, 1), file, 3); // listed again (and mute: a time-out)
    a = Receive(ch_);
    EXPECT_NE(a.code, NUMRPC_EAUTH) << a.detail;
    mute_->Take();
    close(file);
}

TEST_F(PullBroker, AFileSmallerThanTheShapeIsRefused)
{
    int file = TempFile(8 * sizeof(double) - 1, 0);
    Send(ch_, Request(src_->address(), 8), file, 8);
    Answer a = Receive(ch_);
    EXPECT_EQ(a.code, NUMRPC_EINVAL) << a.detail;
    EXPECT_NE(a.detail.find("needs 64"), std::string::npos) << a.detail;
    close(file);
}

// No file, a pipe, a file open read-only, an absurd shape, garbage, a
// datagram too long, more bytes than --handle-bytes: each gets its error,
// and the channel goes on.
TEST_F(PullBroker, MalformedRequestsAreRefusedAndTheChannelGoesOn)
{
    Send(ch_, Request(src_->address(), 8), -1, 1);
    Answer a = Receive(ch_);
    EXPECT_EQ(a.code, NUMRPC_EINVAL) << a.detail;
    EXPECT_NE(a.detail.find("without the handle's file"), std::string::npos) << a.detail;

    int pipe_fds[2];
    ASSERT_EQ(pipe(pipe_fds), 0);
    Send(ch_, Request(src_->address(), 8), pipe_fds[1], 2);
    a = Receive(ch_);
    EXPECT_EQ(a.code, NUMRPC_EINVAL) << a.detail;
    EXPECT_NE(a.detail.find("not a regular file"), std::string::npos) << a.detail;
    close(pipe_fds[0]);
    close(pipe_fds[1]);

    int ro = TempFile(64, 0, O_RDONLY);
    Send(ch_, Request(src_->address(), 8), ro, 3);
    a = Receive(ch_);
    EXPECT_EQ(a.code, NUMRPC_EINVAL) << a.detail;
    close(ro);

    // ld x cols x 8 past 2^64: msg_read_data_pull refuses it.
    msg_data_pull absurd = Request(src_->address(), 8);
    absurd.shape.rows = absurd.shape.ld = 1ull << 40;
    absurd.shape.cols = 1ull << 40;
    int file = TempFile(64, 0);
    Send(ch_, absurd, file, 4);
    a = Receive(ch_);
    EXPECT_EQ(a.code, NUMRPC_EPROTO) << a.detail;

    const char garbage[] = "not a message at all, just bytes";
    SendBytes(ch_, garbage, sizeof garbage, file);
    a = Receive(ch_);
    EXPECT_EQ(a.code, NUMRPC_EPROTO) << a.detail;

    std::vector<uint8_t> long_one(PULL_MSG_MAX + 100, 0);
    SendBytes(ch_, long_one.data(), long_one.size(), file);
    a = Receive(ch_);
    EXPECT_EQ(a.code, NUMRPC_EPROTO) << a.detail;

    // More than --handle-bytes (1 MiB here), whatever the file.
    int big = TempFile(0, 0);
    ASSERT_EQ(ftruncate(big, 8 << 20), 0);
    Send(ch_, Request(src_->address(), 1 << 20), big, 5);
    a = Receive(ch_);
    EXPECT_EQ(a.code, NUMRPC_ELIMIT) << a.detail;
    close(big);

    // Still served: a listed source that does not listen.
    Send(ch_, Request(closed_, 8), file, 6);
    a = Receive(ch_);
    EXPECT_EQ(a.code, NUMRPC_ECONNECT) << a.detail;
    EXPECT_EQ(a.call_id, 6u);
    close(file);
}

// A worker gets one fetch at a time: a second request waits for the first
// to end; another worker's fetch does not wait for either.
TEST_F(PullBroker, OneFetchAtATimePerChannelAndChannelsDoNotWaitForEachOther)
{
    mute_->Take();
    std::vector<int> held; // the fetches' connections, open (a closed one would end its fetch)
    auto wait_for_connection = [&] {
        size_t before = held.size();
        for (int i = 0; i < 500 && held.size() == before; i++) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            mute_->Take(&held);
        }
        return held.size() - before;
    };
    int file = TempFile(64, 0);
    Send(ch_, Request(mute_->address(), 8, 1500), file, 1);
    Send(ch_, Request(mute_->address(), 8, 1500), file, 2);
    ASSERT_EQ(wait_for_connection(), 1u) << "the first fetch connects";
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(mute_->Take(&held), 0) << "the second request must wait for the first";
    err_t err;
    int other = pull_broker_channel(&err);
    ASSERT_GE(other, 0) << err.detail;
    Send(other, Request(closed_, 8), file, 9);
    Answer b = Receive(other, 1000);
    EXPECT_EQ(b.code, NUMRPC_ECONNECT) << "another channel is served meanwhile: " << b.detail;
    pollfd first = {ch_, POLLIN, 0};
    EXPECT_EQ(poll(&first, 1, 0), 0) << "while the first fetch still runs";
    close(other);
    Answer a = Receive(ch_);
    EXPECT_EQ(a.call_id, 1u);
    EXPECT_EQ(a.code, NUMRPC_ETIMEDOUT) << a.detail;
    EXPECT_EQ(wait_for_connection(), 1u) << "then the second one runs";
    a = Receive(ch_);
    EXPECT_EQ(a.call_id, 2u);
    EXPECT_EQ(a.code, NUMRPC_ETIMEDOUT) << a.detail;
    for (int c : held) close(c);
    close(file);
}

// A worker that dies (its channel closes) takes its fetch with it.
TEST_F(PullBroker, AClosedChannelEndsItsFetch)
{
    mute_->Take();
    int file = TempFile(64, 0);
    Send(ch_, Request(mute_->address(), 8, 20000), file, 1);
    std::vector<int> conns;
    for (int i = 0; i < 100 && conns.empty(); i++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        mute_->Take(&conns);
    }
    ASSERT_EQ(conns.size(), 1u);
    close(ch_);
    ch_ = -1;
    auto start = std::chrono::steady_clock::now();
    pollfd p = {conns[0], POLLIN, 0};
    char byte;
    bool ended = false;
    while (!ended && poll(&p, 1, 3000) == 1) ended = recv(conns[0], &byte, 1, 0) <= 0; // the HELLO first
    EXPECT_TRUE(ended) << "the fetch's connection stayed open";
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
    close(conns[0]);
    close(file);
    err_t err;
    ch_ = pull_broker_channel(&err); // the broker goes on
    ASSERT_GE(ch_, 0) << err.detail;
    file = TempFile(64, 0);
    Send(ch_, Request(closed_, 8), file, 3);
    EXPECT_EQ(Receive(ch_).code, NUMRPC_ECONNECT);
    close(file);
}

} // namespace
