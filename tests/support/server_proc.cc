// server_proc.cc -- spawning and stopping numrpc-server processes for the
// integration tests (free port through --port 0 and --port-file).
#include "server_proc.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

ServerProc::ServerProc(const std::vector<std::string> &extra_args)
{
    char tmpl[] = "/tmp/numrpc-test-port-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    close(fd);
    unlink(tmpl);
    port_file_ = tmpl;
    std::vector<std::string> args = {TOP_BUILDDIR "/server/numrpc-server",
                                     "--port", "0", "--bind", "127.0.0.1",
                                     "--stubs", TOP_BUILDDIR "/stubs/.libs",
                                     "--port-file", port_file_, "--quiet",
                                     "--workers", "2", "--blas-threads", "1"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    // NUMRPC_TEST_SERVER_LOG=LEVEL (notice, info, debug): the servers log
    // at that level instead of errors only, to see what a failing test saw.
    if (const char *level = getenv("NUMRPC_TEST_SERVER_LOG")) {
        args.erase(std::find(args.begin(), args.end(), "--quiet"));
        args.insert(args.end(), {"--log-level", level});
    }
    pid_ = fork();
    if (pid_ == 0) {
        std::vector<char *> argv;
        for (auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
        argv.push_back(nullptr);
        if (freopen("/dev/null", "w", stdout) == nullptr) _exit(127);
        execv(argv[0], argv.data());
        _exit(127);
    }
    // Bounded wait for the port file (the server writes it once listening).
    for (int i = 0; i < 500 && port_ == 0; i++) {
        std::ifstream in(port_file_);
        int p = 0;
        if (in >> p && p > 0) port_ = p;
        else std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (!alive()) break;
    }
    if (port_ == 0) {
        stop();
        throw std::runtime_error("numrpc-server did not start");
    }
}

ServerProc::~ServerProc()
{
    stop();
    unlink(port_file_.c_str());
}

std::string ServerProc::address() const
{
    return "127.0.0.1:" + std::to_string(port_);
}

bool ServerProc::alive() const
{
    if (pid_ <= 0) return false;
    int status;
    return waitpid(pid_, &status, WNOHANG) == 0;
}

void stop_process(pid_t pid, int sig, int tries)
{
    kill(pid, sig);
    for (int i = 0; i < tries; i++) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
}

void ServerProc::stop()
{
    if (pid_ <= 0) return;
    stop_process(pid_, SIGTERM, 300);
    pid_ = -1;
}

int connect_loopback(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(port));
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) != 0) {
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

int run_server_to_exit(const std::vector<std::string> &extra, std::string *err_text)
{
    char tmpl[] = "/tmp/numrpc-server-err-XXXXXX";
    int efd = mkstemp(tmpl);
    std::vector<std::string> args = {TOP_BUILDDIR "/server/numrpc-server", "--port", "0", "--stubs",
                                     TOP_BUILDDIR "/stubs/.libs", "--workers", "1", "--admin-socket", "none"};
    args.insert(args.end(), extra.begin(), extra.end());
    pid_t pid = fork();
    if (pid == 0) {
        std::vector<char *> argv;
        for (auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
        argv.push_back(nullptr);
        dup2(efd, 2);
        if (freopen("/dev/null", "w", stdout) == nullptr) _exit(127);
        execv(argv[0], argv.data());
        _exit(127);
    }
    int status = 0, code = -1;
    for (int i = 0; i < 1000; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid) {
            code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (code == -1) { // still running: it started
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    std::ifstream in(tmpl);
    err_text->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    close(efd);
    unlink(tmpl);
    return code;
}
