/* gridrpc_stack.h -- GridRPC argument stacks (gridrpc_stack.c): the
 * structure behind grpc_arg_stack_t, read by the calls that take one. */
#ifndef NUMRPC_CLIENT_GRIDRPC_STACK_H
#define NUMRPC_CLIENT_GRIDRPC_STACK_H

#include "numrpc_gridrpc.h"

struct grpc_arg_stack_np {
    int max, n;
    void **items; /* owned by the stack; the pointees are the caller's */
};

#endif
