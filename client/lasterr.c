/* lasterr.c -- the calling thread's last error and last call's figures,
 * kept per thread so that concurrent callers never see each other's. */
#include "lasterr.h"

static __thread err_t last_err;
static __thread numrpc_call_info last_info;

int client_fail(const err_t *err)
{
    last_err = *err;
    return err->code;
}

void client_succeed(void)
{
    err_clear(&last_err);
}

void client_note_info(const numrpc_call_info *info)
{
    last_info = *info;
}

const char *numrpc_last_error_detail(void)
{
    return last_err.detail;
}

int numrpc_last_call_info(numrpc_call_info *info)
{
    if (info == NULL) return NUMRPC_EINVAL;
    *info = last_info;
    return NUMRPC_OK;
}
