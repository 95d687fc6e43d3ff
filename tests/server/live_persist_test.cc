// live_persist_test.cc -- live registrations survive a restart with the same
// command line: after SIGTERM, SIGKILL, a kill inside a register, a bad journal.
#include <gtest/gtest.h>

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../support/admin_socket.h"
#include "../support/server_proc.h"
#include "../support/test_util.h"
#include "numrpc.h"

namespace {

const std::string kMods = TOP_BUILDDIR "/tests/server/.libs";  // live1.so, live2.so
const std::string kCli = TOP_BUILDDIR "/cli/numrpc";

bool WaitFor(const std::function<bool()> &cond, int max_ms = 10000)
{
    for (int i = 0; i < max_ms / 10; i++) {
        if (cond()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return cond();
}

// One server's directory: its admin socket and module directory, the same
// for every start (the same command line).
struct Site {
    TempDir dir{"numrpc-persist"};
    std::string sock() const { return dir.path + "/admin.sock"; }
    std::string mods() const { return dir.path + "/modules"; }
    std::string journal() const { return mods() + ".journal"; }
    std::unique_ptr<ServerProc> Start()
    {
        auto s = std::make_unique<ServerProc>(std::vector<std::string>{"--admin-socket", sock(), "--module-dir", mods()});
        UseServer(s->address());
        return s;
    }
};

// live_version's answer (the module's version number), or -rc on failure.
int LiveVersion()
{
    int v = 0;
    int rc = numrpc_call("live_version", &v);
    return rc == NUMRPC_OK ? v : -rc;
}

// dcopy from the stub directory's BLAS module, checked against the input.
int Dcopy()
{
    std::vector<double> x = {1.5, -2.0, 3.25, 7.0}, y(4, 0.0);
    int rc = numrpc_call("dcopy", 4, x.data(), 1, y.data(), 1);
    if (rc == NUMRPC_OK && y != x) return -1000;
    return rc;
}

// SIGTERM after the client let go of its connections (a server drains
// open ones first), and a check that the server left by itself.
void Term(std::unique_ptr<ServerProc> &s)
{
    numrpc_finalize();
    pid_t pid = s->pid();
    kill(pid, SIGTERM);
    siginfo_t info{};
    bool gone = false;
    for (int i = 0; i < 500 && !gone; i++) {  // seen exited, left for ServerProc to reap
        info.si_pid = 0;
        gone = waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
        if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(gone && info.si_code == CLD_EXITED) << "the server did not leave on SIGTERM";
    s.reset();  // SIGKILLs it if it stayed
}

void Kill9(std::unique_ptr<ServerProc> &s)
{
    kill(s->pid(), SIGKILL);
    s.reset();  // reaps it
}

std::vector<std::string> Names(const std::string &dir)
{
    std::vector<std::string> out;
    DIR *d = opendir(dir.c_str());
    for (dirent *e; d && (e = readdir(d)) != nullptr;)
        if (e->d_name[0] != '.' || strlen(e->d_name) > 2) out.push_back(e->d_name);
    if (d) closedir(d);
    return out;
}

TEST(LivePersist, RegisterAndUnregisterSurviveSigterm)
{
    Site site;
    auto server = site.Start();
    ASSERT_EQ(LiveVersion(), -NUMRPC_ENOENT);
    std::string reply = Admin(site.sock(), "register " + kMods + "/live1.so");
    ASSERT_EQ(reply.rfind("ok registered module live", 0), 0u) << reply;
    EXPECT_FALSE(Contains(reply, "not survive")) << reply;
    ASSERT_TRUE(WaitFor([] { return LiveVersion() == 1; })) << Detail();
    // A module of the stub directory hidden live stays hidden too.
    ASSERT_EQ(Admin(site.sock(), "unregister blas").rfind("ok unregistered module blas", 0), 0u);
    ASSERT_TRUE(WaitFor([] { return Dcopy() == NUMRPC_ENOENT; })) << Detail();

    Term(server);
    server = site.Start();
    EXPECT_EQ(LiveVersion(), 1) << Detail();
    EXPECT_EQ(Dcopy(), NUMRPC_ENOENT) << Detail();
    reply = Admin(site.sock(), "list");
    EXPECT_TRUE(Contains(reply, "2 live changes")) << reply;
    EXPECT_TRUE(Contains(reply, "registered live at ")) << reply;
    EXPECT_TRUE(Contains(reply, "(persisted)")) << reply;
    EXPECT_TRUE(Contains(reply, "\nunregistered blas: unregistered live at ")) << reply;

    // STATUS says where each routine came from.
    std::string err = site.dir.path + "/status.err";
    CommandRun st = RunCommand(kCli + " status " + server->address(), err);
    EXPECT_EQ(st.status, 0) << st.err;
    EXPECT_TRUE(Contains(st.out, "ORIGIN")) << st.out;
    EXPECT_TRUE(Contains(st.out, "registered live at")) << st.out;
    st = RunCommand(kCli + " status --json " + server->address(), err);
    EXPECT_TRUE(Contains(st.out, "\"origin\": \"registered live at")) << st.out;

    // Blas back: that persists too.
    ASSERT_EQ(Admin(site.sock(), "register " + std::string(TOP_BUILDDIR "/stubs/.libs/blas.so")).rfind("ok", 0), 0u);
    ASSERT_TRUE(WaitFor([] { return Dcopy() == NUMRPC_OK; })) << Detail();
    Term(server);
    server = site.Start();
    EXPECT_EQ(Dcopy(), NUMRPC_OK) << Detail();
    EXPECT_EQ(LiveVersion(), 1) << Detail();
    numrpc_finalize();
}

TEST(LivePersist, RegisterAndUnregisterSurviveSigkill)
{
    Site site;
    auto server = site.Start();
    std::string reply = Admin(site.sock(), "register " + kMods + "/live2.so");
    ASSERT_EQ(reply.rfind("ok registered module live", 0), 0u) << reply;
    ASSERT_TRUE(WaitFor([] { return LiveVersion() == 2; })) << Detail();
    Kill9(server);

    server = site.Start();
    EXPECT_EQ(LiveVersion(), 2) << Detail();
    EXPECT_EQ(Dcopy(), NUMRPC_OK) << Detail();
    reply = Admin(site.sock(), "unregister live");
    ASSERT_EQ(reply.rfind("ok unregistered module live", 0), 0u) << reply;
    ASSERT_TRUE(WaitFor([] { return LiveVersion() == -NUMRPC_ENOENT; })) << Detail();
    Kill9(server);

    server = site.Start();
    EXPECT_EQ(LiveVersion(), -NUMRPC_ENOENT) << Detail();
    EXPECT_EQ(Dcopy(), NUMRPC_OK) << Detail();
    numrpc_finalize();
}

TEST(LivePersist, KillInsideARegisterLeavesOldOrNewState)
{
    Site site;
    // The server pauses between the module's copy and the journal: killed
    // there, it comes back without the module, and the copy's temp files gone.
    setenv("NUMRPC_TEST_PERSIST_PAUSE_MS", "5000", 1);
    auto server = site.Start();
    unsetenv("NUMRPC_TEST_PERSIST_PAUSE_MS");
    std::thread admin([&] { Admin(site.sock(), "register " + kMods + "/live1.so"); });
    bool copied = WaitFor([&] {
        for (auto &n : Names(site.mods()))
            if (n.size() == 19 && n.substr(16) == ".so") return true;
        return false;
    });
    Kill9(server);
    admin.join();
    ASSERT_TRUE(copied) << "the copy never appeared in " << site.mods();
    server = site.Start();
    EXPECT_EQ(LiveVersion(), -NUMRPC_ENOENT) << Detail();
    EXPECT_EQ(Dcopy(), NUMRPC_OK) << Detail();
    for (auto &n : Names(site.mods())) EXPECT_EQ(n.find(".tmp"), std::string::npos) << n;
    Term(server);

    // Killed at other points (a few, spread over a register): the module is
    // there and answers right, or absent; the server always starts.
    for (int i = 0; i < 3; i++) {
        server = site.Start();
        std::thread a([&] { Admin(site.sock(), "register " + kMods + "/live2.so"); });
        std::this_thread::sleep_for(std::chrono::milliseconds(i * 4));
        Kill9(server);
        a.join();
        server = site.Start();
        int v = LiveVersion();
        EXPECT_TRUE(v == 2 || v == -NUMRPC_ENOENT) << "try " << i << ": " << v << " " << Detail();
        EXPECT_EQ(Dcopy(), NUMRPC_OK) << Detail();
        ASSERT_EQ(Admin(site.sock(), "unregister live").rfind("ok", 0), 0u);
        Term(server);
    }
    numrpc_finalize();
}

void WriteFile(const std::string &path, const std::string &text)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

TEST(LivePersist, BadJournalIsSetAsideAndTheStubDirectoryServed)
{
    Site site;
    // A journal that is good but for its copy: registered live1, then its
    // copy replaced by other bytes (live2's) -- the entry is skipped.
    auto server = site.Start();
    std::string reply = Admin(site.sock(), "register " + kMods + "/live1.so");
    ASSERT_EQ(reply.rfind("ok registered module live", 0), 0u) << reply;
    Term(server);
    std::string copy;
    for (auto &n : Names(site.mods()))
        if (n.size() == 19) copy = site.mods() + "/" + n;
    ASSERT_FALSE(copy.empty());
    std::string cp = "cp " + kMods + "/live2.so " + copy;
    ASSERT_EQ(system(cp.c_str()), 0);
    server = site.Start();
    EXPECT_TRUE(server->alive());
    EXPECT_EQ(LiveVersion(), -NUMRPC_ENOENT) << Detail();
    EXPECT_EQ(Dcopy(), NUMRPC_OK) << Detail();
    Term(server);
    unlink(copy.c_str());

    const std::string head = "numrpc-live-journal 1\n";
    const std::string good = head + "unregistered blas 1700000000 uid-1\nend 1\n";
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"truncated", good.substr(0, good.size() - 7)},
        {"garbage", std::string("\x7f" "ELF\x01\x02\0\0garbage\n", 17)},
        {"a path", head + "registered live 0123456789abcdef ../../etc/passwd 1700000000 uid-1\nend 1\n"},
        {"a name with ../", head + "unregistered ../blas 1700000000 uid-1\nend 1\n"},
        {"a wrong count", head + "unregistered blas 1700000000 uid-1\nend 2\n"},
    };
    for (auto &b : bad) {
        unlink((site.journal() + ".corrupt").c_str());
        WriteFile(site.journal(), b.second);
        server = site.Start();
        EXPECT_TRUE(server->alive()) << b.first;
        EXPECT_EQ(Dcopy(), NUMRPC_OK) << b.first << ": " << Detail();  // blas not hidden
        struct stat st;
        EXPECT_EQ(stat((site.journal() + ".corrupt").c_str(), &st), 0) << b.first << ": not set aside";
        reply = Admin(site.sock(), "list");
        EXPECT_TRUE(Contains(reply, "0 live changes")) << b.first << ": " << reply;
        Term(server);
    }
    // And the good one is obeyed.
    WriteFile(site.journal(), good);
    server = site.Start();
    EXPECT_EQ(Dcopy(), NUMRPC_ENOENT) << Detail();
    numrpc_finalize();
}

TEST(LivePersist, UnwritableJournalStillRegistersForThisRun)
{
    Site site;
    // The journal's temp file cannot be made (a directory has its name,
    // which start-up does not remove): even root cannot write the journal.
    ASSERT_EQ(mkdir((site.journal() + ".tmp").c_str(), 0700), 0);
    auto server = site.Start();
    std::string reply = Admin(site.sock(), "register " + kMods + "/live1.so");
    ASSERT_EQ(reply.rfind("ok registered module live", 0), 0u) << reply;
    EXPECT_TRUE(Contains(reply, "will not survive a restart")) << reply;
    ASSERT_TRUE(WaitFor([] { return LiveVersion() == 1; })) << Detail();
    EXPECT_TRUE(Contains(Admin(site.sock(), "list"), "not persisted"));
    Term(server);
    server = site.Start();
    EXPECT_EQ(LiveVersion(), -NUMRPC_ENOENT) << Detail();
    Term(server);

    // Without --module-dir (the default one is named after the port, new
    // at each start on --port 0) nothing is journaled, and the reply says so.
    server = std::make_unique<ServerProc>(std::vector<std::string>{"--admin-socket", site.sock()});
    reply = Admin(site.sock(), "register " + kMods + "/live1.so");
    ASSERT_EQ(reply.rfind("ok registered module live", 0), 0u) << reply;
    EXPECT_TRUE(Contains(reply, "will not survive a restart (no --module-dir")) << reply;
    numrpc_finalize();
}

}  // namespace
