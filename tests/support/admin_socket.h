// admin_socket.h -- one request on a numrpc-server's local admin socket
// (register, unregister, list), for tests of live registration.
#ifndef NUMRPC_TESTS_ADMIN_SOCKET_H
#define NUMRPC_TESTS_ADMIN_SOCKET_H

#include <string>

// Sends request on the unix socket at socket_path and returns the server's
// reply line(s), or "error connect" / "error write".
std::string Admin(const std::string &socket_path, const std::string &request);

#endif
