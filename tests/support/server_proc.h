// server_proc.h -- starts a real numrpc-server on 127.0.0.1 with a free port
// for a test, and stops it (SIGTERM, then SIGKILL) when the test ends.
#ifndef NUMRPC_TESTS_SERVER_PROC_H
#define NUMRPC_TESTS_SERVER_PROC_H

#include <sys/types.h>

#include <string>
#include <vector>

class ServerProc {
  public:
    // Starts the server built in this tree with the stub modules of this
    // tree and the extra command-line arguments; waits until it listens.
    explicit ServerProc(const std::vector<std::string> &extra_args = {});
    ~ServerProc();
    ServerProc(const ServerProc &) = delete;
    ServerProc &operator=(const ServerProc &) = delete;

    int port() const { return port_; }
    pid_t pid() const { return pid_; }
    std::string address() const;  // "127.0.0.1:PORT"
    bool alive() const;           // the process has not exited
    void stop();                  // SIGTERM and wait (idempotent)

  private:
    pid_t pid_ = -1;
    int port_ = 0;
    std::string port_file_;
};

// Sends sig to pid and reaps it, waiting at most tries * 10 ms before a
// SIGKILL.
void stop_process(pid_t pid, int sig, int tries);

// A TCP connection to 127.0.0.1:port for raw-byte tests; -1 on failure.
int connect_loopback(int port);

#endif
