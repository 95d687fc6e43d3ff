// sandbox_test.cc -- common/sandbox.c on this kernel: a confined child is
// refused its parent's memory, secret files, TCP, io_uring; keeps what routines need.
#include <gtest/gtest.h>

#include <cblas.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

#include <functional>
#include <string>
#include <vector>

extern "C" {
#include "sandbox.h"
}

extern "C" void openblas_set_num_threads(int);

namespace {

// A temp directory removed at the end of a test.
struct TempDir {
    std::string path;
    explicit TempDir(const char *tag)
    {
        char t[256];
        snprintf(t, sizeof t, "/tmp/sandbox-test-%s-XXXXXX", tag);
        path = mkdtemp(t);
    }
    ~TempDir()
    {
        std::string cmd = "rm -rf '" + path + "'";
        if (system(cmd.c_str()) != 0) {
        }
    }
    std::string file(const char *name, const char *text) const
    {
        std::string p = path + "/" + name;
        FILE *f = fopen(p.c_str(), "w");
        fputs(text, f);
        fclose(f);
        return p;
    }
};

// Each probe's outcome in the child: 0 when the call succeeded, else errno.
struct Outcome {
    int apply_rc = -1;
    char apply_detail[ERR_DETAIL_MAX] = "";
    sandbox_status st{};
    int n = 0;
    int result[32] = {0};
};

// Runs setup (before confinement), then confines the child with p, then
// each probe; the outcomes come back through a pipe.  The child leaves with
// _exit: no atexit handler (LeakSanitizer's would ptrace, which it may not).
Outcome run_confined(const sandbox_policy &p, const std::vector<std::function<int()>> &probes,
                     const std::function<void()> &setup = [] {})
{
    int fds[2];
    EXPECT_EQ(0, pipe(fds));
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        Outcome o;
        setup();
        err_t err;
        o.apply_rc = sandbox_apply(&p, &o.st, &err);
        if (o.apply_rc != 0) snprintf(o.apply_detail, sizeof o.apply_detail, "%s", err.detail);
        for (size_t i = 0; o.apply_rc == 0 && i < probes.size() && i < 32; i++) {
            errno = 0;
            o.result[i] = probes[i]();
            o.n++;
        }
        if (write(fds[1], &o, sizeof o) != (ssize_t)sizeof o) _exit(3);
        _exit(0);
    }
    close(fds[1]);
    Outcome o;
    size_t got = 0;
    while (got < sizeof o) {
        ssize_t k = read(fds[0], (char *)&o + got, sizeof o - got);
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_EQ(sizeof o, got) << "the confined child died: status " << status;
    EXPECT_EQ(0, o.apply_rc) << o.apply_detail;
    return o;
}

// errno of a call that returns -1 on failure; 0 when it succeeded.
int fails(long rc)
{
    return rc < 0 ? errno : 0;
}

int open_errno(const std::string &path, int flags)
{
    int fd = open(path.c_str(), flags | O_CLOEXEC);
    if (fd < 0) return errno;
    close(fd);
    return 0;
}

// The worker's policy, in small: the system, one read-write directory.
sandbox_policy worker_like(const std::string &rw, int deny_inet = 1)
{
    sandbox_policy p;
    err_t err;
    sandbox_policy_init(&p);
    p.deny_inet = deny_inet;
    p.scope_signals = 1;
    p.scope_abstract_unix = 1;
    EXPECT_EQ(0, sandbox_policy_add_system(&p, &err)) << err.detail;
    EXPECT_EQ(0, sandbox_policy_add(&p, rw.c_str(), SANDBOX_WRITE, "the handle directory", &err)) << err.detail;
    return p;
}

// A small product on OpenBLAS's threads: 0 when C = A*B is right.
int small_dgemm()
{
    const int n = 200;
    std::vector<double> a(n * n), b(n * n), c(n * n, 0.0);
    for (int i = 0; i < n * n; i++) {
        a[i] = (i % 7) * 0.5;
        b[i] = (i % 5) == 0 ? 1.0 : 0.0;
    }
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
    for (int j = 0; j < n; j += 37)
        for (int i = 0; i < n; i += 29) {
            double want = 0;
            for (int k = 0; k < n; k++) want += a[i + k * n] * b[k + j * n];
            if (want != c[i + j * n]) return EDOM;
        }
    return 0;
}

// The capability line of every thread of this process: 0 when no thread
// holds an effective or permitted capability, else 1; -1 if unreadable.
int threads_without_caps(int *threads)
{
    DIR *d = opendir("/proc/self/task");
    if (d == nullptr) return -1;
    int bad = 0;
    *threads = 0;
    struct dirent *e;
    while ((e = readdir(d)) != nullptr) {
        if (e->d_name[0] == '.') continue;
        (*threads)++;
        char path[300], line[256];
        snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == nullptr) return -1;
        while (fgets(line, sizeof line, f))
            if ((strncmp(line, "CapEff:", 7) == 0 || strncmp(line, "CapPrm:", 7) == 0) &&
                strtoull(line + 8, nullptr, 16) != 0)
                bad = 1;
        fclose(f);
    }
    closedir(d);
    return bad;
}

