// hostile_server_test.cc -- a server cannot turn the client against its
// caller: interfaces forged from real ones (by a hostile server written
// here) are refused by the process's first binding, by pins and by typed
// headers' pins before any of the caller's memory is read or written, and
// a live replacement is used only when its parameters are unchanged.
#include <gtest/gtest.h>

#include <cblas.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "../support/admin_socket.h"
#include "../support/server_proc.h"
#include "../support/test_util.h"
#include "hostile_peer.h"
#include "numrpc.h"

namespace {

constexpr int kN = 8;         // elements of the caller's arrays
constexpr int kGuard = 64;    // canary elements on each side
constexpr double kCanary = -7.25;

// A caller's array of kN doubles between canaries.
struct Guarded {
    std::vector<double> mem = std::vector<double>(kN + 2 * kGuard, kCanary);
    double *data() { return mem.data() + kGuard; }
    void Fill(double base)
    {
        for (int i = 0; i < kN; i++) data()[i] = base + i;
    }
    bool Holds(double base)
    {
        for (int i = 0; i < kN; i++)
            if (data()[i] != base + i) return false;
        return CanariesIntact();
    }
    bool CanariesIntact()
    {
        for (int i = 0; i < kGuard; i++)
            if (mem[i] != kCanary || mem[kGuard + kN + i] != kCanary) return false;
        return true;
    }
};

std::string ReadFile(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

void WriteFile(const std::string &path, const std::string &text)
{
    std::ofstream(path) << text;
}

std::string Hex(uint64_t hash)
{
    char buf[17];
    snprintf(buf, sizeof buf, "%016" PRIx64, hash);
    return buf;
}

// Expression programs (common/expr.h).
std::vector<int64_t> Times(int64_t param, int64_t k) { return {EXPR_ARG, param, EXPR_CONST, k, EXPR_MUL}; }
std::vector<int64_t> Const(int64_t k) { return {EXPR_CONST, k}; }

// One dimension's extent and traveling count set to words, stride 1.
void SetExtent(iface_param *p, const std::vector<int64_t> &words)
{
    SetExpr(&p->dims[0].size, words);
    SetExpr(&p->dims[0].count, words);
    SetExpr(&p->dims[0].start, {});
    SetExpr(&p->dims[0].stride, {});
}

// ---- The attacks ----

// What the caller owns in one attack; every attack checks all of it.
struct Caller {
    Guarded x, y;
    char name[2 * kGuard + 8];  // an IN string "numrpc" between '#' canaries
    char msg[2 * kGuard + 8];   // greet's OUT string<cap> (cap 5)
    long bytes = -1;
    std::string input, secret;  // an IN filename; a file an IN string names
    void Reset()
    {
        x.Fill(1.0);
        y.Fill(100.0);
        memset(name, '#', sizeof name);
        memcpy(name + kGuard, "numrpc", 7);
        memset(msg, '#', sizeof msg);
        bytes = -1;
    }
    bool NameIntact() const
    {
        for (int i = 0; i < kGuard; i++)
            if (name[i] != '#' || name[kGuard + 7 + i] != '#') return false;
        return strcmp(name + kGuard, "numrpc") == 0;
    }
};

struct Attack {
    const char *title;
    const char *routine;
    bool on_blas;                // offered by the blas server (else by the test modules' one)
    const char *changed;         // what the refusal names, e.g. "parameter y"
    std::function<void(iface_t *)> forge;
    // The hostile server's answer to a CALL of the forged interface f.
    std::function<void(HostileServer *, msg_conn *, uint32_t, const iface_t *)> exploit;
    // The caller's call of target (pin: through a typed header's pin).
    std::function<int(Caller *, const std::string &, const char *)> call;
};

// The caller's memory and files, after a refused call: as they were.
void ExpectUntouched(Caller *c, const std::string &input_text, const struct stat &input_before)
{
    EXPECT_TRUE(c->x.Holds(1.0)) << "x or its canaries changed";
    EXPECT_TRUE(c->y.Holds(100.0)) << "y or its canaries changed";
    EXPECT_TRUE(c->NameIntact()) << "the caller's string changed";
    EXPECT_EQ(c->bytes, -1);
    struct stat now;
    ASSERT_EQ(stat(c->input.c_str(), &now), 0);
    EXPECT_EQ(ReadFile(c->input), input_text);
    EXPECT_EQ(now.st_size, input_before.st_size);
    EXPECT_EQ(now.st_mtim.tv_sec, input_before.st_mtim.tv_sec);
    EXPECT_EQ(now.st_mtim.tv_nsec, input_before.st_mtim.tv_nsec);
}

int CallDcopy(Caller *c, const std::string &target, const char *pin)
{
    return pin ? numrpc_call_pinned(pin, target.c_str(), kN, c->x.data(), 1, c->y.data(), 1)
               : numrpc_call(target.c_str(), kN, c->x.data(), 1, c->y.data(), 1);
}

int CallGreet(Caller *c, const std::string &target, const char *pin, const char *name)
{
    return pin ? numrpc_call_pinned(pin, target.c_str(), name, 5, c->msg + kGuard)
               : numrpc_call(target.c_str(), name, 5, c->msg + kGuard);
}

int CallFileSize(Caller *c, const std::string &target, const char *pin)
{
    return pin ? numrpc_call_pinned(pin, target.c_str(), c->input.c_str(), &c->bytes)
               : numrpc_call(target.c_str(), c->input.c_str(), &c->bytes);
}

// dcopy's reply as the forged interface has it: n (if OUT) 0x41, every
// array the server sends full of 666.
void DcopyExploit(HostileServer *, msg_conn *conn, uint32_t id, const iface_t *f)
{
    int n = kN, inc = 1, out_n = 0x41;
    std::vector<double> x(kN * 512, 666.0), y(kN * 1000, 666.0);
    void *argv[] = {f->params[0].mode == IFACE_IN ? static_cast<void *>(&n) : &out_n, x.data(), &inc, y.data(), &inc};
    WriteWalkerReply(conn, id, f, argv);
}

void GreetExploit(HostileServer *, msg_conn *conn, uint32_t id, const iface_t *f)
{
    std::string big(4096, 'A');
    char *name = &big[0], *msg = const_cast<char *>("pwned");
    int cap = 5;
    void *argv[] = {&name, &cap, &msg};
    WriteWalkerReply(conn, id, f, argv);
}

std::vector<Attack> Attacks()
{
    std::vector<Attack> a;
    a.push_back({"y's extent n*1000", "dcopy", true, "parameter y: the extent of dimension 1",
                 [](iface_t *f) { SetExtent(&f->params[ParamIndex(f, "y")], Times(0, 1000)); }, DcopyExploit,
                 CallDcopy});
    a.push_back({"IN x's extent n*512", "dcopy", true, "parameter x: the extent of dimension 1",
                 [](iface_t *f) { SetExtent(&f->params[ParamIndex(f, "x")], Times(0, 512)); }, DcopyExploit,
                 CallDcopy});
    a.push_back({"IN x turned INOUT", "dcopy", true, "parameter x: mode INOUT, was IN",
                 [](iface_t *f) { f->params[ParamIndex(f, "x")].mode = IFACE_INOUT; }, DcopyExploit, CallDcopy});
    a.push_back({"IN int n turned OUT", "dcopy", true, "parameter n: mode OUT, was IN",
                 [](iface_t *f) {
                     f->params[0].mode = IFACE_OUT; // nothing depends on n any more
                     SetExpr(&f->complexity, {});
                     SetExtent(&f->params[ParamIndex(f, "x")], Const(kN));
                     SetExtent(&f->params[ParamIndex(f, "y")], Const(kN));
                 },
                 DcopyExploit, CallDcopy});
    a.push_back({"IN string turned OUT string<4096>", "greet", false, "parameter name: mode OUT, was IN",
                 [](iface_t *f) {
                     f->params[0].mode = IFACE_OUT;
                     SetExpr(&f->params[0].bound, Const(4096));
                 },
                 GreetExploit,
                 [](Caller *c, const std::string &t, const char *pin) { return CallGreet(c, t, pin, c->name + kGuard); }});
    a.push_back({"IN filename turned OUT filename", "pin_file_size", false, "parameter input: mode OUT, was IN",
                 [](iface_t *f) { f->params[0].mode = IFACE_OUT; },
                 [](HostileServer *, msg_conn *conn, uint32_t id, const iface_t *f) {
                     TempDir dir;
                     std::string path = dir.path + "/payload";
                     WriteFile(path, "pwned");
                     char *p = &path[0];
                     long bytes = 5;
                     void *argv[] = {&p, &bytes};
                     WriteWalkerReply(conn, id, f, argv);
                 },
                 CallFileSize});
    a.push_back({"IN string turned IN rfile", "greet", false, "parameter name: type rfile, was string",
                 [](iface_t *f) { f->params[0].type = NUMRPC_T_RFILE; },
                 [](HostileServer *h, msg_conn *conn, uint32_t id, const iface_t *) {
                     h->NoteFileBytes(AskFile(conn, id, 0, 16)); // the secret has 29 bytes
                     msg_call_result res = {0, 0, 0};
                     err_t err;
                     if (msg_reply_begin(&conn->writer, id, NUMRPC_ESERVER, "done", &err) == 0 &&
                         msg_write_call_result(&conn->writer, &res, &err) == 0)
                         wire_end(&conn->writer, &err);
                 },
                 [](Caller *c, const std::string &t, const char *pin) {
                     return CallGreet(c, t, pin, c->secret.c_str());
                 }});
    return a;
}

// ---- Fixture: the real servers, a hostile one per attack ----

class HostileServers : public ::testing::Test {
  protected:
    static void SetUpTestSuite()
    {
        blas_ = new ServerProc();
        mods_ = new ServerProc({"--stubs", TOP_BUILDDIR "/tests/client/.libs"});
    }
    static void TearDownTestSuite()
    {
        numrpc_finalize();
        delete blas_;
        delete mods_;
        blas_ = mods_ = nullptr;
    }
    void SetUp() override
    {
        numrpc_finalize();
        caller_.input = dir_.path + "/input.txt";
        caller_.secret = dir_.path + "/secret.txt";
        WriteFile(caller_.input, "the caller's input file\n");
        WriteFile(caller_.secret, "SECRET-CONTENTS-OF-THE-CALLER");
        caller_.Reset();
    }
    static ServerProc *Real(const Attack &a) { return a.on_blas ? blas_ : mods_; }
    static std::string Url(const std::string &addr, const char *routine)
    {
        return "numrpc://" + addr + "/" + routine;
    }
    // The real pin line of routine (from the server that offers it).
    static std::string RealPin(const Attack &a)
    {
        char *pin = nullptr;
        EXPECT_EQ(numrpc_describe_pin(Url(Real(a)->address(), a.routine).c_str(), &pin), NUMRPC_OK) << Detail();
        std::string line = pin ? pin : "";
        free(pin);
        return line;
    }
    void Configure(const std::string &servers, const char *pin_file)
    {
        numrpc_finalize();
        numrpc_config cfg{servers.c_str(), 0, nullptr, pin_file};
        ASSERT_EQ(numrpc_init(&cfg), NUMRPC_OK) << Detail();
    }

    // Runs attack a against each defence; hostile offers the forged
    // interface and answers with a.exploit.
    void RunAttack(const Attack &a);

    static ServerProc *blas_, *mods_;
    TempDir dir_;
    Caller caller_;
};
ServerProc *HostileServers::blas_ = nullptr;
ServerProc *HostileServers::mods_ = nullptr;

void HostileServers::RunAttack(const Attack &a)
{
    SCOPED_TRACE(a.title);
    std::vector<uint8_t> real_blob = FetchDescriptor(Real(a)->port(), a.routine);
    ASSERT_FALSE(real_blob.empty());
    iface_t forged;
    ASSERT_TRUE(DecodeDescriptor(real_blob, &forged));
    uint64_t real_hash = forged.hash;
    a.forge(&forged);
    std::vector<uint8_t> forged_blob = EncodeDescriptor(&forged);
    err_t err;
    ASSERT_EQ(iface_validate(&forged, &err), 0) << err.detail; // a server could send it
    HostileServer hostile;
    hostile.Offer(a.routine, forged_blob);
    hostile.OnCall([&](msg_conn *c, uint32_t id) { a.exploit(&hostile, c, id, &forged); });
    struct stat input_before;
    ASSERT_EQ(stat(caller_.input.c_str(), &input_before), 0);
    const std::string input_text = ReadFile(caller_.input);
    const std::string forged_hex = Hex(forged.hash), real_hex = Hex(real_hash);

    // 1. Frozen binding: bound from the real server, then another server.
    Configure("", "");
    ASSERT_EQ(a.call(&caller_, Url(Real(a)->address(), a.routine), nullptr), NUMRPC_OK) << Detail();
    caller_.Reset();
    EXPECT_EQ(a.call(&caller_, Url(hostile.address(), a.routine), nullptr), NUMRPC_EAUTH);
    std::string d = Detail();
    EXPECT_TRUE(Contains(d, std::string(a.routine) + ": " + hostile.address())) << d;
    EXPECT_TRUE(Contains(d, a.changed)) << d;
    EXPECT_TRUE(Contains(d, "bound first (" + real_hex + ")")) << d;
    ExpectUntouched(&caller_, input_text, input_before);

    // 2. Pins: a pin file written from the real server; first fetch from the hostile one.
    std::string pin = RealPin(a);
    std::string pin_file = dir_.path + "/pins";
    WriteFile(pin_file, "# pins\n" + pin + "\n");
    Configure(hostile.address(), pin_file.c_str());
    caller_.Reset();
    EXPECT_EQ(a.call(&caller_, a.routine, nullptr), NUMRPC_EAUTH);
    d = Detail();
    EXPECT_TRUE(Contains(d, "serves interface " + forged_hex + ", its pin in " + pin_file + " has " + real_hex)) << d;
    EXPECT_TRUE(Contains(d, a.changed)) << d;
    ExpectUntouched(&caller_, input_text, input_before);

    // 3. A typed header's pin, no pin file, first fetch from the hostile one.
    Configure(hostile.address(), "");
    caller_.Reset();
    EXPECT_EQ(a.call(&caller_, a.routine, pin.c_str()), NUMRPC_EAUTH);
    d = Detail();
    EXPECT_TRUE(Contains(d, "serves interface " + forged_hex + ", the typed header has " + real_hex)) << d;
    ExpectUntouched(&caller_, input_text, input_before);

    // Nothing of the caller's reached the hostile server: no request, no file.
    EXPECT_TRUE(hostile.Calls().empty()) << hostile.Calls().size() << " calls reached it";
    EXPECT_EQ(hostile.FileBytes(), "");
    numrpc_finalize();
    iface_free(&forged);
}

TEST_F(HostileServers, YExtentTimes1000IsRefused) { RunAttack(Attacks()[0]); }
TEST_F(HostileServers, XExtentTimes512IsRefused) { RunAttack(Attacks()[1]); }
TEST_F(HostileServers, InXTurnedInoutIsRefused) { RunAttack(Attacks()[2]); }
TEST_F(HostileServers, InIntTurnedOutIsRefused) { RunAttack(Attacks()[3]); }
TEST_F(HostileServers, InStringTurnedOutStringIsRefused) { RunAttack(Attacks()[4]); }
TEST_F(HostileServers, InFilenameTurnedOutFilenameIsRefused) { RunAttack(Attacks()[5]); }
TEST_F(HostileServers, InStringTurnedRfileIsRefused) { RunAttack(Attacks()[6]); }

// A server that asks for a file the admitted interface does not call an
// rfile gets nothing: the call fails, the file is never opened.
TEST_F(HostileServers, FileReadOfAParameterThatIsNoRfileIsRefused)
{
    HostileServer hostile;
    hostile.Offer("greet", FetchDescriptor(mods_->port(), "greet")); // the real interface
    hostile.OnCall([&](msg_conn *c, uint32_t id) { hostile.NoteFileBytes(AskFile(c, id, 0, 16)); });
    Configure(hostile.address(), "");
    EXPECT_EQ(CallGreet(&caller_, "greet", nullptr, caller_.secret.c_str()), NUMRPC_EPROTO);
    EXPECT_TRUE(Contains(Detail(), "asked to read parameter 0, which is no IN rfile of the call: refused, no file opened")) << Detail();
    EXPECT_EQ(hostile.FileBytes(), "");
    EXPECT_EQ(hostile.Calls().size(), 1u);
    numrpc_finalize();
}

// ---- Pins against the real server ----

TEST_F(HostileServers, PinnedRoutineMatchesLocalBlasAndOthersAreRefused)
{
    Configure(blas_->address(), "");
    char *pin = nullptr;
    ASSERT_EQ(numrpc_describe_pin("daxpy", &pin), NUMRPC_OK) << Detail();
    std::string pin_file = dir_.path + "/pins";
    WriteFile(pin_file, std::string("# daxpy only\n\n") + pin + "\n");
    free(pin);

    Configure(blas_->address(), pin_file.c_str());
    std::vector<double> want(kN);
    caller_.Reset();
    for (int i = 0; i < kN; i++) want[i] = caller_.y.data()[i];
    cblas_daxpy(kN, 2.5, caller_.x.data(), 1, want.data(), 1);
    ASSERT_EQ(numrpc_call("daxpy", kN, 2.5, caller_.x.data(), 1, caller_.y.data(), 1), NUMRPC_OK) << Detail();
    for (int i = 0; i < kN; i++) EXPECT_DOUBLE_EQ(caller_.y.data()[i], want[i]) << i;
    EXPECT_TRUE(caller_.y.CanariesIntact());

    // The same pin through numrpc_callv_pinned: a pin of another routine is
    // a caller's mistake (EINVAL), the right one works.
    char *daxpy_pin = nullptr;
    ASSERT_EQ(numrpc_describe_pin("daxpy", &daxpy_pin), NUMRPC_OK) << Detail();
    std::string right = daxpy_pin;
    free(daxpy_pin);
    std::string wrong = "dcopy" + right.substr(5); // another name on daxpy's descriptor
    numrpc_arg args[6] = {};
    args[0].v.i = kN;
    args[1].v.d = 2.5;
    args[2].v.p = caller_.x.data();
    args[3].v.i = 1;
    args[4].v.p = caller_.y.data();
    args[5].v.i = 1;
    EXPECT_EQ(numrpc_callv_pinned(wrong.c_str(), "daxpy", args, 6), NUMRPC_EINVAL);
    EXPECT_TRUE(Contains(Detail(), "typed header: the pin of dcopy")) << Detail();
    caller_.Reset();
    ASSERT_EQ(numrpc_callv_pinned(right.c_str(), "daxpy", args, 6), NUMRPC_OK) << Detail();
    for (int i = 0; i < kN; i++) EXPECT_DOUBLE_EQ(caller_.y.data()[i], want[i]) << i;

    caller_.Reset();
    EXPECT_EQ(CallDcopy(&caller_, "dcopy", nullptr), NUMRPC_EAUTH);
    EXPECT_TRUE(Contains(Detail(), "dcopy is not pinned in " + pin_file)) << Detail();
    EXPECT_TRUE(caller_.y.Holds(100.0));

    // A pin file that is not one: numrpc_init says where and what.
    numrpc_config cfg{blas_->address().c_str(), 0, nullptr, pin_file.c_str()};
    WriteFile(pin_file, "daxpy 0123 AAAA\n");
    numrpc_finalize();
    EXPECT_EQ(numrpc_init(&cfg), NUMRPC_EINVAL);
    EXPECT_TRUE(Contains(Detail(), pin_file + ", line 1: not a pin line")) << Detail();
    WriteFile(pin_file, "# a pin whose hash is not its descriptor's\ndaxpy 00000000000000ff" + right.substr(22) + "\n");
    numrpc_finalize();
    EXPECT_EQ(numrpc_init(&cfg), NUMRPC_EINVAL);
    EXPECT_TRUE(Contains(Detail(), pin_file + ", line 2: the pin of daxpy (hash 00000000000000ff) holds the "
                                   "descriptor of daxpy with hash " + right.substr(6, 16))) << Detail();
    numrpc_finalize();
}

// ---- Live replacement on a real server ----

TEST(FrozenBinding, LiveReplacementIsUsedOnlyWithTheSameParameters)
{
    TempDir dir;
    const std::string sock = dir.path + "/admin.sock";
    const std::string mods = TOP_BUILDDIR "/tests/client/pinmods/.libs";
    ServerProc server({"--stubs", TOP_BUILDDIR "/tests/client/.libs", "--admin-socket", sock, "--module-dir",
                       dir.path + "/modules"});
    UseServer(server.address());
    Guarded x;
    x.Fill(1.0);
    ASSERT_EQ(numrpc_call("pin_scale", kN, 2.0, x.data()), NUMRPC_OK) << Detail();
    for (int i = 0; i < kN; i++) ASSERT_EQ(x.data()[i], 2.0 * (1.0 + i));
    x.Fill(1.0);
    ASSERT_EQ(numrpc_call("pin_negate", kN, x.data()), NUMRPC_OK) << Detail();

    // Version 2: other hashes, the same parameters -- used.
    std::string reply = Admin(sock, "register " + mods + "/pinmod2.so");
    ASSERT_EQ(reply.rfind("ok registered module pinmod", 0), 0u) << reply;
    x.Fill(1.0);
    ASSERT_EQ(numrpc_call("pin_scale", kN, 3.0, x.data()), NUMRPC_OK) << Detail();
    for (int i = 0; i < kN; i++) EXPECT_EQ(x.data()[i], 3.0 * (1.0 + i));
    EXPECT_TRUE(x.CanariesIntact());

    // Version 3: pin_scale's extent doubles, pin_negate's x becomes OUT -- refused.
    reply = Admin(sock, "register " + mods + "/pinmod3.so");
    ASSERT_EQ(reply.rfind("ok replaced module pinmod", 0), 0u) << reply;
    x.Fill(1.0);
    EXPECT_EQ(numrpc_call("pin_scale", kN, 3.0, x.data()), NUMRPC_EAUTH);
    EXPECT_TRUE(Contains(Detail(), "pin_scale: " + server.address() + " serves interface ")) << Detail();
    EXPECT_TRUE(Contains(Detail(), "changes parameter x: the extent of dimension 1 from the one this process "
                                   "bound first")) << Detail();
    EXPECT_TRUE(x.Holds(1.0));
    EXPECT_EQ(numrpc_call("pin_negate", kN, x.data()), NUMRPC_EAUTH);
    EXPECT_TRUE(Contains(Detail(), "changes parameter x: mode OUT, was INOUT")) << Detail();
    EXPECT_TRUE(x.Holds(1.0));

    // A new configuration binds anew: version 3 is then what the process uses.
    UseServer(server.address());
    std::vector<double> twice(2 * kN, 1.0);
    EXPECT_EQ(numrpc_call("pin_scale", kN, 3.0, twice.data()), NUMRPC_OK) << Detail();
    for (double v : twice) EXPECT_EQ(v, 3.0);
    numrpc_finalize();
}

} // namespace
