// progress_test.cc -- progress frames of a long call (numrpc_set_progress):
// a dgemm's frames and prediction, an async call's id, no frame unasked
// (counted on a raw connection), and a routine's garbage cleaned.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <unistd.h>

#include "../common/tls_support.h"
#include "../stubs/local_lapack.h"
#include "../support/raw_peer.h"
#include "../support/server_proc.h"
#include "numrpc.h"
extern "C" {
#include "msg.h"
#include "msg_progress.h"
#include "wire.h"
}

namespace {

const char kModule[] = TOP_BUILDDIR "/tests/progress/.libs";

// What a handler saw, frame by frame.
struct Frame {
    int call_id;
    std::string routine, message;
    double elapsed, predicted, fraction;
};
struct Seen {
    std::mutex mu;
    std::vector<Frame> frames;
};

void Record(const numrpc_progress *p, void *arg)
{
    Seen *s = static_cast<Seen *>(arg);
    std::lock_guard<std::mutex> g(s->mu);
    s->frames.push_back({p->call_id, p->routine, p->message, p->elapsed, p->predicted, p->fraction});
}

void UseServer(const ServerProc &s)
{
    std::string addr = s.address();
    numrpc_config cfg{};
    cfg.servers = addr.c_str();
    ASSERT_EQ(numrpc_init(&cfg), NUMRPC_OK);
}

// Every frame is one an honest server sends: times finite and growing,
// fraction -1 or within [0, 1], message bounded and printable.
void ExpectSane(const std::vector<Frame> &frames)
{
    double last = -1;
    for (const Frame &f : frames) {
        EXPECT_TRUE(std::isfinite(f.elapsed));
        EXPECT_GT(f.elapsed, last) << "elapsed must grow from frame to frame";
        last = f.elapsed;
        EXPECT_TRUE(f.fraction == -1 || (f.fraction >= 0 && f.fraction <= 1)) << f.fraction;
        EXPECT_TRUE(f.predicted == -1 || (std::isfinite(f.predicted) && f.predicted >= 0)) << f.predicted;
        EXPECT_LE(f.message.size(), 256u);
        for (unsigned char c : f.message) EXPECT_GE(c, 0x20) << "a control byte in " << f.message;
    }
}

// About 2 s of dgemm here (n = 3600: 93 Gflop), checked against
// local BLAS; frames every 0.1 s.
TEST(Progress, FramesOfALongDgemmComeInTheCallersThread)
{
    ServerProc server;
    UseServer(server);
    Seen seen;
    numrpc_set_progress(Record, &seen, 0.1);
    int n = 3600;
    std::vector<double> a((size_t)n * n), b((size_t)n * n), c((size_t)n * n, 0), want((size_t)n * n, 0);
    for (size_t i = 0; i < a.size(); i++) {
        a[i] = std::sin(1.0 + (double)i);
        b[i] = std::cos(2.0 + (double)i);
    }
    int rc = numrpc_call("dgemm", 'N', 'N', n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
    numrpc_set_progress(nullptr, nullptr, 0);
    ASSERT_EQ(rc, NUMRPC_OK) << numrpc_last_error_detail();
    numrpc_call_info info;
    numrpc_last_call_info(&info);
    double one = 1, zero = 0;
    dgemm_("N", "N", &n, &n, &n, &one, a.data(), &n, b.data(), &n, &zero, want.data(), &n, 1, 1);
    double e = 0;
    for (size_t i = 0; i < c.size(); i++) e = std::max(e, std::fabs(c[i] - want[i]));
    EXPECT_LT(e, 1e-8);
    if (info.compute_seconds < 0.5) GTEST_SKIP() << "dgemm took " << info.compute_seconds << " s: too quick for frames";
    ASSERT_GE(seen.frames.size(), 2u) << "in " << info.compute_seconds << " s of compute";
    ExpectSane(seen.frames);
    for (const Frame &f : seen.frames) {
        EXPECT_EQ(f.call_id, 0);
        EXPECT_EQ(f.routine, "dgemm");
        EXPECT_EQ(f.fraction, -1); // dgemm does not say
        EXPECT_LE(f.elapsed, info.total_seconds);
    }
    // The prediction: CalcOrder 2 n^3 at the server's measured speed.
    double predicted = seen.frames.front().predicted;
    std::printf("dgemm n=%d: %zu frames, predicted %.2f s, call %.2f s (compute %.2f s)\n", n, seen.frames.size(),
                predicted, info.total_seconds, info.compute_seconds);
    ASSERT_GT(predicted, 0) << "the server measures its speed with dmmul";
    EXPECT_LT(predicted, 4 * info.total_seconds) << "call took " << info.total_seconds << " s";
    EXPECT_GT(predicted, info.total_seconds / 4) << "call took " << info.total_seconds << " s";
}

// A routine's own fraction and words; an async call's frames carry its id.
TEST(Progress, AnAsyncCallsFramesCarryItsIdAndTheRoutinesWords)
{
    ServerProc server({"--stubs", kModule});
    UseServer(server);
    Seen seen;
    numrpc_set_progress(Record, &seen, 0.05);
    int id = 0, reports = 0;
    ASSERT_EQ(numrpc_call_async(&id, "tick", 0.6, 0, &reports), NUMRPC_OK) << numrpc_last_error_detail();
    int rc = numrpc_wait(id);
    numrpc_set_progress(nullptr, nullptr, 0);
    ASSERT_EQ(rc, NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_GT(reports, 10);
    ASSERT_GE(seen.frames.size(), 2u);
    ExpectSane(seen.frames);
    double last_fraction = -1;
    int worded = 0;
    for (const Frame &f : seen.frames) {
        EXPECT_EQ(f.call_id, id);
        EXPECT_EQ(f.routine, "tick");
        EXPECT_EQ(f.predicted, -1); // no CalcOrder
        if (f.fraction < 0) continue; // a frame before the routine's first report
        EXPECT_GE(f.fraction, last_fraction);
        last_fraction = f.fraction;
        EXPECT_EQ(f.message.compare(0, 5, "step "), 0) << f.message;
        worded++;
    }
    EXPECT_GT(worded, 0);
}

// Reads one reply on a raw connection, counting the PROGRESS frames before it.
struct RawCall {
    int progress = 0, keepalives = 0, status = INT32_MIN, reports = 0;
    std::string failure;
};

RawCall CallTickRaw(int port, uint32_t flags, double seconds)
{
    RawCall out;
    int fd = connect_loopback(port);
    if (fd < 0 || !SendHello(fd)) {
        out.failure = "no connection";
        return out;
    }
    wire_reader r;
    wire_writer w;
    err_t err;
    wire_reader_init(&r, fd, 0, &err);
    wire_writer_init(&w, fd, 4096, &err);
    uint32_t type = 0, id = 0;
    int rc = wire_next_message(&r, &type, &id, &err); // the HELLO's reply
    if (rc == 0) rc = wire_skip_message(&r, &err);
    msg_call_header h{};
    strcpy(h.name, "tick");
    h.flags = flags;
    h.nargs = 3;
    if (rc == 0) rc = msg_write_call_header(&w, 7, &h, &err);
    if (rc == 0) rc = wire_put_double(&w, seconds, &err);
    if (rc == 0) rc = wire_put_u32(&w, 0, &err);
    if (rc == 0) rc = wire_pad8(&w, &err);
    if (rc == 0) rc = wire_end(&w, &err);
    wire_reader_set_deadline(&r, 0); // the socket's own limit
    while (rc == 0 && (rc = wire_next_message(&r, &type, &id, &err)) == 0 && type == PROTO_PROGRESS) {
        msg_progress p;
        rc = msg_read_progress(&r, &p, &err);
        out.progress++;
    }
    if (rc == 0 && type == PROTO_REPLY) {
        uint32_t st;
        rc = wire_get_u32(&r, &st, &err);
        out.status = (int32_t)st;
    }
    if (rc != 0) out.failure = err.detail;
    out.keepalives = (int)wire_reader_keepalives(&r);
    wire_reader_free(&r);
    wire_writer_free(&w);
    close(fd);
    return out;
}

// A call that does not ask gets keepalives, never a PROGRESS frame: the
// bytes are what they were before progress existed.
TEST(Progress, NoFrameForACallThatDidNotAsk)
{
    ServerProc server({"--stubs", kModule, "--keepalive-ms", "50"});
    RawCall plain = CallTickRaw(server.port(), 0, 0.4);
    ASSERT_EQ(plain.failure, "");
    EXPECT_EQ(plain.status, 0);
    EXPECT_EQ(plain.progress, 0);
    EXPECT_GT(plain.keepalives, 0);
    // The same call asking (50 ms) gets frames, on the same bytes otherwise.
    RawCall asked = CallTickRaw(server.port(), PROTO_CALL_WANT_PROGRESS | (50u << PROTO_CALL_PERIOD_SHIFT), 0.4);
    ASSERT_EQ(asked.failure, "");
    EXPECT_EQ(asked.status, 0);
    EXPECT_GT(asked.progress, 0);
}

// Garbage through the service (NaN, 1e300, 1000 bytes without a NUL,
// control bytes), then straight into the slot's fields: every frame is
// sane, and the server serves on.
TEST(Progress, ARoutinesGarbageIsCleanedAndTheServerStaysUp)
{
    ServerProc server({"--stubs", kModule});
    UseServer(server);
    for (int mode = 1; mode <= 2; mode++) {
        Seen seen;
        numrpc_set_progress(Record, &seen, 0.05);
        int reports = 0;
        int rc = numrpc_call("tick", 0.4, mode, &reports);
        numrpc_set_progress(nullptr, nullptr, 0);
        ASSERT_EQ(rc, NUMRPC_OK) << "mode " << mode << ": " << numrpc_last_error_detail();
        if (mode == 2 && reports < 0) {
            std::printf("the routine could not find its slot (sandbox): slot garbage not tried\n");
            continue;
        }
        EXPECT_GT(seen.frames.size(), 0u) << "mode " << mode;
        ExpectSane(seen.frames);
        for (const Frame &f : seen.frames) {
            if (mode == 2) { // the dispatcher's own cleaning of the slot
                EXPECT_EQ(f.message, std::string(256, 'A'));
                EXPECT_EQ(f.fraction, -1);
                EXPECT_EQ(f.predicted, -1);
            } else if (!f.message.empty()) {
                EXPECT_EQ(f.message.size(), 256u);
                EXPECT_EQ(f.fraction, -1);
            }
        }
        EXPECT_TRUE(server.alive());
    }
    int reports = 0;
    EXPECT_EQ(numrpc_call("tick", 0.01, 0, &reports), NUMRPC_OK) << numrpc_last_error_detail();
}

// Over TLS the dispatcher seals each frame as a record of its own between
// the worker's: the frames arrive, and the connection stays in step for
// the next call.
TEST(Progress, FramesOverTlsKeepTheStreamInStep)
{
    using tls_support::Pki;
    ServerProc server({"--stubs", kModule, "--tls-cert", Pki("server.pem"), "--tls-key", Pki("server.key")});
    std::string addr = server.address(), ca = Pki("ca.pem");
    numrpc_finalize();
    numrpc_config cfg{};
    cfg.servers = addr.c_str();
    cfg.tls_ca = ca.c_str();
    ASSERT_EQ(numrpc_init(&cfg), NUMRPC_OK) << numrpc_last_error_detail();
    Seen seen;
    numrpc_set_progress(Record, &seen, 0.05);
    int reports = 0;
    int rc = numrpc_call("tick", 0.4, 0, &reports);
    numrpc_set_progress(nullptr, nullptr, 0);
    ASSERT_EQ(rc, NUMRPC_OK) << numrpc_last_error_detail();
    EXPECT_GT(seen.frames.size(), 0u);
    ExpectSane(seen.frames);
    EXPECT_EQ(numrpc_call("tick", 0.01, 0, &reports), NUMRPC_OK) << numrpc_last_error_detail();
    numrpc_call_info info;
    numrpc_last_call_info(&info);
    EXPECT_EQ(info.connections, 0u) << "the same connection served the next call";
    numrpc_finalize();
}

} // namespace
