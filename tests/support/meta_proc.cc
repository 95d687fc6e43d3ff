// meta_proc.cc -- starting and stopping a process of this build tree that
// writes its port to a file (the metaserver tests' servers and metaservers).
#include "meta_proc.h"

#include "server_proc.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

Proc::Proc(std::vector<std::string> args, const std::string &cgroup, const std::string &netns)
{
    char tmpl[] = "/tmp/numrpc-meta-port-XXXXXX";
    int fd = mkstemp(tmpl);
    close(fd);
    unlink(tmpl);
    port_file_ = tmpl;
    args.push_back("--port-file");
    args.push_back(port_file_);
    if (!netns.empty()) args.insert(args.begin(), {"/usr/sbin/ip", "netns", "exec", netns});
    pid_ = fork();
    if (pid_ == 0) {
        if (!cgroup.empty()) { // the child joins it before exec
            std::ofstream procs(cgroup + "/cgroup.procs");
            procs << getpid() << std::endl;
        }
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        if (getenv("META_TEST_VERBOSE") == nullptr) dup2(null, 2);
        std::vector<char *> argv;
        for (auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
        argv.push_back(nullptr);
        execv(argv[0], argv.data());
        _exit(127);
    }
    for (int i = 0; i < 1000 && port_ == 0 && alive(); i++) {
        std::ifstream in(port_file_);
        int p = 0;
        if (in >> p && p > 0) port_ = p;
        else std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

Proc::~Proc()
{
    stop(SIGKILL);
    unlink(port_file_.c_str());
}

bool Proc::alive() const
{
    int st;
    return pid_ > 0 && waitpid(pid_, &st, WNOHANG) == 0;
}

void Proc::signal(int sig) const
{
    if (pid_ > 0) kill(pid_, sig);
}

void Proc::stop(int sig)
{
    if (pid_ <= 0) return;
    stop_process(pid_, sig, 1000);
    pid_ = -1;
}