TEST(Sandbox, KernelHasLandlock)
{
    // Every assertion below on files and /proc needs it; say so plainly.
    EXPECT_GE(sandbox_landlock_abi(), 1) << "this kernel has no Landlock: file confinement is not tested";
}

TEST(Sandbox, RefusesWhatAHostileRoutineTries)
{
    TempDir secrets("secrets"), handles("handles");
    std::string key = secrets.file("tls.key", "-----BEGIN PRIVATE KEY-----\nMIIE\n");
    std::string tokens = secrets.file("tokens", "alice 0123456789abcdef call\n");
    sandbox_policy p = worker_like(handles.path);
    pid_t parent = getpid();
    std::string mem = "/proc/" + std::to_string(parent) + "/mem";
    std::string environ_ = "/proc/" + std::to_string(parent) + "/environ";
    static double secret_value = 42.0;
    std::vector<std::function<int()>> probes = {
        [&] { return fails(ptrace(PTRACE_ATTACH, parent, nullptr, nullptr)); },
        [&] {
            double got = 0;
            struct iovec local = {&got, sizeof got}, remote = {&secret_value, sizeof secret_value};
            return fails(process_vm_readv(parent, &local, 1, &remote, 1, 0));
        },
        [&] { return open_errno(mem, O_RDONLY); },
        [&] { return open_errno(environ_, O_RDONLY); },
        [&] { return open_errno(key, O_RDONLY); },
        [&] { return open_errno(tokens, O_RDONLY); },
        [&] { return open_errno(secrets.path, O_RDONLY | O_DIRECTORY); },
        [&] { return fails(socket(AF_INET, SOCK_STREAM, 0)); },
        [&] { return fails(socket(AF_INET6, SOCK_DGRAM, 0)); },
        [&] { return fails(socket(AF_NETLINK, SOCK_RAW, 0)); },
        [&] {
            char params[120] = {0};
            return fails(syscall(__NR_io_uring_setup, 4, params));
        },
        [&] { return fails(kill(parent, 0)); },           // Landlock ABI 6: signals scoped
        [&] { return fails(unshare(CLONE_NEWUSER)); },
        [&] { return fails(syscall(SYS_kcmp, getpid(), parent, 0, 0, 0)); },
        [&] { return open_errno("/etc/shadow", O_RDONLY); },
        [&] { return open_errno("/tmp/sandbox-test-new", O_WRONLY | O_CREAT); },
    };
    Outcome o = run_confined(p, probes);
    ASSERT_EQ((int)probes.size(), o.n);
    EXPECT_EQ(EPERM, o.result[0]) << "ptrace(PTRACE_ATTACH) of the parent";
    EXPECT_EQ(EPERM, o.result[1]) << "process_vm_readv of the parent";
    EXPECT_EQ(EACCES, o.result[2]) << "open " << mem;
    EXPECT_EQ(EACCES, o.result[3]) << "open " << environ_;
    EXPECT_EQ(EACCES, o.result[4]) << "open " << key;
    EXPECT_EQ(EACCES, o.result[5]) << "open " << tokens;
    EXPECT_EQ(EACCES, o.result[6]) << "open the secrets' directory";
    EXPECT_EQ(EPERM, o.result[7]) << "socket(AF_INET)";
    EXPECT_EQ(EPERM, o.result[8]) << "socket(AF_INET6)";
    EXPECT_EQ(EPERM, o.result[9]) << "socket(AF_NETLINK)";
    EXPECT_EQ(EPERM, o.result[10]) << "io_uring_setup";
    if (sandbox_landlock_abi() >= 6) {
        EXPECT_EQ(EPERM, o.result[11]) << "kill(parent, 0)";
    }
    EXPECT_EQ(EPERM, o.result[12]) << "unshare(CLONE_NEWUSER)";
    EXPECT_EQ(EPERM, o.result[13]) << "kcmp";
    EXPECT_EQ(EACCES, o.result[14]) << "open /etc/shadow";
    EXPECT_EQ(EACCES, o.result[15]) << "create a file in /tmp";
}

