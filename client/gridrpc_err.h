/* gridrpc_err.h -- GridRPC's error codes (gridrpc_err.c): the one table
 * from numrpc results and the calling thread's last GridRPC error. */
#ifndef NUMRPC_CLIENT_GRIDRPC_ERR_H
#define NUMRPC_CLIENT_GRIDRPC_ERR_H

#include "numrpc_gridrpc.h"

/* Records code (and detail, unless NO_ERROR) as the thread's last error;
 * returns code. */
grpc_error_t gridrpc_finish(grpc_error_t code, const char *detail);
grpc_error_t gridrpc_failf(grpc_error_t code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The GridRPC code of numrpc result rc: of a call, or (binding_handle) of
 * binding a handle, where a server that cannot be reached is not found. */
grpc_error_t gridrpc_map_error(int rc, int binding_handle);
/* The thread's numrpc error rc (numrpc_last_error_detail) as its GridRPC
 * last error. */
grpc_error_t gridrpc_fail_numrpc(int rc);

#endif
