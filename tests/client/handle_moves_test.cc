// handle_moves_test.cc -- a call naming handles on two real servers: the IN
// handle moves server to server (tickets, DATA_PULL), never through the client.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <cblas.h>
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../support/server_proc.h"
#include "../support/status_probe.h"
extern "C" {
#include "marshal.h"
#include "msg.h"
#include "msg_control.h"
#include "msg_data.h"
#include "protocol.h"
#include "transport.h"
}
#include "numrpc.h"

namespace {

// A raw client connection to a server (HELLO said), for forged requests.
struct Raw {
    msg_conn c;
    err_t err;
    uint32_t next = 10;
    explicit Raw(int port)
    {
        EXPECT_EQ(msg_conn_open(&c, "127.0.0.1", port, 2000, 5000, PROTO_DEFAULT_PACKET, &err), 0) << err.detail;
        msg_hello h = {};
        h.version = PROTO_VERSION;
        h.packet_size = PROTO_DEFAULT_PACKET;
        snprintf(h.peer, sizeof h.peer, "handle_moves_test");
        EXPECT_EQ(msg_write_hello(&c.writer, 1, &h, &err), 0);
        EXPECT_EQ(msg_read_hello_reply(&c.reader, 1, c.label, &h, &err), 0) << err.detail;
    }
    ~Raw() { msg_conn_free(&c); }
    // DATA_PUT of v (a column); the new id.
    msg_data_id Put(const std::vector<double> &v)
    {
        msg_data_shape s = {NUMRPC_T_DOUBLE, v.size(), 1, v.size()};
        iface_param p;
        iface_shape sh;
        msg_data_as_param(&s, &p, &sh);
        msg_data_id id = {};
        uint32_t lease, call = next++;
        EXPECT_EQ(msg_write_data_put_header(&c.writer, call, &s, 0, &err), 0);
        EXPECT_EQ(marshal_write_block(&c.writer, &p, &sh, v.data(), &err), 0);
        EXPECT_EQ(wire_end(&c.writer, &err), 0);
        EXPECT_EQ(msg_read_reply(&c.reader, call, c.label, &err), 0) << err.detail;
        EXPECT_EQ(msg_read_data_put_reply(&c.reader, &id, &lease, &err), 0) << err.detail;
        return id;
    }
    int Grant(const msg_data_id &id, msg_data_id *ticket)
    {
        uint32_t ttl, call = next++;
        int rc = msg_write_data_grant(&c.writer, call, &id, &err);
        if (rc == 0) rc = msg_read_reply(&c.reader, call, c.label, &err);
        return rc == 0 ? msg_read_data_grant_reply(&c.reader, ticket, &ttl, &err) : rc;
    }
    // DATA_GET of id (or a ticket) into *out (n doubles).
    int Get(const msg_data_id &id, std::vector<double> *out)
    {
        uint32_t call = next++;
        msg_data_shape s;
        int rc = msg_write_data_get(&c.writer, call, &id, &err);
        if (rc == 0) rc = msg_read_reply(&c.reader, call, c.label, &err);
        if (rc == 0) rc = msg_read_data_get_reply_header(&c.reader, &s, &err);
        if (rc != 0) return rc;
        out->assign(s.rows * s.cols, 0.0);
        iface_param p;
        iface_shape sh;
        msg_data_as_param(&s, &p, &sh);
        rc = marshal_read_block(&c.reader, &p, &sh, out->data(), &err);
        return rc == 0 ? wire_expect_end(&c.reader, &err) : rc;
    }
    int Pull(const std::string &source, const msg_data_id &ticket, const msg_data_shape &shape,
             msg_data_id *made = nullptr)
    {
        msg_data_pull q = {};
        snprintf(q.source, sizeof q.source, "%s", source.c_str());
        q.ticket = ticket;
        q.shape = shape;
        q.deadline_ms = 5000;
        msg_data_id id;
        uint32_t lease, call = next++;
        int rc = msg_write_data_pull(&c.writer, call, &q, &err);
        if (rc == 0) rc = msg_read_reply(&c.reader, call, c.label, &err);
        if (rc == 0) rc = msg_read_data_put_reply(&c.reader, &id, &lease, &err);
        if (rc == 0 && made) *made = id;
        return rc;
    }
};

// A listening socket on a free port of 127.0.0.1 (a fake source's).
int ListenOnLoopback(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a = {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
    listen(fd, 4);
    getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
    *port = ntohs(a.sin_port);
    return fd;
}

// A fake source's side of one pull: accepts a connection on listen_fd
// (the peer's address in *peer), answers its HELLO and reads its DATA_GET.
// 0 with the DATA_GET's call id in *get_id and c attached (freed by the
// caller with msg_conn_free), or -1.
int ReadOneGet(int listen_fd, int timeout_s, const char *label, msg_conn *c, uint32_t *get_id, sockaddr_in *peer)
{
    socklen_t len = sizeof *peer;
    int fd = accept4(listen_fd, reinterpret_cast<sockaddr *>(peer), &len, SOCK_CLOEXEC);
    if (fd < 0) return -1;
    timeval limit = {timeout_s, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    err_t err;
    if (msg_conn_init(c, PROTO_DEFAULT_PACKET, &err) != 0) {
        close(fd);
        return -1;
    }
    msg_conn_attach(c, transport_tcp(fd), label);
    for (int i = 0; i < 2; i++) {
        uint32_t type, id;
        if (wire_next_message(&c->reader, &type, &id, &err) != 0) break;
        if (type == PROTO_HELLO) {
            msg_hello h;
            if (msg_read_hello(&c->reader, &h, &err) != 0) break;
            h.version = PROTO_VERSION;
            h.packet_size = PROTO_DEFAULT_PACKET;
            msg_write_hello_reply(&c->writer, id, &h, &err);
            continue;
        }
        msg_data_id ticket;
        if (msg_read_data_get(&c->reader, &ticket, &err) != 0) break;
        *get_id = id;
        return 0;
    }
    msg_conn_free(c);
    return -1;
}

// A source that answers one DATA_GET with a header of 4 doubles, then 8.
class LyingSource {
  public:
    LyingSource()
    {
        fd_ = ListenOnLoopback(&port_);
        thread_ = std::thread([this] { Serve(); });
    }
    ~LyingSource()
    {
        shutdown(fd_, SHUT_RDWR);
        thread_.join();
        close(fd_);
    }
    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  private:
    void Serve()
    {
        msg_conn c;
        uint32_t id;
        sockaddr_in peer = {};
        if (ReadOneGet(fd_, 5, "liar", &c, &id, &peer) != 0) return;
        err_t err;
        msg_data_shape s = {NUMRPC_T_DOUBLE, 4, 1, 4};
        msg_write_data_get_reply_header(&c.writer, id, &s, &err);
        wire_put_u64(&c.writer, 8, &err); // more elements than the shape
        for (int k = 0; k < 8; k++) wire_put_double(&c.writer, 1.0, &err);
        wire_end(&c.writer, &err);
        msg_conn_free(&c);
    }
    int fd_ = -1, port_ = 0;
    std::thread thread_;
};

// A source that answers one DATA_GET with 4 doubles, 1 to 4, but only once
// the test has looked at the connection: it stays open until Release().
class HeldSource {
  public:
    HeldSource()
    {
        fd_ = ListenOnLoopback(&port_);
        thread_ = std::thread([this] { Serve(); });
    }
    ~HeldSource()
    {
        Release();
        shutdown(fd_, SHUT_RDWR);
        thread_.join();
        close(fd_);
    }
    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
    int port() const { return port_; }
    // Waits (at most 10 s) for the DATA_GET: the port the puller connected
    // from, or 0.
    int WaitAsked()
    {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait_for(lock, std::chrono::seconds(10), [this] { return asked_from_ != 0; });
        return asked_from_;
    }
    void Release()
    {
        std::lock_guard<std::mutex> lock(mu_);
        released_ = true;
        cv_.notify_all();
    }

  private:
    void Serve()
    {
        msg_conn c;
        uint32_t id;
        sockaddr_in peer = {};
        if (ReadOneGet(fd_, 10, "held", &c, &id, &peer) != 0) return;
        {
            std::unique_lock<std::mutex> lock(mu_);
            asked_from_ = ntohs(peer.sin_port);
            cv_.notify_all();
            cv_.wait_for(lock, std::chrono::seconds(10), [this] { return released_; });
        }
        err_t err;
        std::vector<double> v = {1, 2, 3, 4};
        msg_data_shape s = {NUMRPC_T_DOUBLE, 4, 1, 4};
        iface_param p;
        iface_shape sh;
        msg_data_as_param(&s, &p, &sh);
        msg_write_data_get_reply_header(&c.writer, id, &s, &err);
        marshal_write_block(&c.writer, &p, &sh, v.data(), &err);
        wire_end(&c.writer, &err);
        msg_conn_free(&c);
    }
    int fd_ = -1, port_ = 0;
    std::thread thread_;
    std::mutex mu_;
    std::condition_variable cv_;
    int asked_from_ = 0;
    bool released_ = false;
};

// The inode of the IPv4 TCP socket from 127.0.0.1:local to 127.0.0.1:remote
// (/proc/net/tcp), or 0.
unsigned long TcpInode(int local, int remote)
{
    std::ifstream in("/proc/net/tcp");
    std::string line;
    std::getline(in, line); // the heading
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string slot, l, r, st, queues, timer, retr, uid, timeout;
        unsigned long inode = 0;
        f >> slot >> l >> r >> st >> queues >> timer >> retr >> uid >> timeout >> inode;
        auto port = [](const std::string &a) { return static_cast<int>(strtol(a.substr(a.find(':') + 1).c_str(), nullptr, 16)); };
        if (l.rfind("0100007F:", 0) == 0 && r.rfind("0100007F:", 0) == 0 && port(l) == local && port(r) == remote)
            return inode;
    }
    return 0;
}

// The processes holding socket inode open (every readable /proc/PID/fd).
std::set<pid_t> Holders(unsigned long inode)
{
    std::set<pid_t> out;
    const std::string want = "socket:[" + std::to_string(inode) + "]";
    DIR *proc = opendir("/proc");
    for (dirent *e; proc && (e = readdir(proc)) != nullptr;) {
        pid_t pid = static_cast<pid_t>(atoi(e->d_name));
        if (pid <= 0) continue;
        std::string dir = "/proc/" + std::string(e->d_name) + "/fd";
        DIR *fds = opendir(dir.c_str());
        for (dirent *f; fds && (f = readdir(fds)) != nullptr;) {
            char target[64];
            ssize_t n = readlink((dir + "/" + f->d_name).c_str(), target, sizeof target - 1);
            if (n > 0 && std::string(target, static_cast<size_t>(n)) == want) out.insert(pid);
        }
        if (fds) closedir(fds);
    }
    if (proc) closedir(proc);
    return out;
}

class HandleMoves : public ::testing::Test {
  protected:
    static void SetUpTestSuite()
    {
        src_ = new ServerProc();
        doomed_ = new ServerProc();
        liar_ = new LyingSource();
        held_ = new HeldSource();
        dst_ = new ServerProc({"--pull-from", src_->address() + "," + doomed_->address() + "," + liar_->address() +
                                                  "," + held_->address(),
                               "--handle-ticket-ms", "200", "--handle-bytes", "100000000"});
    }
    static void TearDownTestSuite()
    {
        numrpc_finalize();
        delete dst_;
        delete held_;
        delete liar_;
        delete doomed_;
        delete src_;
    }
    void SetUp() override
    {
        std::string servers = dst_->address();
        numrpc_config cfg{servers.c_str(), 0, nullptr, nullptr, nullptr, nullptr, nullptr};
        ASSERT_EQ(numrpc_init(&cfg), NUMRPC_OK) << numrpc_last_error_detail();
    }
    static ServerProc *src_, *doomed_, *dst_;
    static LyingSource *liar_;
    static HeldSource *held_;
};
ServerProc *HandleMoves::src_ = nullptr;
ServerProc *HandleMoves::doomed_ = nullptr;
ServerProc *HandleMoves::dst_ = nullptr;
LyingSource *HandleMoves::liar_ = nullptr;
HeldSource *HandleMoves::held_ = nullptr;

// C = A B with A on src and B (more bytes) on dst: the call runs where B is,
// and A is copied there server to server, never through the client; the
// copy is freed after the call (an async call: once it is waited).
void MultiplyAcrossServers(ServerProc *src, ServerProc *dst, int m, int k, int n, bool async)
{
    std::vector<double> a(m * k), b(k * n), c(m * n, 0.0), want(m * n, 0.0);
    for (int i = 0; i < m * k; i++) a[i] = std::sin(0.3 * i + m);
    for (int i = 0; i < k * n; i++) b[i] = std::cos(0.05 * i + n);
    numrpc_data *ha = nullptr, *hb = nullptr;
    ASSERT_EQ(numrpc_data_put(&ha, src->address().c_str(), NUMRPC_T_DOUBLE, a.data(), m, k, m), NUMRPC_OK)
        << numrpc_last_error_detail();
    ASSERT_EQ(numrpc_data_put(&hb, dst->address().c_str(), NUMRPC_T_DOUBLE, b.data(), k, n, k), NUMRPC_OK)
        << numrpc_last_error_detail();
    msg_status before_src = StatusOf(*src), before_dst = StatusOf(*dst);
    ASSERT_TRUE(before_dst.has_moves);
    if (async) {
        int id = 0;
        ASSERT_EQ(numrpc_call_async(&id, "dgemm", 'N', 'N', m, n, k, 1.0, ha, m, hb, k, 0.0, c.data(), m),
                  NUMRPC_OK)
            << numrpc_last_error_detail();
        EXPECT_EQ(StatusOf(*dst).handles, 2u) << "A's copy is on B's server until the call is waited";
        ASSERT_EQ(numrpc_wait(id), NUMRPC_OK) << numrpc_last_error_detail();
    } else {
        ASSERT_EQ(numrpc_call("dgemm", 'N', 'N', m, n, k, 1.0, ha, m, hb, k, 0.0, c.data(), m), NUMRPC_OK)
            << numrpc_last_error_detail();
        numrpc_call_info info;
        numrpc_last_call_info(&info);
        EXPECT_EQ(std::string(info.server), dst->address());
        const uint64_t c_bytes = sizeof(double) * m * n;
        EXPECT_LT(info.bytes_sent, c_bytes + 4096) << "C (inout) goes out, A does not";
        EXPECT_LT(info.bytes_received, c_bytes + 4096);
    }
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a.data(), m, b.data(), k, 0.0,
                want.data(), m);
    for (int i = 0; i < m * n; i++) ASSERT_NEAR(c[i], want[i], 1e-12 * (1 + std::fabs(want[i]))) << i;
    const uint64_t a_bytes = sizeof(double) * m * k;
    // The source counts the bytes it lent once its reply is out, which may
    // be just after the call returns here: wait for it (bounded).
    msg_status after_src = StatusOf(*src);
    for (int i = 0; i < 200 && after_src.lent_bytes - before_src.lent_bytes < a_bytes; i++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        after_src = StatusOf(*src);
    }
    msg_status after_dst = StatusOf(*dst);
    EXPECT_EQ(after_dst.pulled_bytes - before_dst.pulled_bytes, a_bytes);
    EXPECT_EQ(after_src.lent_bytes - before_src.lent_bytes, a_bytes);
    EXPECT_EQ(after_dst.handles, 1u) << "A's copy was freed after the call";
    EXPECT_EQ(numrpc_data_free(ha), NUMRPC_OK);
    EXPECT_EQ(numrpc_data_free(hb), NUMRPC_OK);
}

TEST_F(HandleMoves, InHandlesOnTwoServersMoveBetweenThemNotThroughTheClient)
{
    MultiplyAcrossServers(src_, dst_, 40, 96, 96, false);
}

// The same through numrpc_call_async: the copy is made at submission.
TEST_F(HandleMoves, AnAsyncCallMovesItsHandlesToo)
{
    MultiplyAcrossServers(src_, dst_, 24, 64, 64, true);
}

TEST_F(HandleMoves, WrittenHandlesOnTwoServersAreRefused)
{
    const int n = 6;
    numrpc_data *ha = nullptr, *hp = nullptr;
    ASSERT_EQ(numrpc_data_new(&ha, src_->address().c_str(), NUMRPC_T_DOUBLE, n, n, n), NUMRPC_OK);
    ASSERT_EQ(numrpc_data_new(&hp, dst_->address().c_str(), NUMRPC_T_INT, n, 1, n), NUMRPC_OK);
    int info = -1;
    EXPECT_EQ(numrpc_call("dgefa", ha, n, n, hp, &info), NUMRPC_EINVAL);
    std::string why = numrpc_last_error_detail();
    EXPECT_NE(why.find("writes handles on two servers"), std::string::npos) << why;
    EXPECT_EQ(numrpc_data_free(ha), NUMRPC_OK);
    EXPECT_EQ(numrpc_data_free(hp), NUMRPC_OK);
}

TEST_F(HandleMoves, AKilledSourceIsAClearError)
{
    const int n = 16;
    std::vector<double> a(n * n, 1.0), b(n * n * 4, 2.0), c(n * n * 2, 0.0);
    numrpc_data *ha = nullptr, *hb = nullptr;
    ASSERT_EQ(numrpc_data_put(&ha, doomed_->address().c_str(), NUMRPC_T_DOUBLE, a.data(), n, n, n), NUMRPC_OK);
    ASSERT_EQ(numrpc_data_put(&hb, dst_->address().c_str(), NUMRPC_T_DOUBLE, b.data(), n, 4 * n, n), NUMRPC_OK);
    uint64_t held = StatusOf(*dst_).handles;
    kill(doomed_->pid(), SIGKILL);
    doomed_->stop();
    int rc = numrpc_call("dgemm", 'N', 'N', n, 2 * n, n, 1.0, ha, n, hb, n, 0.0, c.data(), n);
    EXPECT_EQ(rc, NUMRPC_ECONNECT) << numrpc_errname(rc);
    std::string why = numrpc_last_error_detail();
    EXPECT_NE(why.find("moving handle "), std::string::npos) << why;
    EXPECT_NE(why.find("from " + doomed_->address()), std::string::npos) << why;
    EXPECT_EQ(StatusOf(*dst_).handles, held) << "nothing was left on the target";
    numrpc_data_free(ha);
    EXPECT_EQ(numrpc_data_free(hb), NUMRPC_OK);
}

TEST_F(HandleMoves, ATicketIsGoodOnceAndBriefly)
{
    Raw raw(dst_->port());
    std::vector<double> v = {1, 2, 3, 4, 5}, got;
    msg_data_id id = raw.Put(v), ticket, forged;
    ASSERT_EQ(raw.Grant(id, &ticket), 0) << raw.err.detail;
    Raw other(dst_->port()); // anyone holding it may use it, once
    ASSERT_EQ(other.Get(ticket, &got), 0) << other.err.detail;
    EXPECT_EQ(got, v);
    EXPECT_EQ(other.Get(ticket, &got), NUMRPC_ENOHANDLE) << "used twice";
    memset(forged.b, 0x5a, sizeof forged.b);
    EXPECT_EQ(other.Get(forged, &got), NUMRPC_ENOHANDLE) << "forged";
    ASSERT_EQ(raw.Grant(id, &ticket), 0) << raw.err.detail;
    std::this_thread::sleep_for(std::chrono::milliseconds(400)); // --handle-ticket-ms 200
    EXPECT_EQ(other.Get(ticket, &got), NUMRPC_ENOHANDLE) << "expired";
    EXPECT_EQ(raw.Get(id, &got), 0) << "the handle itself stays";
}

TEST_F(HandleMoves, HostilePullsAreRefusedAndLeaveNothing)
{
    Raw at_src(src_->port()), at_dst(dst_->port());
    std::vector<double> v(10, 3.0);
    msg_data_id id = at_src.Put(v), ticket;
    uint64_t held = StatusOf(*dst_).handles;
    msg_data_shape shape = {NUMRPC_T_DOUBLE, 10, 1, 10};
    // A source the target was not told to trust.
    ASSERT_EQ(at_src.Grant(id, &ticket), 0);
    EXPECT_EQ(at_dst.Pull("127.0.0.1:1", ticket, shape), NUMRPC_EAUTH);
    EXPECT_NE(std::string(at_dst.err.detail).find("--pull-from"), std::string::npos) << at_dst.err.detail;
    // An absurd shape: refused by the budget before any connection.
    msg_data_shape absurd = {NUMRPC_T_DOUBLE, 1u << 20, 1u << 20, 1u << 20};
    EXPECT_EQ(at_dst.Pull(src_->address(), ticket, absurd), NUMRPC_ELIMIT) << at_dst.err.detail;
    // A shape other than the handle's: the source's answer is refused.
    msg_data_shape smaller = {NUMRPC_T_DOUBLE, 5, 1, 5};
    EXPECT_EQ(at_dst.Pull(src_->address(), ticket, smaller), NUMRPC_EPROTO) << at_dst.err.detail;
    EXPECT_NE(std::string(at_dst.err.detail).find("announced"), std::string::npos) << at_dst.err.detail;
    // The ticket was used by that attempt; a forged one is refused by the source.
    EXPECT_EQ(at_dst.Pull(src_->address(), ticket, shape), NUMRPC_ENOHANDLE) << at_dst.err.detail;
    // A source that sends more elements than its shape.
    msg_data_shape four = {NUMRPC_T_DOUBLE, 4, 1, 4};
    EXPECT_EQ(at_dst.Pull(liar_->address(), ticket, four), NUMRPC_EPROTO) << at_dst.err.detail;
    EXPECT_EQ(StatusOf(*dst_).handles, held);
    EXPECT_TRUE(StatusOf(*dst_).has_handles) << "the target is still serving";
}

// Issue 27: the worker serving a DATA_PULL never opens the connection to
// the source (a sandbox will deny it sockets): while the source holds its
// answer, the socket of that connection is no descriptor of the worker
// holding the client's connection, nor of the dispatcher; another process
// of the server (the pull broker's) holds it.
TEST_F(HandleMoves, TheWorkerServingAPullNeverConnectsToTheSource)
{
    Raw at_dst(dst_->port());
    sockaddr_in mine = {};
    socklen_t len = sizeof mine;
    ASSERT_EQ(getsockname(msg_conn_fd(&at_dst.c), reinterpret_cast<sockaddr *>(&mine), &len), 0);
    msg_data_id ticket, made = {};
    memset(ticket.b, 0x42, sizeof ticket.b);
    msg_data_shape four = {NUMRPC_T_DOUBLE, 4, 1, 4};
    int rc = -1;
    std::thread puller([&] { rc = at_dst.Pull(held_->address(), ticket, four, &made); });
    int from = held_->WaitAsked();
    if (from == 0) held_->Release();
    ASSERT_NE(from, 0) << "the source was never asked";
    // The server's end of the client's connection: the dispatcher's and the
    // worker's serving the pull.
    std::set<pid_t> serving = Holders(TcpInode(dst_->port(), ntohs(mine.sin_port)));
    serving.erase(dst_->pid());
    std::set<pid_t> fetching = Holders(TcpInode(from, held_->port()));
    held_->Release();
    puller.join();
    ASSERT_FALSE(serving.empty()) << "no worker holds the client's connection";
    ASSERT_FALSE(fetching.empty()) << "no process holds the connection to the source";
    for (pid_t p : fetching) {
        EXPECT_EQ(serving.count(p), 0u) << "worker " << p << " opened the connection to the source";
        EXPECT_NE(p, dst_->pid()) << "the dispatcher opened the connection to the source";
    }
    ASSERT_EQ(rc, 0) << at_dst.err.detail;
    std::vector<double> got;
    ASSERT_EQ(at_dst.Get(made, &got), 0) << at_dst.err.detail;
    EXPECT_EQ(got, (std::vector<double>{1, 2, 3, 4}));
}

} // namespace
