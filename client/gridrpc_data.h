/* gridrpc_data.h -- GFD.186 data in GridRPC calls (gridrpc_data.c): which
 * arguments are grpc_data_t, what stands for them, and what follows a call. */
#ifndef NUMRPC_CLIENT_GRIDRPC_DATA_H
#define NUMRPC_CLIENT_GRIDRPC_DATA_H

#include "numrpc_gridrpc.h"

/* Which grpc_data_t an argument was (slot -1: none), for after the call. */
typedef struct gridrpc_data_use {
    int slot;
    unsigned long serial;
} gridrpc_data_use;

/* Live or lately released grpc_data_t records: calls look at their
 * arguments only when > 0. */
int gridrpc_data_count(void);
/* Replaces each pointer argument (not by_value) that is the address of a
 * live grpc_data_t by its server copy (a numrpc handle) or its memory;
 * one of a record released lately is refused (GRPC_INVALID_DATA_NP). */
grpc_error_t gridrpc_data_bind_args(int nparams, const unsigned char *by_value, numrpc_arg *args,
                                    gridrpc_data_use *uses);
/* After a blocking call succeeded: the data of each written parameter is
 * copied to its memory:// outputs. */
grpc_error_t gridrpc_data_finish(int nparams, const unsigned char *writes, const gridrpc_data_use *uses);
/* grpc_finalize: releases every record, freeing server copies but
 * GRPC_PERSISTENT ones, and forgets the memory mappings. */
void gridrpc_data_finalize(void);

#endif
