/* exposure.h -- the safe-default rule for a listening socket: loopback is
 * always allowed; beyond it only with tokens or TLS, or when told to accept
 * anyone who reaches the port (exposure.c). */
#ifndef NUMRPC_COMMON_EXPOSURE_H
#define NUMRPC_COMMON_EXPOSURE_H

#include "error.h"

/* What protects the port.  tls_on: TLS is configured (false until TLS
 * exists); allow_insecure: --allow-insecure. */
typedef struct exposure_guard {
    int tokens_on;
    int tls_on;
    int allow_insecure;
} exposure_guard;

/* 0 when the socket listen_fd (bound as bind_addr) may serve, or EINVAL
 * "refusing to listen on ADDR:PORT without --token-file or --tls-cert;
 * add one, or --allow-insecure to accept anyone who reaches the port". */
int exposure_check(int listen_fd, const char *bind_addr, const exposure_guard *g, err_t *err);
/* True when the socket listen_fd accepts only loopback connections. */
int exposure_loopback_only(int listen_fd);
/* True when sa (NULL: false) is a loopback address (127/8, ::1, v4-mapped). */
struct sockaddr;
int exposure_addr_loopback(const struct sockaddr *sa);

#endif
