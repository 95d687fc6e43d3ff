/* gridrpc_config.h -- reading the GridRPC configuration file
 * (gridrpc_config.c). */
#ifndef NUMRPC_CLIENT_GRIDRPC_CONFIG_H
#define NUMRPC_CLIENT_GRIDRPC_CONFIG_H

#include <stddef.h>

#include "numrpc.h"
#include "numrpc_gridrpc.h"

/* Reads the file at path into *cfg (its servers into servers[len]) and
 * *timeout (-1 = not given); errors become the thread's GridRPC error. */
grpc_error_t gridrpc_read_config(const char *path, numrpc_config *cfg, char *servers, size_t len,
                                 double *timeout);

#endif
