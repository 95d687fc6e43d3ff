// retry_rule_test.cc -- the one retry rule end to end: each way a first
// server can fail a call x blocking / async x listed / ranked gives one decision.
//
// The first server is a hostile one written here (or a closed port); the
// second a real numrpc-server.  A call that moves on returns dscal's answer
// from the real server; a call that is reported returns the first server's
// failure and never reaches the second.  The expected decisions are the
// table of docs/client.md "Failover", written out below, not derived from
// the library's code.
#include <cblas.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../support/meta_peer.h"
#include "../support/meta_proc.h"
#include "../support/server_proc.h"
#include "../support/status_probe.h"
#include "../support/test_util.h"
#include "hostile_peer.h"
#include "numrpc.h"

namespace {

const std::string kMeta = TOP_BUILDDIR "/metaserver/numrpc-metaserver";

// How the first server fails the call.
enum class Fault {
    Unreachable, // nothing listens
    Busy,        // EBUSY reply: refused
    Refused,     // EAUTH reply: this server does not accept the caller
    NotOffered,  // GET_IFACE: ENOENT
    Lost,        // the request read, then the connection closed
    Garbled,     // a status that is no outcome
    Stale,       // ESTALE each time: the interface changed, again and again
    Crash,       // ECRASHED
    Limit,       // ELIMIT
    RoutineError,// ESERVER: the routine's own error
    Deadline,    // no answer before the caller's time limit
    CutMidReply, // status OK, then the connection closed while results came
    SilentProbe, // never answers a link probe (a ranked call measures it), then EBUSY
};

struct Row {
    Fault fault;
    const char *name;
    int moves_on;  // 1: completes on the second server
    int code;      // else the call's code
};

// docs/client.md, "Failover".
const Row kTable[] = {
    {Fault::Unreachable, "Unreachable", 1, 0},
    {Fault::Busy, "Busy", 1, 0},
    {Fault::Refused, "Refused", 1, 0},
    {Fault::NotOffered, "NotOffered", 1, 0},
    {Fault::Lost, "Lost", 1, 0},
    {Fault::Garbled, "Garbled", 1, 0},
    {Fault::Stale, "Stale", 0, NUMRPC_ESTALE},
    {Fault::Crash, "Crash", 0, NUMRPC_ECRASHED},
    {Fault::Limit, "Limit", 0, NUMRPC_ELIMIT},
    {Fault::RoutineError, "RoutineError", 0, NUMRPC_ESERVER},
    {Fault::Deadline, "Deadline", 0, NUMRPC_ETIMEDOUT},
    {Fault::CutMidReply, "CutMidReply", 0, NUMRPC_EIO},
    {Fault::SilentProbe, "SilentProbe", 1, 0},
};

enum class Path { BlockingListed, AsyncListed, BlockingRanked, AsyncRanked };
const char *PathName(Path p)
{
    switch (p) {
    case Path::BlockingListed: return "BlockingListed";
    case Path::AsyncListed: return "AsyncListed";
    case Path::BlockingRanked: return "BlockingRanked";
    default: return "AsyncRanked";
    }
}

// An error reply with code to a CALL, as a server writes one.
void ReplyError(msg_conn *c, uint32_t id, int code, const char *detail)
{
    err_t err;
    msg_call_result res = {0, 0, 0};
    int rc = msg_reply_begin(&c->writer, id, code, detail, &err);
    if (rc == 0) rc = msg_write_call_result(&c->writer, &res, &err);
    if (rc == 0) wire_end(&c->writer, &err);
}

// A port nothing listens on: bound without listen() and kept bound for the
// whole run, so that no later server of the run gets it (the client keeps
// a failed link probe of a port for a while).
int ClosedPort()
{
    static std::vector<int> reserved;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a = {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = 0;
    if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) == 0)
        port = ntohs(a.sin_port);
    reserved.push_back(fd);
    return port;
}

