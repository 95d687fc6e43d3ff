// raw_peer.h -- a peer that speaks bytes, not the client library: packets
// built by hand, whole HELLOs, reply statuses read from a socket, for tests
// of what a hostile or broken client does to a server.
#ifndef NUMRPC_TESTS_RAW_PEER_H
#define NUMRPC_TESTS_RAW_PEER_H

#include <cstdint>
#include <string>
#include <vector>

// One packet: header then payload (big-endian fields).
std::vector<uint8_t> Packet(uint8_t type, uint32_t call_id, uint32_t flags, const std::vector<uint8_t> &payload);
// The bytes of a whole HELLO message from a client.
std::vector<uint8_t> HelloBytes();
// Sends a whole HELLO on fd (the socket stays the caller's).
bool SendHello(int fd);
// Reads one REPLY's status from fd (waiting up to 20 s); INT32_MIN when
// none came.  With detail, the reply's detail text too.
int32_t ReadReplyStatus(int fd, std::string *detail = nullptr);
// True when the peer closes the connection (within a safety bound of 20 s).
bool ClosedByPeer(int fd);
// A TCP connection from source address `from` (any 127.x.y.z: all of
// 127/8 is loopback) to 127.0.0.1:port, with a receive buffer of rcvbuf
// bytes if not 0 (set before connecting: the window it offers); -1 on failure.
int ConnectFrom(const char *from, int port, int rcvbuf = 0);

#endif
