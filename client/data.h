/* data.h -- the data-handle API's internal side: what numrpc_finalize does
 * with the process's handles (data.c holds numrpc_data_put/new/get/free). */
#ifndef NUMRPC_CLIENT_DATA_H
#define NUMRPC_CLIENT_DATA_H

/* Stops lease renewal and frees every handle of the process, on its server
 * (best effort, each server given a few seconds) and here. */
void data_finalize(void);

#endif
