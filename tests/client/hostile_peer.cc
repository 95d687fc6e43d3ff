// hostile_peer.cc -- a numrpc server written in the test: forged
// descriptors for GET_IFACE, CALLs recorded and answered as the test says.
#include "hostile_peer.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

extern "C" {
#include "files.h"
#include "marshal.h"
#include "protocol.h"
}

// ---- Descriptors ----

std::vector<uint8_t> FetchDescriptor(int port, const std::string &routine)
{
    msg_conn c;
    err_t err;
    std::vector<uint8_t> out;
    if (msg_conn_open(&c, "127.0.0.1", port, 5000, 10000, PROTO_DEFAULT_PACKET, &err) != 0) return out;
    msg_hello h = {};
    h.version = PROTO_VERSION;
    h.packet_size = PROTO_DEFAULT_PACKET;
    snprintf(h.peer, sizeof h.peer, "hostile_server_test");
    uint8_t *blob = nullptr;
    uint32_t len = 0;
    int rc = msg_write_hello(&c.writer, 1, &h, &err);
    if (rc == 0) rc = msg_read_hello_reply(&c.reader, 1, c.label, &h, &err);
    if (rc == 0) rc = msg_write_get_iface(&c.writer, 2, routine.c_str(), &err);
    if (rc == 0) rc = msg_read_iface_reply(&c.reader, 2, c.label, &blob, &len, &err);
    if (rc == 0) out.assign(blob, blob + len);
    free(blob);
    msg_conn_free(&c);
    return out;
}

bool DecodeDescriptor(const std::vector<uint8_t> &blob, iface_t *f)
{
    err_t err;
    return iface_decode(blob.data(), blob.size(), f, &err) == 0;
}

std::vector<uint8_t> EncodeDescriptor(iface_t *f)
{
    err_t err;
    uint8_t *blob = nullptr;
    size_t len = 0;
    std::vector<uint8_t> out;
    if (iface_compute_hash(f, &err) == 0 && iface_encode(f, &blob, &len, &err) == 0) out.assign(blob, blob + len);
    free(blob);
    return out;
}

void SetExpr(expr_t *e, const std::vector<int64_t> &words)
{
    free(e->words);
    e->nwords = static_cast<uint32_t>(words.size());
    e->words = words.empty() ? nullptr : static_cast<int64_t *>(malloc(words.size() * sizeof(int64_t)));
    if (!words.empty()) memcpy(e->words, words.data(), words.size() * sizeof(int64_t));
}

int ParamIndex(const iface_t *f, const char *name)
{
    for (uint32_t i = 0; i < f->nparams; i++)
        if (strcmp(f->params[i].name, name) == 0) return static_cast<int>(i);
    return -1;
}

// ---- The server ----

HostileServer::HostileServer()
{
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a = {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 ||
        listen(listen_fd_, 16) != 0 || getsockname(listen_fd_, reinterpret_cast<sockaddr *>(&a), &alen) != 0)
        return; // port_ stays 0: the test's calls fail to connect
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { Accept(); });
}

HostileServer::~HostileServer()
{
    stop_ = true;
    if (acceptor_.joinable()) acceptor_.join();
    std::vector<std::thread> threads;
    {
        std::lock_guard<std::mutex> lock(mu_);
        threads.swap(threads_);
    }
    for (auto &t : threads) t.join();
    if (listen_fd_ >= 0) close(listen_fd_);
}

std::string HostileServer::address() const
{
    return "127.0.0.1:" + std::to_string(port_);
}

void HostileServer::Offer(const std::string &routine, const std::vector<uint8_t> &blob)
{
    std::lock_guard<std::mutex> lock(mu_);
    offered_[routine] = blob;
}

void HostileServer::OnCall(CallHandler handler)
{
    std::lock_guard<std::mutex> lock(mu_);
    handler_ = std::move(handler);
}

std::vector<SeenCall> HostileServer::Calls()
{
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
}

std::string HostileServer::FileBytes()
{
    std::lock_guard<std::mutex> lock(mu_);
    return file_bytes_;
}

void HostileServer::NoteFileBytes(const std::string &bytes)
{
    std::lock_guard<std::mutex> lock(mu_);
    file_bytes_ += bytes;
}

// Waits (polling, so that stop is seen) until fd is readable; false at stop.
static bool WaitReadable(int fd, const std::atomic<bool> &stop)
{
    while (!stop) {
        pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 50) > 0) return true;
    }
    return false;
}

void HostileServer::Accept()
{
    while (WaitReadable(listen_fd_, stop_)) {
        int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        std::lock_guard<std::mutex> lock(mu_);
        threads_.emplace_back([this, fd] { Serve(fd); });
    }
}