// dscal's n: 1 MiB of doubles, so that half a reply goes out in whole packets.
const int kN = 1 << 17;

// The real second server, shared by every case (its calls are counted).
ServerProc *real = nullptr;

class RetryRule : public ::testing::TestWithParam<std::tuple<Row, Path>> {
  protected:
    static void SetUpTestSuite() { real = new ServerProc({"--workers", "2"}); }
    static void TearDownTestSuite()
    {
        delete real;
        real = nullptr;
    }
    void TearDown() override
    {
        numrpc_set_timeout(0);
        numrpc_finalize();
        unsetenv("NUMRPC_METASERVER");
        unsetenv("NUMRPC_SERVER");
    }

    // The first server, failing as fault says; its address.
    std::string StartFirst(Fault fault)
    {
        if (fault == Fault::Unreachable) return "127.0.0.1:" + std::to_string(ClosedPort());
        first_ = std::make_unique<HostileServer>();
        if (fault != Fault::NotOffered) first_->Offer("dscal", FetchDescriptor(real->port(), "dscal"));
        if (fault == Fault::SilentProbe) first_->IgnoreProbes(); // the probe ends at its own time limit
        first_->OnCall([fault](msg_conn *c, uint32_t id) {
            err_t err;
            msg_call_result res = {0, 0, 0};
            switch (fault) {
            case Fault::Busy:
            case Fault::SilentProbe: ReplyError(c, id, NUMRPC_EBUSY, "queue full"); break;
            case Fault::Refused: ReplyError(c, id, NUMRPC_EAUTH, "token refused"); break;
            case Fault::Stale: ReplyError(c, id, NUMRPC_ESTALE, "interface changed"); break;
            case Fault::Crash: ReplyError(c, id, NUMRPC_ECRASHED, "dscal crashed: SIGSEGV"); break;
            case Fault::Limit: ReplyError(c, id, NUMRPC_ELIMIT, "request too large"); break;
            case Fault::RoutineError: ReplyError(c, id, NUMRPC_ESERVER, "dscal: the routine failed"); break;
            case Fault::Garbled: ReplyError(c, id, 4242, "no such status"); break;
            case Fault::Deadline: std::this_thread::sleep_for(std::chrono::milliseconds(1200)); break;
            case Fault::CutMidReply: { // x's count, then half of its elements
                msg_reply_begin(&c->writer, id, NUMRPC_OK, "", &err);
                msg_write_call_result(&c->writer, &res, &err);
                wire_put_u64(&c->writer, kN, &err);
                for (int i = 0; i < kN / 2; i++) wire_put_double(&c->writer, 999.0, &err);
                shutdown(c->tp.fd, SHUT_RDWR);
                break;
            }
            default: msg_conn_shutdown(c); break; // Lost
            }
        });
        return first_->address();
    }

    // Points the library at first then the real server: listed, or
    // ranked by a metaserver both joined (first far faster: ranked first).
    void Route(Path path, const std::string &first)
    {
        numrpc_finalize();
        if (path == Path::BlockingListed || path == Path::AsyncListed) {
            setenv("NUMRPC_SERVER", (first + "," + real->address()).c_str(), 1);
        } else {
            meta_ = std::make_unique<Proc>(std::vector<std::string>{kMeta, "--port", "0", "--bind", "127.0.0.1",
                                                                    "--allow-insecure", "--quiet"});
            ASSERT_GT(meta_->port(), 0);
            Peer fetch(real->port());
            ASSERT_EQ(fetch.hello(), 0);
            ASSERT_EQ(fetch.descriptor("dscal", &dscal_), 0);
            int first_port = std::stoi(first.substr(first.rfind(':') + 1));
            fast_ = std::make_unique<Peer>(meta_->port());
            slow_ = std::make_unique<Peer>(meta_->port());
            ASSERT_EQ(fast_->hello(), 0);
            ASSERT_EQ(fast_->join("127.0.0.1", first_port, {&dscal_}, 2, 1e13, "first"), 0);
            ASSERT_EQ(slow_->hello(), 0);
            ASSERT_EQ(slow_->join("127.0.0.1", real->port(), {&dscal_}, 2, 1e3, "real"), 0);
            setenv("NUMRPC_METASERVER", ("127.0.0.1:" + std::to_string(meta_->port())).c_str(), 1);
        }
        ASSERT_EQ(numrpc_init(nullptr), NUMRPC_OK);
    }