TEST(Sandbox, KeepsWhatRoutinesNeed)
{
    TempDir handles("handles");
    sandbox_policy p = worker_like(handles.path);
    std::string made = handles.path + "/h1";
    std::vector<std::function<int()>> probes = {
        [&] { return open_errno("/usr/lib/os-release", O_RDONLY); },
        [&] { return open_errno("/etc/ld.so.cache", O_RDONLY); },
        [&] { return open_errno("/proc/self/maps", O_RDONLY); },
        [&] { return open_errno("/sys/devices/system/cpu/online", O_RDONLY); },
        [&] { return open_errno("/dev/null", O_WRONLY); },
        [&] {
            int fd = open(made.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            if (fd < 0) return errno;
            int rc = ftruncate(fd, 1 << 16) == 0 && write(fd, "x", 1) == 1 ? 0 : errno;
            close(fd);
            if (rc == 0 && rename(made.c_str(), (made + ".2").c_str()) != 0) rc = errno;
            if (rc == 0 && unlink((made + ".2").c_str()) != 0) rc = errno;
            return rc;
        },
        [&] { return fails(mkdir((handles.path + "/call-dir").c_str(), 0700)); },
        [&] {
            int sv[2];
            int rc = fails(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
            if (rc == 0) {
                close(sv[0]);
                close(sv[1]);
            }
            return rc;
        },
        [&] {
            cpu_set_t set;
            return fails(sched_getaffinity(0, sizeof set, &set));
        },
        [&] {
            // A child process (SDPA solves in one) and its status.
            pid_t c = fork();
            if (c == 0) _exit(7);
            int status = 0;
            if (c < 0 || waitpid(c, &status, 0) != c) return errno ? errno : ECHILD;
            return WIFEXITED(status) && WEXITSTATUS(status) == 7 ? 0 : ECHILD;
        },
        [&] {
            // A helper program runs, still confined.
            int rc = system("/usr/bin/true");
            return rc == 0 ? 0 : ECHILD;
        },
        [&] { return prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ? 0 : EINVAL; },
    };
    Outcome o = run_confined(p, probes);
    ASSERT_EQ((int)probes.size(), o.n);
    const char *what[] = {"read /usr/lib/os-release", "read /etc/ld.so.cache", "read /proc/self/maps",
                          "read /sys/devices/system/cpu/online", "write /dev/null",
                          "make, size, write, rename and remove a handle file", "make a directory for a call's files",
                          "socketpair(AF_UNIX)", "sched_getaffinity", "fork and wait", "run /usr/bin/true",
                          "no-new-privs is set"};
    for (int i = 0; i < o.n; i++) EXPECT_EQ(0, o.result[i]) << what[i] << ": " << strerror(o.result[i]);
}

// OpenBLAS's pool started before confinement is stopped, and the threads it
// starts again (for a 2-thread product) hold no capability.
TEST(Sandbox, OpenBlasThreadsAfterConfinement)
{
    TempDir handles("handles");
    sandbox_policy p = worker_like(handles.path);
    int threads_after = 0;
    std::vector<std::function<int()>> probes = {
        [&] { return small_dgemm(); },
        [&] { return threads_without_caps(&threads_after); },
        [&] { return threads_after >= 2 ? 0 : ESRCH; },
    };
    Outcome o = run_confined(p, probes, [] {
        openblas_set_num_threads(2);
        small_dgemm(); // the pool runs before confinement, as in a worker
    });
    ASSERT_EQ(3, o.n);
    EXPECT_EQ(1, o.st.threads_before) << "the pool was not stopped before confinement";
    EXPECT_EQ(0, o.result[0]) << "a 2-thread dgemm after confinement";
    EXPECT_EQ(0, o.result[1]) << "a thread holds a capability";
    EXPECT_EQ(0, o.result[2]) << "OpenBLAS ran on one thread only";
}

// Without the socket rule (MPI ranks): TCP stays, the rest is refused.
TEST(Sandbox, RankPolicyKeepsTcp)
{
    TempDir dir("rank");
    sandbox_policy p = worker_like(dir.path, 0);
    p.scope_abstract_unix = 0;
    pid_t parent = getpid();
    std::vector<std::function<int()>> probes = {
        [&] {
            int fd = socket(AF_INET, SOCK_STREAM, 0);
            if (fd < 0) return errno;
            close(fd);
            return 0;
        },
        [&] { return fails(ptrace(PTRACE_ATTACH, parent, nullptr, nullptr)); },
    };
    Outcome o = run_confined(p, probes);
    ASSERT_EQ(2, o.n);
    EXPECT_EQ(0, o.result[0]);
    EXPECT_EQ(EPERM, o.result[1]);
}

// deny_connect: no connect to a unix socket by its path (Landlock lets it
// through), while a socketpair and its messages, descriptors included, work.
TEST(Sandbox, DenyConnectKeepsSocketpairs)
{
    TempDir dir("unix");
    std::string path = dir.path + "/admin.sock";
    int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {};
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
    ASSERT_EQ(0, bind(listener, (struct sockaddr *)&a, sizeof a));
    ASSERT_EQ(0, listen(listener, 4));
    sandbox_policy p = worker_like(dir.path);
    p.deny_connect = 1;
    std::vector<std::function<int()>> probes = {
        [&] {
            int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (fd < 0) return -errno;
            int rc = fails(connect(fd, (struct sockaddr *)&a, sizeof a));
            close(fd);
            return rc;
        },
        [&] {
            int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
            if (fd < 0) return -errno;
            int rc = fails(sendto(fd, "x", 1, 0, (struct sockaddr *)&a, sizeof a));
            close(fd);
            return rc;
        },
        [&] {
            int sv[2];
            if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return errno;
            char c = 'x';
            struct iovec v = {&c, 1};
            char space[CMSG_SPACE(sizeof(int))] = {};
            struct msghdr m = {};
            m.msg_iov = &v;
            m.msg_iovlen = 1;
            m.msg_control = space;
            m.msg_controllen = sizeof space;
            struct cmsghdr *h = CMSG_FIRSTHDR(&m);
            h->cmsg_level = SOL_SOCKET;
            h->cmsg_type = SCM_RIGHTS;
            h->cmsg_len = CMSG_LEN(sizeof(int));
            memcpy(CMSG_DATA(h), &sv[0], sizeof(int));
            int rc = sendmsg(sv[1], &m, 0) == 1 && send(sv[1], "y", 1, 0) == 1 ? 0 : errno;
            close(sv[0]);
            close(sv[1]);
            return rc;
        },
    };
    // The premise: without the rule, Landlock lets the connect through.
    sandbox_policy open_policy = worker_like(dir.path);
    Outcome without = run_confined(open_policy, {probes[0]});
    ASSERT_EQ(1, without.n);
    EXPECT_EQ(0, without.result[0]) << "connect by path without deny_connect";
    Outcome o = run_confined(p, probes);
    close(listener);
    ASSERT_EQ(3, o.n);
    EXPECT_EQ(EPERM, o.result[0]) << "connect to " << path;
    EXPECT_EQ(EPERM, o.result[1]) << "sendto " << path;
    EXPECT_EQ(0, o.result[2]) << "sendmsg with a descriptor on a socketpair";
}

TEST(Sandbox, PolicyReachesWhatIsBeneathARule)
{
    TempDir stubs("stubs");
    std::string inside = stubs.file("tokens", "x y call\n");
    sandbox_policy p;
    err_t err;
    sandbox_policy_init(&p);
    ASSERT_EQ(0, sandbox_policy_add(&p, stubs.path.c_str(), SANDBOX_READ, "the stubs", &err));
    const sandbox_rule *r = nullptr;
    EXPECT_EQ(1, sandbox_policy_reaches(&p, inside.c_str(), &r));
    ASSERT_NE(nullptr, r);
    EXPECT_STREQ("the stubs", r->why);
    // Through a symbolic link from elsewhere, too.
    TempDir other("other");
    std::string link = other.path + "/link";
    ASSERT_EQ(0, symlink(inside.c_str(), link.c_str()));
    EXPECT_EQ(1, sandbox_policy_reaches(&p, link.c_str(), &r));
    std::string outside = other.file("key", "k");
    EXPECT_EQ(0, sandbox_policy_reaches(&p, outside.c_str(), &r));
    // A sibling whose name begins with the rule's is not beneath it.
    std::string sibling = stubs.path + "x";
    EXPECT_EQ(0, sandbox_policy_reaches(&p, sibling.c_str(), &r));
    // The system's paths do not reach /etc as a whole.
    sandbox_policy s;
    sandbox_policy_init(&s);
    ASSERT_EQ(0, sandbox_policy_add_system(&s, &err));
    EXPECT_EQ(0, sandbox_policy_reaches(&s, "/etc/shadow", &r));
    EXPECT_EQ(1, sandbox_policy_reaches(&s, "/etc/ld.so.cache", &r));
}

// PR_SET_DUMPABLE 0 (sandbox_harden_dispatcher): a process of the same user
// with no capability, even outside any Landlock domain, cannot read its memory.
TEST(Sandbox, NotDumpableKeepsTheSameUserOut)
{
    int ready[2], done[2];
    ASSERT_EQ(0, pipe(ready));
    ASSERT_EQ(0, pipe(done));
    pid_t target = fork();
    if (target == 0) {
        sandbox_no_dump();
        if (write(ready[1], "r", 1) != 1) _exit(1);
        char c;
        if (read(done[0], &c, 1) < 0) _exit(1);
        _exit(0);
    }
    char c;
    ASSERT_EQ(1, read(ready[0], &c, 1));
    int r[2];
    ASSERT_EQ(0, pipe(r));
    pid_t prober = fork();
    if (prober == 0) {
        struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
        struct __user_cap_data_struct d[2];
        memset(d, 0, sizeof d);
        int e = syscall(SYS_capset, &h, d) == 0 ? 0 : -1;
        if (e == 0) e = open_errno("/proc/" + std::to_string(target) + "/mem", O_RDONLY);
        if (write(r[1], &e, sizeof e) != (ssize_t)sizeof e) _exit(1);
        _exit(0);
    }
    int e = -2;
    ASSERT_EQ((ssize_t)sizeof e, read(r[0], &e, sizeof e));
    waitpid(prober, nullptr, 0);
    ASSERT_EQ(1, write(done[1], "d", 1));
    waitpid(target, nullptr, 0);
    EXPECT_EQ(EACCES, e) << "open /proc/<not dumpable>/mem without CAP_SYS_PTRACE";
}

} // namespace
