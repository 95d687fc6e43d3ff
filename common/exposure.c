/* exposure.c -- refuses to serve beyond loopback unprotected: the one rule
 * numrpc-server and numrpc-metaserver apply before they accept anything. */
#include "exposure.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

int exposure_addr_loopback(const struct sockaddr *sa)
{
    if (sa != NULL && sa->sa_family == AF_INET) {
        uint32_t a = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
        return (a >> 24) == 127;
    }
    if (sa != NULL && sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a)) return 1;
        return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
    }
    return 0;
}

int exposure_loopback_only(int listen_fd)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    memset(&ss, 0, sizeof ss);
    return getsockname(listen_fd, (struct sockaddr *)&ss, &sl) == 0 && exposure_addr_loopback((struct sockaddr *)&ss);
}

int exposure_check(int listen_fd, const char *bind_addr, const exposure_guard *g, err_t *err)
{
    if (g->tokens_on || g->tls_on || g->allow_insecure || exposure_loopback_only(listen_fd)) return 0;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int port = 0;
    if (getsockname(listen_fd, (struct sockaddr *)&ss, &sl) == 0)
        port = ntohs(ss.ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)&ss)->sin6_port
                                              : ((const struct sockaddr_in *)&ss)->sin_port);
    return err_set(err, NUMRPC_EINVAL,
                   "refusing to listen on %s:%d without --token-file or --tls-cert; add one, or "
                   "--allow-insecure to accept anyone who reaches the port",
                   bind_addr, port);
}