    // dscal on x by the path's kind of call; the call's server in *server.
    static int Call(Path path, std::vector<double> &x, std::string *server)
    {
        numrpc_call_info info{};
        int n = static_cast<int>(x.size()), rc;
        if (path == Path::BlockingListed || path == Path::BlockingRanked) {
            rc = numrpc_call("dscal", n, -1.5, x.data(), 1);
            numrpc_last_call_info(&info);
        } else {
            int id = 0;
            rc = numrpc_call_async(&id, "dscal", n, -1.5, x.data(), 1);
            if (rc == NUMRPC_OK) {
                numrpc_call_info_of(id, &info);
                rc = numrpc_wait(id);
                numrpc_call_info_of(id, &info);
            }
        }
        *server = info.server;
        return rc;
    }

    std::unique_ptr<HostileServer> first_;
    std::unique_ptr<Proc> meta_;
    std::unique_ptr<Peer> fast_, slow_;
    Routine dscal_;
};

TEST_P(RetryRule, OneDecisionForEveryKindOfCall)
{
    const Row row = std::get<0>(GetParam());
    const Path path = std::get<1>(GetParam());
    std::string first = StartFirst(row.fault);
    Route(path, first);
    if (HasFatalFailure()) return;
    if (row.fault == Fault::Deadline) numrpc_set_timeout(0.5);

    const int n = kN;
    std::vector<double> x(n), want(n);
    for (int i = 0; i < n; i++) x[i] = want[i] = 1.0 / (i + 1) - 0.25;
    const std::vector<double> before = x;
    cblas_dscal(n, -1.5, want.data(), 1);
    long long real_calls = CallsOf(real->port(), "dscal");

    std::string server;
    int rc = Call(path, x, &server);
    std::string detail = Detail();
    if (row.moves_on) {
        ASSERT_EQ(rc, NUMRPC_OK) << numrpc_errname(rc) << ": " << detail;
        EXPECT_EQ(x, want);
        EXPECT_EQ(server, real->address());
        EXPECT_EQ(CallsOf(real->port(), "dscal"), real_calls + 1);
    } else {
        EXPECT_EQ(rc, row.code) << numrpc_errname(rc) << ": " << detail;
        EXPECT_TRUE(Contains(detail, first)) << detail; // the first server's failure
        EXPECT_FALSE(Contains(detail, real->address())) << detail;
        EXPECT_EQ(CallsOf(real->port(), "dscal"), real_calls); // never sent on
        if (row.fault != Fault::CutMidReply) {
            EXPECT_EQ(x, before); // nothing landed
        } else {
            EXPECT_EQ(x[0], 999.0); // what landed before the server left
            EXPECT_TRUE(Contains(detail, "results had begun to arrive in the caller's memory: not resent")) << detail;
        }
    }
    if (row.fault == Fault::Stale) { // tried again there, then reported
        ASSERT_TRUE(first_);
        EXPECT_EQ(first_->Calls().size(), 3u);
    }
}

std::string CaseName(const ::testing::TestParamInfo<std::tuple<Row, Path>> &info)
{
    return std::string(std::get<0>(info.param).name) + "_" + PathName(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Table, RetryRule,
                         ::testing::Combine(::testing::ValuesIn(kTable),
                                            ::testing::Values(Path::BlockingListed, Path::AsyncListed,
                                                              Path::BlockingRanked, Path::AsyncRanked)),
                         CaseName);

} // namespace
