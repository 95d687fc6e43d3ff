// meta_events_test.cc -- the metaserver's events with real processes: `numrpc
// watch` and numrpc_watch see a server join, register, drain and leave; types
// filter; tokens need `status`; hostile SUBSCRIBEs; a subscriber that never
// reads is dropped and does not slow queries.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../support/meta_proc.h"
#include "../support/server_proc.h"
#include "../support/token_dir.h"

extern "C" {
#include "auth.h"
#include "msg.h"
#include "msg_event.h"
#include "msg_meta.h"
#include "numrpc.h"
#include "protocol.h"
#include "sock.h"
#include "stubmod.h"
#include "transport.h"
}

namespace {

const std::string kMeta = TOP_BUILDDIR "/metaserver/numrpc-metaserver";
const std::string kServer = TOP_BUILDDIR "/server/numrpc-server";
const std::string kCli = TOP_BUILDDIR "/cli/numrpc";

// What a register event says of a module: "N routine(s): a b ...", from
// the module's own stub table (dlopen), in the table's order.
std::string routines_said(const std::string &module)
{
    void *h = dlopen(module.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) return std::string("dlopen failed: ") + dlerror();
    const stub_module *m = static_cast<const stub_module *>(dlsym(h, NUMRPC_STUB_SYMBOL));
    std::string names;
    for (size_t i = 0; m != nullptr && i < m->count; i++) names += (i ? " " : "") + std::string(m->entries[i].name);
    size_t n = m ? m->count : 0;
    dlclose(h);
    return std::to_string(n) + (n == 1 ? " routine: " : " routines: ") + names;
}

std::unique_ptr<Proc> start_meta(const std::vector<std::string> &extra = {})
{
    std::vector<std::string> args = {kMeta, "--port", "0", "--quiet", "--drop-after", "1.5", "--lease-ms", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<Proc>(args);
}

std::string label(int port)
{
    return "127.0.0.1:" + std::to_string(port);
}

// A child process whose stdout (and stderr) the test reads, line by line.
class Child {
  public:
    Child(const std::vector<std::string> &args, const std::vector<std::string> &env = {})
    {
        int out[2];
        if (pipe(out) != 0) return;
        pid_ = fork();
        if (pid_ == 0) {
            dup2(out[1], 1);
            dup2(out[1], 2);
            close(out[0]);
            for (const std::string &e : env) putenv(const_cast<char *>(e.c_str()));
            std::vector<char *> argv;
            for (auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
            argv.push_back(nullptr);
            execv(argv[0], argv.data());
            _exit(127);
        }
        close(out[1]);
        fd_ = out[0];
    }
    ~Child()
    {
        if (pid_ > 0) stop_process(pid_, SIGKILL, 100);
        if (fd_ >= 0) close(fd_);
    }
    // Everything it writes until it exits (at most `seconds`); its exit code.
    int finish(std::string *text, double seconds = 15)
    {
        auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds((int)(seconds * 1000));
        char buf[4096];
        while (std::chrono::steady_clock::now() < end) {
            pollfd p = {fd_, POLLIN, 0};
            if (poll(&p, 1, 100) <= 0) continue;
            ssize_t n = read(fd_, buf, sizeof buf);
            if (n <= 0) break;
            text->append(buf, (size_t)n);
        }
        int st = 0;
        for (int i = 0; i < 500 && waitpid(pid_, &st, WNOHANG) == 0; i++)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (waitpid(pid_, &st, WNOHANG) == 0) return -1; /* still running: the destructor kills it */
        pid_ = -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    }

  private:
    pid_t pid_ = -1;
    int fd_ = -1;
};

std::vector<std::string> lines_of(const std::string &text)
{
    std::vector<std::string> out;
    size_t at = 0;
    for (size_t nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) out.push_back(text.substr(at, nl - at));
    return out;
}

// A raw connection to the metaserver, from 127.0.0.1, as a subscriber,
// a fake server or a client speaks: HELLO (with a token file's proof),
// then any message; rcvbuf > 0 shrinks its receive buffer first.
class Raw {
  public:
    explicit Raw(int port, const std::string &token_file = "", int rcvbuf = 0)
    {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (rcvbuf > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
        sockaddr_in to = {};
        to.sin_family = AF_INET;
        to.sin_port = htons((uint16_t)port);
        to.sin_addr.s_addr = htonl(0x7f000001);
        sock_set_timeouts(fd, 5000, 5000);
        ok_ = connect(fd, (sockaddr *)&to, sizeof to) == 0 && msg_conn_init(&c_, PROTO_DEFAULT_PACKET, &err_) == 0;
        if (ok_) msg_conn_attach(&c_, transport_tcp(fd), "raw");
        else close(fd);
        msg_hello h = {};
        h.version = PROTO_VERSION;
        h.packet_size = PROTO_DEFAULT_PACKET;
        snprintf(h.peer, sizeof h.peer, "meta_events_test");
        uint32_t id = next(), auth_id = next();
        int proving = 0;
        int rc = ok_ ? auth_client_hello_file(&c_, token_file.empty() ? nullptr : token_file.c_str(), &h, id, auth_id,
                                              &proving, &err_)
                     : NUMRPC_ECONNECT;
        if (ok_) wire_reader_set_deadline(&c_.reader, sock_now() + 5);
        if (rc == 0 && proving) {
            rc = auth_client_finish(&c_, auth_id, &err_);
        } else if (rc == 0) {
            rc = msg_write_hello(&c_.writer, id, &h, &err_);
            if (rc == 0) rc = msg_read_hello_reply(&c_.reader, id, "raw", &h, &err_);
        }
        hello_rc_ = rc;
    }
    ~Raw()
    {
        if (ok_) msg_conn_free(&c_);
    }
    int hello_rc() const { return hello_rc_; }
    // SUBSCRIBE with mask, then its reply's status.
    int subscribe(uint32_t mask)
    {
        uint32_t id = sub_ = next();
        int rc = msg_write_meta_subscribe(&c_.writer, id, mask, &err_);
        return rc == 0 ? reply(id) : rc;
    }
    // A SUBSCRIBE whose body is the bytes given (a hostile one), then its reply.
    int subscribe_raw(const std::vector<uint8_t> &body)
    {
        uint32_t id = next();
        wire_begin(&c_.writer, PROTO_META_SUBSCRIBE, id);
        int rc = body.empty() ? 0 : wire_put(&c_.writer, body.data(), body.size(), &err_);
        if (rc == 0) rc = wire_end(&c_.writer, &err_);
        return rc == 0 ? reply(id) : rc;
    }
    // The next event of the subscription (within 5 s).
    int event(msg_event *e)
    {
        uint32_t type, id;
        wire_reader_set_deadline(&c_.reader, sock_now() + 5);
        int rc = wire_next_message(&c_.reader, &type, &id, &err_);
        if (rc == 0 && (type != PROTO_META_EVENT || id != sub_)) return NUMRPC_EPROTO;
        return rc == 0 ? msg_read_meta_event(&c_.reader, e, &err_) : rc;
    }
    // JOIN as a server at 127.0.0.1:port with no routines.
    int join(int port)
    {
        msg_meta_join j = {};
        snprintf(j.host, sizeof j.host, "127.0.0.1");
        j.port = (uint32_t)port;
        snprintf(j.name, sizeof j.name, "fake\x1b[31m server"); // a terminal escape, cleaned
        j.slots = 2;
        j.curve.npoints = 1;
        j.curve.n[0] = 512;
        j.curve.rate[0] = 1e9;
        uint32_t id = next();
        msg_meta_joined joined;
        int rc = msg_write_meta_join(&c_.writer, id, &j, &err_);
        if (rc == 0) rc = msg_read_reply(&c_.reader, id, "raw", &err_);
        return rc == 0 ? msg_read_meta_join_reply(&c_.reader, &joined, &err_) : rc;
    }
    int load(uint32_t queued, uint32_t draining)
    {
        msg_meta_load l = {.in_flight = 0, .queued = queued, .draining = draining, .loadavg = 0};
        return msg_write_meta_load(&c_.writer, next(), &l, &err_);
    }
    // A QUERY for a data handle's place (any server).
    int query()
    {
        msg_meta_query q = {};
        q.bytes_in = 1000;
        q.max_servers = 4;
        msg_meta_ranked got[4];
        uint32_t id = next(), lease = 0, n = 0;
        int rc = msg_write_meta_query(&c_.writer, id, &q, &err_);
        if (rc == 0) rc = msg_read_reply(&c_.reader, id, "raw", &err_);
        return rc == 0 ? msg_read_meta_query_reply(&c_.reader, &lease, got, 4, &n, &err_) : rc;
    }
    int status(std::string *text)
    {
        uint32_t id = next();
        char *got = nullptr;
        int rc = msg_write_meta_status(&c_.writer, id, MSG_META_STATUS_JSON, &err_);
        if (rc == 0) rc = reply(id);
        if (rc == 0) rc = msg_read_meta_status_reply(&c_.reader, &got, &err_);
        if (rc == 0) *text = got;
        free(got);
        return rc;
    }
    // True when the metaserver closes the connection within 5 s.
    bool closed()
    {
        pollfd p = {msg_conn_fd(&c_), POLLIN, 0};
        char b[4096];
        for (int i = 0; i < 50; i++) {
            if (poll(&p, 1, 100) != 1) continue;
            ssize_t n = recv(p.fd, b, sizeof b, 0);
            if (n <= 0) return true;
        }
        return false;
    }
    std::string detail() const { return err_.detail; }

  private:
    int reply(uint32_t id)
    {
        wire_reader_set_deadline(&c_.reader, sock_now() + 5);
        int rc = msg_read_reply(&c_.reader, id, "raw", &err_);
        if (rc == 0 && wire_reader_type(&c_.reader) == PROTO_REPLY && wire_reader_in_message(&c_.reader) &&
            wire_reader_call_id(&c_.reader) == id && sub_ == id)
            rc = wire_expect_end(&c_.reader, &err_);
        return rc;
    }
    uint32_t next() { return ++id_; }
    bool ok_ = false;
    int hello_rc_ = NUMRPC_ECONNECT;
    msg_conn c_ = {};
    err_t err_ = {};
    uint32_t id_ = 0, sub_ = 0;
};

// A number of the metaserver's status JSON ("key":N), -1 when absent.
long status_number(int port, const std::string &key, const std::string &token_file = "")
{
    Raw r(port, token_file);
    std::string js;
    if (r.hello_rc() != 0 || r.status(&js) != 0) return -1;
    size_t at = js.find("\"" + key + "\":");
    return at == std::string::npos ? -1 : std::atol(js.c_str() + at + key.size() + 3);
}

// Waits (bounded) until the metaserver counts n subscribers.
bool wait_subscribers(int port, long n, const std::string &token_file = "")
{
    for (int i = 0; i < 500; i++) {
        if (status_number(port, "subscribers", token_file) == n) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

// What numrpc_watch hands its function, kept as lines.
struct Seen {
    std::mutex m;
    std::vector<std::string> lines;
};

int keep_event(const numrpc_event *e, void *arg)
{
    Seen *s = static_cast<Seen *>(arg);
    std::lock_guard<std::mutex> g(s->m);
    s->lines.push_back(std::string(e->type) + " " + e->server + " " + e->routine + " " + e->detail);
    return std::string(e->type) == "leave"; // stops after the server left
}

TEST(MetaEvents, WatchSeesAServerJoinRegisterDrainAndLeave)
{
    std::string module = TOP_BUILDDIR "/bench/.libs/benchsink.so";
    struct stat st;
    if (stat(module.c_str(), &st) != 0) GTEST_SKIP() << "no " << module << " in this build";
    auto meta = start_meta();
    ASSERT_GT(meta->port(), 0);
    std::string where = label(meta->port());
    Child all({kCli, "watch", "--metaserver", where, "--count", "4", "--seconds", "20"});
    Child leaves({kCli, "watch", "--metaserver", where, "--types", "leave", "--count", "1", "--seconds", "20"});
    Seen seen;
    int watch_rc = -100;
    std::thread api([&] { watch_rc = numrpc_watch(where.c_str(), "join,register,drain,leave", keep_event, &seen, 20); });
    ASSERT_TRUE(wait_subscribers(meta->port(), 3));

    char dir[] = "/tmp/numrpc-events-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    std::string sock = std::string(dir) + "/admin.sock";
    auto server = std::make_unique<Proc>(std::vector<std::string>{
        kServer, "--port", "0", "--bind", "127.0.0.1", "--stubs", TOP_BUILDDIR "/stubs/.libs", "--quiet", "--workers",
        "1", "--blas-threads", "1", "--admin-socket", sock, "--metaserver", where});
    ASSERT_GT(server->port(), 0);
    std::string me = label(server->port());
    for (int i = 0; i < 500 && status_number(meta->port(), "events_published") < 1; i++) // joined
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::string cmd = kServer + " admin --socket " + sock + " register " + module + " >/dev/null 2>&1";
    ASSERT_EQ(system(cmd.c_str()), 0);
    for (int i = 0; i < 500 && status_number(meta->port(), "events_published") < 2; i++) // registered
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    server->stop(SIGTERM); // drains, then leaves

    std::string text, only;
    EXPECT_EQ(all.finish(&text), 0) << text;
    std::vector<std::string> got = lines_of(text);
    ASSERT_EQ(got.size(), 4u) << text;
    EXPECT_EQ(got[0].rfind("join " + me + " ", 0), 0u) << text;
    EXPECT_EQ(got[1].rfind("register " + me + " ", 0), 0u) << text;
    const std::string said = routines_said(module);
    EXPECT_NE(got[1].find("module=benchsink " + said), std::string::npos) << text;
    EXPECT_EQ(got[2].rfind("drain " + me + " ", 0), 0u) << text;
    EXPECT_EQ(got[3].rfind("leave " + me + " ", 0), 0u) << text;
    EXPECT_NE(got[3].find("connection closed"), std::string::npos) << text;

    EXPECT_EQ(leaves.finish(&only), 0) << only;
    EXPECT_EQ(lines_of(only).size(), 1u) << only;
    EXPECT_EQ(only.rfind("leave " + me + " ", 0), 0u) << only;

    api.join();
    EXPECT_EQ(watch_rc, NUMRPC_OK) << numrpc_last_error_detail();
    ASSERT_EQ(seen.lines.size(), 4u);
    EXPECT_EQ(seen.lines[0].rfind("join " + me + "  ", 0), 0u) << seen.lines[0];
    EXPECT_EQ(seen.lines[1], "register " + me + " benchsink " + said);
    EXPECT_EQ(seen.lines[2].rfind("drain " + me + "  ", 0), 0u) << seen.lines[2];
    EXPECT_EQ(seen.lines[3], "leave " + me + "  connection closed");
    std::string rm = std::string("rm -rf ") + dir;
    ASSERT_EQ(system(rm.c_str()), 0);
}

TEST(MetaEvents, NamesAreCheckedBeforeAnythingIsSent)
{
    Seen seen;
    EXPECT_EQ(numrpc_watch("127.0.0.1:1", "join,lave", keep_event, &seen, 1), NUMRPC_EINVAL);
    EXPECT_NE(std::string(numrpc_last_error_detail()).find("unknown event type \"lave\""), std::string::npos)
        << numrpc_last_error_detail();
    EXPECT_EQ(numrpc_watch("127.0.0.1:1", nullptr, nullptr, nullptr, 1), NUMRPC_EINVAL);
}

// Overload once per crossing of --overload-queue; undrain; a server's
// name is cleaned of control characters.
TEST(MetaEvents, OverloadIsToldOncePerCrossing)
{
    auto meta = start_meta({"--overload-queue", "3"});
    ASSERT_GT(meta->port(), 0);
    Raw sub(meta->port());
    ASSERT_EQ(sub.hello_rc(), NUMRPC_OK) << sub.detail();
    ASSERT_EQ(sub.subscribe((1u << MSG_EVENT_JOIN) | (1u << MSG_EVENT_OVERLOAD) | (1u << MSG_EVENT_UNDRAIN)),
              NUMRPC_OK)
        << sub.detail();
    Raw fake(meta->port());
    ASSERT_EQ(fake.join(40001), NUMRPC_OK) << fake.detail();
    for (uint32_t q : {2u, 4u, 5u, 9u, 1u, 4u}) ASSERT_EQ(fake.load(q, 0), NUMRPC_OK);
    ASSERT_EQ(fake.load(0, 1), NUMRPC_OK);
    ASSERT_EQ(fake.load(0, 0), NUMRPC_OK);
    msg_event e;
    ASSERT_EQ(sub.event(&e), NUMRPC_OK) << sub.detail();
    EXPECT_EQ(e.type, (uint32_t)MSG_EVENT_JOIN);
    EXPECT_STREQ(e.server, "127.0.0.1:40001");
    EXPECT_STREQ(e.name, "fake?[31m server");
    ASSERT_EQ(sub.event(&e), NUMRPC_OK) << sub.detail();
    EXPECT_EQ(e.type, (uint32_t)MSG_EVENT_OVERLOAD);
    EXPECT_STREQ(e.detail, "4 requests queued, more than 3");
    ASSERT_EQ(sub.event(&e), NUMRPC_OK) << sub.detail();
    EXPECT_EQ(e.type, (uint32_t)MSG_EVENT_OVERLOAD);
    EXPECT_STREQ(e.detail, "4 requests queued, more than 3"); // after going down to 1
    ASSERT_EQ(sub.event(&e), NUMRPC_OK) << sub.detail();
    EXPECT_EQ(e.type, (uint32_t)MSG_EVENT_UNDRAIN);
}

TEST(MetaEvents, ASubscriptionNeedsTheStatusRight)
{
    TokenDir dir;
    const char *stat_secret = "445566778899aabbccddeeff00112233", *cli_secret = "33445566778899aabbccddeeff001122";
    std::string table = dir.Write("meta.tokens", std::string("stat ") + stat_secret + " status\ncli " + cli_secret +
                                                     " call\n");
    std::string stat_file = dir.Write("stat.token", std::string("stat ") + stat_secret + "\n");
    std::string cli_file = dir.Write("cli.token", std::string("cli ") + cli_secret + "\n");
    auto meta = start_meta({"--token-file", table});
    ASSERT_GT(meta->port(), 0);
    {
        Raw r(meta->port(), cli_file);
        ASSERT_EQ(r.hello_rc(), NUMRPC_OK) << r.detail();
        EXPECT_EQ(r.subscribe(MSG_EVENT_ALL), NUMRPC_EAUTH);
        EXPECT_EQ(r.detail(), "token cli may not subscribe to this metaserver's events");
        EXPECT_TRUE(r.closed());
    }
    {
        Raw r(meta->port()); // no token: refused at HELLO
        EXPECT_EQ(r.hello_rc(), NUMRPC_EAUTH) << r.detail();
        EXPECT_TRUE(r.closed());
    }
    std::string where = label(meta->port());
    Child refused({kCli, "watch", "--metaserver", where, "--seconds", "5"}, {"NUMRPC_TOKEN_FILE=" + cli_file});
    std::string text;
    EXPECT_EQ(refused.finish(&text), 1) << text;
    EXPECT_NE(text.find("token cli may not subscribe to this metaserver's events (NUMRPC_EAUTH)"), std::string::npos)
        << text;
    Child allowed({kCli, "watch", "--metaserver", where, "--seconds", "0.5"}, {"NUMRPC_TOKEN_FILE=" + stat_file});
    text.clear();
    EXPECT_EQ(allowed.finish(&text), 0) << text;
    EXPECT_EQ(text, "");
}

TEST(MetaEvents, HostileSubscribesGetAClearError)
{
    auto meta = start_meta();
    ASSERT_GT(meta->port(), 0);
    struct Case {
        std::vector<uint8_t> body;
        int code;
        const char *detail;
    } cases[] = {
        {{0, 0, 0, 0}, NUMRPC_EINVAL, "SUBSCRIBE: no event type asked for (mask 0)"},
        {{0x80, 0, 0, 1}, NUMRPC_EPROTO, "SUBSCRIBE: unknown event types in mask 0x80000001 (known: 0x7f)"},
        {{}, NUMRPC_EPROTO, nullptr},                       // truncated: no mask
        {std::vector<uint8_t>(200000, 0x01), NUMRPC_EPROTO, nullptr}, // huge: bytes past the mask
    };
    for (const Case &c : cases) {
        Raw r(meta->port());
        ASSERT_EQ(r.hello_rc(), NUMRPC_OK) << r.detail();
        EXPECT_EQ(r.subscribe_raw(c.body), c.code) << r.detail();
        if (c.detail) {
            EXPECT_EQ(r.detail(), c.detail);
        } else {
            EXPECT_FALSE(r.detail().empty());
        }
        EXPECT_TRUE(r.closed());
    }
    // Nine subscribers of one identity: the ninth is refused.
    std::vector<std::unique_ptr<Raw>> subs;
    for (int i = 0; i < 8; i++) {
        subs.push_back(std::make_unique<Raw>(meta->port()));
        ASSERT_EQ(subs.back()->subscribe(MSG_EVENT_ALL), NUMRPC_OK) << subs.back()->detail();
    }
    Raw ninth(meta->port());
    EXPECT_EQ(ninth.subscribe(MSG_EVENT_ALL), NUMRPC_EBUSY);
    EXPECT_EQ(ninth.detail(), "127.0.0.1 has 8 event subscriptions on this metaserver already, the most one identity may");
    EXPECT_EQ(status_number(meta->port(), "subscribers"), 8); // the metaserver still answers
}

double quantile(std::vector<double> v, double q)
{
    std::sort(v.begin(), v.end());
    return v[(size_t)((double)v.size() * q)];
}

double p99(const std::vector<double> &v)
{
    return quantile(v, 0.99);
}

// A subscriber with a tiny receive buffer that never reads, while a server
// drains and undrains (two events a round trip): 1000 queries timed with
// it connected and 1000 without, interleaved in rounds.  Then it is
// dropped once its queue is full, and counted.
TEST(MetaEvents, ASubscriberThatNeverReadsIsDroppedAndDoesNotSlowQueries)
{
    auto meta = start_meta({"--drop-after", "60"}); // the fake servers send no heartbeats
    ASSERT_GT(meta->port(), 0);
    Raw fake(meta->port()), steady(meta->port()), client(meta->port());
    ASSERT_EQ(fake.join(40002), NUMRPC_OK) << fake.detail();
    ASSERT_EQ(steady.join(40003), NUMRPC_OK) << steady.detail();
    std::vector<double> with, without;
    auto round = [&](std::vector<double> *into) {
        for (int i = 0; i < 100; i++) {
            ASSERT_EQ(fake.load(0, (uint32_t)(i % 2 == 0)), NUMRPC_OK);
            double t0 = sock_now();
            ASSERT_EQ(client.query(), NUMRPC_OK) << client.detail();
            into->push_back(sock_now() - t0);
        }
    };
    for (int r = 0; r < 10; r++) {
        {
            Raw stuck(meta->port(), "", 1); // the kernel's smallest receive buffer
            ASSERT_EQ(stuck.subscribe(MSG_EVENT_ALL), NUMRPC_OK) << stuck.detail();
            // Its buffers fill (its queue does not, yet): it is stuck.
            for (int i = 0; i < 150; i++) ASSERT_EQ(fake.load(0, (uint32_t)(i % 2 == 0)), NUMRPC_OK);
            ASSERT_EQ(fake.query(), NUMRPC_OK) << fake.detail(); // the loads are read
            std::this_thread::sleep_for(std::chrono::milliseconds(50)); // and sent, as far as they go
            round(&with);
        }
        for (int i = 0; i < 150; i++) ASSERT_EQ(fake.load(0, (uint32_t)(i % 2 == 0)), NUMRPC_OK);
        ASSERT_EQ(fake.query(), NUMRPC_OK) << fake.detail();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        round(&without);
    }
    double ratio = p99(with) / p99(without);
    printf("query p99: %.1f us with a subscriber that never reads, %.1f us without (ratio %.2f); median %.1f us, "
           "%.1f us\n",
           p99(with) * 1e6, p99(without) * 1e6, ratio, quantile(with, 0.5) * 1e6, quantile(without, 0.5) * 1e6);
    if (getenv("NUMRPC_EVENTS_STRICT")) EXPECT_LT(ratio, 1.2);

    // Dropped once its queue (256 events) and its socket's small buffers
    // are full: well within 1000 events, and counted.
    long dropped0 = status_number(meta->port(), "subscribers_dropped");
    Raw stuck(meta->port(), "", 1);
    ASSERT_EQ(stuck.subscribe(MSG_EVENT_ALL), NUMRPC_OK) << stuck.detail();
    long published0 = status_number(meta->port(), "events_published"), dropped = dropped0;
    for (int i = 0; i < 5000 && dropped == dropped0; i++) {
        ASSERT_EQ(fake.load(0, (uint32_t)(i % 2 == 0)), NUMRPC_OK);
        if (i % 50 == 49) dropped = status_number(meta->port(), "subscribers_dropped");
    }
    EXPECT_EQ(dropped, dropped0 + 1);
    long events = status_number(meta->port(), "events_published") - published0;
    EXPECT_GT(events, 256);
    EXPECT_LT(events, 1000);
    printf("a subscriber that never reads was dropped after %ld events\n", events);
    EXPECT_TRUE(stuck.closed());
    EXPECT_TRUE(wait_subscribers(meta->port(), 0));
    Raw look(meta->port());
    std::string js;
    ASSERT_EQ(look.status(&js), NUMRPC_OK) << look.detail();
    EXPECT_NE(js.find("event subscriber 127.0.0.1 dropped: its queue of 256 events was full"), std::string::npos) << js;
    EXPECT_EQ(client.query(), NUMRPC_OK) << client.detail();
}

// EVENT as a hostile metaserver could write it: each field given, with
// extra bytes after it (tail); what msg_read_meta_event makes of it.
int read_crafted(uint32_t type, double time, const char *server, const char *name, const char *detail, bool tail,
                 msg_event *e, err_t *err)
{
    int fd[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, fd) != 0) return -1000;
    msg_conn out = {}, in = {};
    msg_conn_init(&out, 4096, err);
    msg_conn_init(&in, 4096, err);
    msg_conn_attach(&out, transport_tcp(fd[0]), "out");
    msg_conn_attach(&in, transport_tcp(fd[1]), "in");
    wire_begin(&out.writer, PROTO_META_EVENT, 7);
    int rc = wire_put_u32(&out.writer, type, err);
    if (rc == 0) rc = wire_put_double(&out.writer, time, err);
    if (rc == 0) rc = wire_put_u32(&out.writer, 1, err);
    if (rc == 0) rc = wire_put_string(&out.writer, server, err);
    if (rc == 0) rc = wire_put_string(&out.writer, name, err);
    if (rc == 0) rc = wire_put_string(&out.writer, "mod", err);
    if (rc == 0) rc = wire_put_string(&out.writer, detail, err);
    if (rc == 0 && tail) rc = wire_put_u32(&out.writer, 1, err);
    if (rc == 0) rc = wire_end(&out.writer, err);
    uint32_t t, id;
    if (rc == 0) rc = wire_next_message(&in.reader, &t, &id, err);
    if (rc == 0) rc = msg_read_meta_event(&in.reader, e, err);
    msg_conn_free(&out);
    msg_conn_free(&in);
    return rc;
}

TEST(MetaEventsMsg, TheReaderChecksEveryField)
{
    msg_event e;
    err_t err;
    ASSERT_EQ(read_crafted(MSG_EVENT_DRAIN, 1.7e9, "127.0.0.1:7800", "srv", "0 calls", false, &e, &err), 0)
        << err.detail;
    EXPECT_EQ(e.type, (uint32_t)MSG_EVENT_DRAIN);
    EXPECT_STREQ(e.server, "127.0.0.1:7800");
    EXPECT_STREQ(e.routine, "mod");
    EXPECT_STREQ(e.detail, "0 calls");
    EXPECT_EQ(read_crafted(7, 1.7e9, "127.0.0.1:7800", "srv", "", false, &e, &err), NUMRPC_EPROTO);
    EXPECT_STREQ(err.detail, "EVENT: unknown type 7");
    EXPECT_EQ(read_crafted(0, NAN, "127.0.0.1:7800", "srv", "", false, &e, &err), NUMRPC_EPROTO);
    EXPECT_EQ(read_crafted(0, -1, "127.0.0.1:7800", "srv", "", false, &e, &err), NUMRPC_EPROTO);
    EXPECT_EQ(read_crafted(0, 1.7e9, "host;rm -rf:80", "srv", "", false, &e, &err), NUMRPC_EPROTO);
    EXPECT_STREQ(err.detail, "EVENT: the server is not host:port");
    EXPECT_EQ(read_crafted(0, 1.7e9, "127.0.0.1:7800", "a\x1b]0;owned\x07", "", false, &e, &err), NUMRPC_EPROTO);
    EXPECT_STREQ(err.detail, "EVENT: control characters in its text");
    EXPECT_EQ(read_crafted(0, 1.7e9, "127.0.0.1:7800", "srv", "line\nforged", false, &e, &err), NUMRPC_EPROTO);
    EXPECT_NE(read_crafted(0, 1.7e9, "127.0.0.1:7800", "srv", std::string(300, 'x').c_str(), false, &e, &err), 0);
    EXPECT_NE(read_crafted(0, 1.7e9, "127.0.0.1:7800", "srv", "", true, &e, &err), 0);
    EXPECT_EQ(e.type, 0u); // nothing half read is left
    EXPECT_STREQ(e.server, "");

    uint32_t mask = 0;
    EXPECT_EQ(msg_event_mask_of("join,,overload", &mask, &err), 0);
    EXPECT_EQ(mask, (1u << MSG_EVENT_JOIN) | (1u << MSG_EVENT_OVERLOAD));
    EXPECT_EQ(msg_event_mask_of(nullptr, &mask, &err), 0);
    EXPECT_EQ(mask, MSG_EVENT_ALL);
    EXPECT_EQ(msg_event_mask_of(",", &mask, &err), NUMRPC_EINVAL);
    EXPECT_EQ(msg_event_mask_of("drain,Leave", &mask, &err), NUMRPC_EINVAL);
    EXPECT_EQ(std::string(err.detail).rfind("unknown event type \"Leave\"", 0), 0u) << err.detail;
}

} // namespace