void HostileServer::Serve(int fd)
{
    timeval limit = {10, 0}; // a safety bound on every receive
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    msg_conn c;
    err_t err;
    if (msg_conn_init(&c, PROTO_DEFAULT_PACKET, &err) != 0) {
        close(fd);
        return;
    }
    msg_conn_attach(&c, transport_tcp(fd), "hostile");
    int rc = 0;
    while (rc == 0 && (wire_reader_buffered(&c.reader) > 0 || WaitReadable(fd, stop_))) {
        uint32_t type, id;
        rc = wire_next_message(&c.reader, &type, &id, &err);
        if (rc != 0) break;
        if (type == PROTO_HELLO) {
            msg_hello h;
            rc = msg_read_hello(&c.reader, &h, &err);
            h.version = PROTO_VERSION;
            h.packet_size = PROTO_MAX_PACKET;
            snprintf(h.peer, sizeof h.peer, "hostile");
            if (rc == 0) rc = msg_write_hello_reply(&c.writer, id, &h, &err);
        } else if (type == PROTO_GET_IFACE) {
            char name[IFACE_MAX_NAME + 1];
            rc = msg_read_get_iface(&c.reader, name, &err);
            std::vector<uint8_t> blob;
            {
                std::lock_guard<std::mutex> lock(mu_);
                if (offered_.count(name)) blob = offered_[name];
            }
            if (rc == 0 && blob.empty()) rc = msg_reply_simple(&c.writer, id, NUMRPC_ENOENT, "not offered", &err);
            else if (rc == 0)
                rc = msg_write_iface_reply(&c.writer, id, blob.data(), static_cast<uint32_t>(blob.size()), &err);
        } else if (type == PROTO_CALL) {
            msg_call_header h;
            rc = msg_read_call_header(&c.reader, &h, &err);
            if (rc == 0) rc = wire_skip_message(&c.reader, &err);
            if (rc != 0) break;
            CallHandler handler;
            {
                std::lock_guard<std::mutex> lock(mu_);
                calls_.push_back({h.name, wire_reader_offset(&c.reader)});
                handler = handler_;
            }
            if (handler) {
                handler(&c, id);
            } else {
                msg_call_result res = {0, 0, 0};
                rc = msg_reply_begin(&c.writer, id, NUMRPC_ESERVER, "hostile server", &err);
                if (rc == 0) rc = msg_write_call_result(&c.writer, &res, &err);
                if (rc == 0) rc = wire_end(&c.writer, &err);
            }
        } else if (type == PROTO_PROBE) { // a client measuring the link: answered honestly
            uint32_t reply_bytes = 0;
            uint64_t n = 0;
            rc = msg_read_probe(&c.reader, &reply_bytes, &n, &err);
            if (rc == 0 && (n > PROTO_PROBE_MAX_BYTES || reply_bytes > PROTO_PROBE_MAX_BYTES)) break;
            if (rc == 0) rc = msg_read_probe_payload(&c.reader, n, &err);
            if (rc == 0 && !ignore_probes_) rc = msg_write_probe_reply(&c.writer, id, reply_bytes, &err);
        } else {
            rc = wire_skip_message(&c.reader, &err);
        }
    }
    msg_conn_free(&c);
}

void WriteWalkerReply(msg_conn *c, uint32_t call_id, const iface_t *f, void *const *argv)
{
    err_t err;
    iface_shape shapes[IFACE_MAX_PARAMS];
    msg_call_result res = {0, 0, 0};
    int rc = marshal_eval_shapes(f, argv, shapes, &err);
    if (rc == 0) rc = msg_reply_begin(&c->writer, call_id, NUMRPC_OK, "", &err);
    if (rc == 0) rc = msg_write_call_result(&c->writer, &res, &err);
    if (rc == 0) rc = marshal_write(&c->writer, f, argv, shapes, MARSHAL_REPLY, &err);
    if (rc == 0) rc = files_write(&c->writer, f, argv, MARSHAL_REPLY, &err);
    if (rc == 0) wire_end(&c->writer, &err);
}

std::string AskFile(msg_conn *c, uint32_t call_id, uint32_t param, uint32_t length)
{
    err_t err, call_err;
    err_clear(&call_err);
    msg_file_read q = {param, 0, length};
    uint64_t n = 0;
    int rc = msg_write_file_read(&c->writer, call_id, &q, &err);
    if (rc == 0) rc = msg_read_file_data_head(&c->reader, call_id, length, &n, &call_err, &err);
    if (rc != 0 || call_err.code != 0) return "";
    std::string bytes(n, '\0');
    if (wire_get(&c->reader, &bytes[0], n, &err) != 0) return "";
    wire_skip_pad8(&c->reader, &err);
    wire_expect_end(&c->reader, &err);
    return bytes;
}
