// hostile_test.cc -- one unauthenticated peer with a few cheap connections
// cannot stop a server: slow senders hold no worker, silent connections
// wait in no queue, one address cannot take every connection, and a peer
// that never reads cannot stall the dispatcher (real servers on 127.0.0.1).
#include <gtest/gtest.h>

#include <cblas.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../support/raw_peer.h"
#include "../support/server_proc.h"
#include "../support/test_util.h"
#include "numrpc.h"
#include "protocol.h"
extern "C" {
#include "msg.h"
#include "msg_control.h"
}

namespace {


// A legitimate call, checked against the local BLAS on the same inputs.
void ExpectRightDaxpy(int n)
{
    std::vector<double> x(n), y(n), want(n);
    for (int i = 0; i < n; i++) {
        x[i] = 0.5 * i - 3;
        y[i] = want[i] = 1.0 / (i + 1);
    }
    cblas_daxpy(n, 2.5, x.data(), 1, want.data(), 1);
    ASSERT_EQ(numrpc_call("daxpy", n, 2.5, x.data(), 1, y.data(), 1), NUMRPC_OK) << numrpc_last_error_detail();
    for (int i = 0; i < n; i++) ASSERT_DOUBLE_EQ(y[i], want[i]) << i;
}

// The first packet of a CALL to daxpy (n = 4) without its END flag: a
// request that has begun and whose rest comes later (or never).
std::vector<uint8_t> CallStart(uint32_t call_id)
{
    std::vector<uint8_t> body = {0, 0, 0, 5, 'd', 'a', 'x', 'p', 'y', 0, 0, 0};
    body.resize(64, 0);
    return Packet(PROTO_CALL, call_id, 0, body);
}

// Sends bytes one at a time, gap_ms apart, until sent or the socket fails
// or stop is set (a bounded loop).
void Trickle(int fd, const std::vector<uint8_t> &bytes, int gap_ms, const std::atomic<bool> &stop)
{
    for (size_t i = 0; i < bytes.size() && !stop; i++) {
        if (send(fd, &bytes[i], 1, MSG_NOSIGNAL) != 1) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
    }
}

// ---- Slow senders ----

// Before: a connection was lent to a worker from its first byte and each
// recv() had its own --io-timeout, so a sender at 5 bytes/s held a worker
// for as long as it liked; two of them held both workers here and the
// legitimate call below waited past its deadline.  Now a worker gets a
// request once its first packet is here whole; the dispatcher waits for
// the rest up to --request-timeout, then refuses it with ETIMEDOUT.
TEST(SlowSenders, HoldNoWorker)
{
    ServerProc server({"--workers", "2", "--max-workers", "2", "--request-timeout", "1500", "--admin-socket", "none"});
    std::atomic<bool> stop{false};
    std::vector<int> fds;
    std::vector<std::thread> senders;
    // Four trickle their HELLO; four send a whole HELLO (served, and held
    // idle by a worker) and then trickle a CALL.
    for (int i = 0; i < 8; i++) {
        int fd = connect_loopback(server.port());
        ASSERT_GE(fd, 0);
        fds.push_back(fd);
        if (i >= 4) {
            ASSERT_TRUE(SendHello(fd));
            ASSERT_EQ(ReadReplyStatus(fd), NUMRPC_OK);
        }
        std::vector<uint8_t> bytes = i < 4 ? HelloBytes() : CallStart(2);
        senders.emplace_back(Trickle, fd, bytes, 200, std::cref(stop));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300)); // every sender has begun
    UseServer(server.address());
    numrpc_set_timeout(5); // a deadline the call meets only if a worker is free
    for (int k = 0; k < 3; k++) ExpectRightDaxpy(1000);
    // Each slow sender hears why and is closed once its time is up.
    for (int fd : fds) {
        std::string detail;
        EXPECT_EQ(ReadReplyStatus(fd, &detail), NUMRPC_ETIMEDOUT);
        EXPECT_TRUE(Contains(detail, "not received whole within 1500 ms")) << detail;
        EXPECT_TRUE(ClosedByPeer(fd));
    }
    stop = true;
    for (auto &t : senders) t.join();
    for (int fd : fds) close(fd);
    ExpectRightDaxpy(10);
    EXPECT_TRUE(server.alive());
    numrpc_finalize();
}

