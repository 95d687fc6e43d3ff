// admin_socket.cc -- one request on a numrpc-server's local admin socket.
#include "admin_socket.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>

std::string Admin(const std::string &socket_path, const std::string &request)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", socket_path.c_str());
    if (connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) != 0) {
        close(fd);
        return "error connect";
    }
    std::string line = request + "\n";
    if (write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
        close(fd);
        return "error write";
    }
    std::string reply;
    char buf[512];
    ssize_t k;
    while ((k = read(fd, buf, sizeof buf)) > 0) reply.append(buf, static_cast<size_t>(k));
    close(fd);
    return reply;
}
