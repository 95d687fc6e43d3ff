// meta_proc.h -- a process of this build tree (metaserver or server) started
// with --port-file for a test, optionally in a cgroup or network namespace.
#ifndef NUMRPC_TESTS_META_PROC_H
#define NUMRPC_TESTS_META_PROC_H

#include <sys/types.h>

#include <string>
#include <vector>

// Waits (bounded) for the port the process writes; SIGKILLed at the end.
class Proc {
  public:
    Proc(std::vector<std::string> args, const std::string &cgroup = "", const std::string &netns = "");
    ~Proc();
    Proc(const Proc &) = delete;
    Proc &operator=(const Proc &) = delete;
    int port() const { return port_; }
    pid_t pid() const { return pid_; }
    bool alive() const;
    void signal(int sig) const;
    // Sends sig and waits for the exit (bounded; SIGKILL after 10 s).
    void stop(int sig);

  private:
    pid_t pid_ = -1;
    int port_ = 0;
    std::string port_file_;
};

#endif