// Before: only a stall of --io-timeout (60 s) between two bytes ended a
// request; one byte every 100 ms kept it going for ever.  Now a request's
// bytes must come at --min-rate once --request-timeout has passed.
TEST(SlowSenders, ARequestBelowTheMinimumRateIsCut)
{
    ServerProc server({"--request-timeout", "300", "--min-rate", "100", "--admin-socket", "none"});
    int fd = connect_loopback(server.port());
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(SendHello(fd));
    ASSERT_EQ(ReadReplyStatus(fd), NUMRPC_OK);
    std::vector<uint8_t> start = CallStart(3);
    ASSERT_EQ(send(fd, start.data(), start.size(), MSG_NOSIGNAL), static_cast<ssize_t>(start.size()));
    std::atomic<bool> stop{false};
    std::thread slow(Trickle, fd, std::vector<uint8_t>(200, 0), 100, std::cref(stop)); // 10 bytes/s
    std::string detail;
    EXPECT_EQ(ReadReplyStatus(fd, &detail), NUMRPC_ETIMEDOUT);
    EXPECT_TRUE(Contains(detail, "request too slow")) << detail;
    EXPECT_TRUE(Contains(detail, "minimum of 100 bytes/s")) << detail;
    EXPECT_TRUE(ClosedByPeer(fd));
    stop = true;
    slow.join();
    close(fd);
    UseServer(server.address());
    ExpectRightDaxpy(100);
    numrpc_finalize();
}

// ---- Silent connections ----

// Before: a new connection counted against --max-queue until its first
// bytes, so 16 silent ones made every legitimate call EBUSY.  Now only a
// whole request waits in the queue, and a new connection that sends
// nothing within --request-timeout is closed.
TEST(SilentConnections, TakeNoQueuePlaceAndAreClosed)
{
    ServerProc server({"--max-queue", "2", "--request-timeout", "1000", "--admin-socket", "none"});
    std::vector<int> silent;
    for (int i = 0; i < 16; i++) {
        int fd = connect_loopback(server.port());
        ASSERT_GE(fd, 0);
        silent.push_back(fd);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100)); // all accepted
    UseServer(server.address());
    ExpectRightDaxpy(500);
    for (int fd : silent) {
        EXPECT_TRUE(ClosedByPeer(fd));
        close(fd);
    }
    numrpc_finalize();
}

// ---- Per-peer limit ----

