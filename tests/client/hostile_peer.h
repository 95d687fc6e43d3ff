// hostile_peer.h -- a numrpc server written in the test: it answers HELLO,
// PROBE, GET_IFACE with descriptors the test forged, and CALL as the test says.
#ifndef NUMRPC_TESTS_HOSTILE_PEER_H
#define NUMRPC_TESTS_HOSTILE_PEER_H

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include "iface.h"
#include "msg.h"
}

// ---- Descriptors: fetched from a real server, changed, encoded again ----
// The descriptor blob of routine on 127.0.0.1:port (empty on failure).
std::vector<uint8_t> FetchDescriptor(int port, const std::string &routine);
// Decodes blob into *f (iface_free it); false when it does not decode.
bool DecodeDescriptor(const std::vector<uint8_t> &blob, iface_t *f);
// f's encoding, with its hash recomputed as a real server's would be.
std::vector<uint8_t> EncodeDescriptor(iface_t *f);
// Replaces e with a program: the words given (e's old words are freed).
void SetExpr(expr_t *e, const std::vector<int64_t> &words);
// Index of parameter name in f (-1 when absent).
int ParamIndex(const iface_t *f, const char *name);

// What a CALL looked like to the hostile server.
struct SeenCall {
    std::string routine;
    uint64_t payload_bytes = 0; // the whole request's payload
};

// Answers a CALL after its request was read whole: the test writes what
// it wants on c (FILE_READs, a forged reply); call_id is the CALL's.
using CallHandler = std::function<void(msg_conn *c, uint32_t call_id)>;

class HostileServer {
  public:
    HostileServer();  // listens on 127.0.0.1 (a free port), serves at once
    ~HostileServer(); // stops and joins every thread
    HostileServer(const HostileServer &) = delete;
    HostileServer &operator=(const HostileServer &) = delete;

    int port() const { return port_; }
    std::string address() const;
    // GET_IFACE routine is answered with blob.
    void Offer(const std::string &routine, const std::vector<uint8_t> &blob);
    // CALLs are answered by handler (default: an ESERVER reply).
    void OnCall(CallHandler handler);
    // PROBEs are read and never answered (a link that never measures).
    void IgnoreProbes() { ignore_probes_ = true; }
    std::vector<SeenCall> Calls();
    // Bytes of FILE_DATA the client sent (file contents it served).
    std::string FileBytes();
    // Records bytes a handler read from the client's FILE_DATA.
    void NoteFileBytes(const std::string &bytes);

  private:
    void Accept();
    void Serve(int fd);
    int listen_fd_ = -1;
    int port_ = 0;
    std::atomic<bool> stop_{false};
    std::mutex mu_;
    std::map<std::string, std::vector<uint8_t>> offered_;
    CallHandler handler_;
    std::vector<SeenCall> calls_;
    std::string file_bytes_;
    std::atomic<bool> ignore_probes_{false};
    std::vector<std::thread> threads_; // mu_
    std::thread acceptor_;
};

// A handler's reply to a CALL: status OK, then the reply half of the call
// as the (forged) interface f says, from argv -- the hostile server's own
// values -- written by the same walker real servers use.
void WriteWalkerReply(msg_conn *c, uint32_t call_id, const iface_t *f, void *const *argv);
// Sends a FILE_READ of length bytes of parameter param and returns what
// the client's FILE_DATA held ("" when it refused or failed).
std::string AskFile(msg_conn *c, uint32_t call_id, uint32_t param, uint32_t length);

#endif
