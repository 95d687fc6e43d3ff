// raw_peer.cc -- a peer that speaks bytes for server tests: hand-built
// packets, whole HELLOs framed by the message layer, raw reply reading.
#include "raw_peer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "protocol.h"
extern "C" {
#include "msg.h"
}

std::vector<uint8_t> Packet(uint8_t type, uint32_t call_id, uint32_t flags, const std::vector<uint8_t> &payload)
{
    std::vector<uint8_t> p = {0x4E, 0x52, PROTO_VERSION, type};
    auto u32 = [&p](uint32_t v) {
        for (int s = 24; s >= 0; s -= 8) p.push_back(static_cast<uint8_t>(v >> s));
    };
    u32(call_id);
    u32(flags);
    u32(static_cast<uint32_t>(payload.size()));
    p.insert(p.end(), payload.begin(), payload.end());
    return p;
}

std::vector<uint8_t> HelloBytes()
{
    transport_bytes out = {nullptr, 0, 0, 1 << 16};
    wire_writer w;
    err_t err;
    std::vector<uint8_t> bytes;
    if (wire_writer_init(&w, -1, 4096, &err) != 0) return bytes;
    wire_writer_attach(&w, transport_memory_sink(&out));
    msg_hello h = {};
    h.version = PROTO_VERSION;
    h.packet_size = 4096;
    snprintf(h.peer, sizeof h.peer, "raw_peer");
    if (msg_write_hello(&w, 1, &h, &err) == 0) bytes.assign(out.p, out.p + out.len);
    wire_writer_free(&w);
    transport_bytes_free(&out);
    return bytes;
}

bool SendHello(int fd)
{
    std::vector<uint8_t> b = HelloBytes();
    return !b.empty() && send(fd, b.data(), b.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(b.size());
}

static bool RecvAll(int fd, uint8_t *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = recv(fd, p + got, n - got, 0);
        if (k <= 0) return false;
        got += static_cast<size_t>(k);
    }
    return true;
}

int32_t ReadReplyStatus(int fd, std::string *detail)
{
    timeval tv{20, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    uint8_t hdr[PROTO_HEADER_SIZE];
    if (!RecvAll(fd, hdr, sizeof hdr) || hdr[3] != PROTO_REPLY) return INT32_MIN;
    uint32_t len = uint32_t(hdr[12]) << 24 | uint32_t(hdr[13]) << 16 | uint32_t(hdr[14]) << 8 | hdr[15];
    if (len < 8 || len > PROTO_MAX_PACKET) return INT32_MIN;
    std::vector<uint8_t> body(len);
    if (!RecvAll(fd, body.data(), len)) return INT32_MIN;
    auto u32 = [&body](size_t at) {
        return uint32_t(body[at]) << 24 | uint32_t(body[at + 1]) << 16 | uint32_t(body[at + 2]) << 8 | body[at + 3];
    };
    if (detail != nullptr) {
        uint32_t n = u32(4);
        detail->assign(n <= len - 8 ? std::string(body.begin() + 8, body.begin() + 8 + n) : std::string());
    }
    return static_cast<int32_t>(u32(0));
}

bool ClosedByPeer(int fd)
{
    timeval tv{20, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char c[256];
    for (;;) {
        ssize_t k = recv(fd, c, sizeof c, 0);
        if (k == 0) return true;
        if (k < 0) return errno == ECONNRESET;
    }
}

int ConnectFrom(const char *from, int port, int rcvbuf)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (rcvbuf > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    sockaddr_in src = {}, dst = {};
    src.sin_family = dst.sin_family = AF_INET;
    dst.sin_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET, from, &src.sin_addr) != 1 || inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr) != 1 ||
        bind(fd, reinterpret_cast<sockaddr *>(&src), sizeof src) != 0 ||
        connect(fd, reinterpret_cast<sockaddr *>(&dst), sizeof dst) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}