TEST(Peers, OneAddressCannotTakeEveryConnection)
{
    ServerProc server({"--max-connections-per-peer", "4", "--admin-socket", "none"});
    std::vector<int> held;
    for (int i = 0; i < 4; i++) {
        int fd = ConnectFrom("127.0.0.2", server.port());
        ASSERT_GE(fd, 0);
        held.push_back(fd);
    }
    int fifth = ConnectFrom("127.0.0.2", server.port());
    ASSERT_GE(fifth, 0);
    std::string detail;
    EXPECT_EQ(ReadReplyStatus(fifth, &detail), NUMRPC_EBUSY);
    EXPECT_TRUE(Contains(detail, "too many connections from this address: 4 open (limit 4")) << detail;
    close(fifth);
    // Another address is served meanwhile; the first one again once it
    // has closed some.
    UseServer(server.address());
    ExpectRightDaxpy(100);
    close(held.back());
    held.pop_back();
    int again = -1;
    for (int round = 0; round < 200; round++) { // the server sees the close
        again = ConnectFrom("127.0.0.2", server.port());
        ASSERT_GE(again, 0);
        ASSERT_TRUE(SendHello(again));
        if (ReadReplyStatus(again) == NUMRPC_OK) break;
        close(again);
        again = -1;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_GE(again, 0);
    if (again >= 0) close(again);
    for (int fd : held) close(fd);
    numrpc_finalize();
}

// ---- A peer that never reads ----

std::vector<uint8_t> StatusRequests(int count)
{
    transport_bytes out = {nullptr, 0, 0, 64u << 20};
    wire_writer w;
    err_t err;
    std::vector<uint8_t> bytes;
    if (wire_writer_init(&w, -1, 4096, &err) != 0) return bytes;
    wire_writer_attach(&w, transport_memory_sink(&out));
    for (int i = 0; i < count; i++)
        if (msg_write_status(&w, static_cast<uint32_t>(i + 1), &err) != 0) break;
    bytes.assign(out.p, out.p + out.len);
    wire_writer_free(&w);
    transport_bytes_free(&out);
    return bytes;
}

// Bytes the kernel holds, sent or not, on the sockets whose local port is
// port (the server's side), from /proc/net/tcp's tx_queue column.
int64_t UnreadForPeersOfPort(int port)
{
    FILE *f = fopen("/proc/net/tcp", "r");
    if (f == nullptr) return -1;
    char line[512];
    int64_t total = 0;
    if (fgets(line, sizeof line, f) == nullptr) {
        fclose(f);
        return -1;
    }
    while (fgets(line, sizeof line, f) != nullptr) {
        unsigned local_port = 0, state = 0;
        unsigned long tx = 0, rx = 0;
        if (sscanf(line, " %*d: %*x:%x %*x:%*x %x %lx:%lx", &local_port, &state, &tx, &rx) == 4 &&
            static_cast<int>(local_port) == port && state == 1 /* established */)
            total += static_cast<int64_t>(tx);
    }
    fclose(f);
    return total;
}

// Before: STATUS replies went out with blocking sends (200 ms each), so 60
// connections that pipelined STATUS requests and never read stalled the
// whole dispatcher (a fresh STATUS took 24 s), and, while the kernel took
// the replies, filled megabytes of its buffers per peer.  Now a reply the
// socket cannot take waits in memory, one per connection, and a peer with
// more than 64 KiB unread gets nothing more (nor is read from) until it
// reads; the dispatcher goes on.
TEST(Pipeliners, APeerThatNeverReadsCannotStallTheDispatcher)
{
    ServerProc server({"--admin-socket", "none"});
    std::vector<uint8_t> flood = StatusRequests(5000); // replies: more than the sockets hold
    ASSERT_FALSE(flood.empty());
    std::vector<int> fds;
    for (int i = 0; i < 60; i++) {
        int fd = ConnectFrom("127.0.0.1", server.port(), 4096); // a small window from the start
        ASSERT_GE(fd, 0);
        // As much as the socket takes now; the peer never reads a reply.
        size_t sent = 0;
        for (int k = 0; k < 1000 && sent < flood.size(); k++) {
            ssize_t n = send(fd, flood.data() + sent, flood.size() - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
            if (n <= 0) break;
            sent += static_cast<size_t>(n);
        }
        fds.push_back(fd);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2000)); // the dispatcher has met them
    // What the server holds for them in the kernel stays small: it answers
    // a peer only as fast as the peer reads (before, each had megabytes).
    int64_t unread = UnreadForPeersOfPort(server.port());
    EXPECT_LT(unread, 60 * (64 << 10) + 60 * (16 << 10)) << unread << " bytes";
    // A fresh STATUS is answered within a 3 s deadline (it was 24 s).
    msg_conn c;
    err_t err;
    ASSERT_EQ(msg_conn_open(&c, "127.0.0.1", server.port(), 2000, 3000, 4096, &err), 0) << err.detail;
    msg_status st;
    memset(&st, 0, sizeof st);
    ASSERT_EQ(msg_write_status(&c.writer, 7, &err), 0) << err.detail;
    ASSERT_EQ(msg_read_status_reply(&c.reader, 7, c.label, &st, &err), 0) << err.detail;
    EXPECT_GE(st.connections, 61u);
    msg_status_free(&st);
    msg_conn_free(&c);
    UseServer(server.address());
    ExpectRightDaxpy(100);
    for (int fd : fds) close(fd);
    EXPECT_TRUE(server.alive());
    numrpc_finalize();
}

} // namespace
