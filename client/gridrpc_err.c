/* gridrpc_err.c -- GridRPC's error codes: their strings, the one table
 * from numrpc results, and the calling thread's last error and detail. */
#include "gridrpc_err.h"

#include <stdarg.h>
#include <stdio.h>

#include "error.h"

static __thread grpc_error_t last_code;
static __thread char last_detail[ERR_DETAIL_MAX];

grpc_error_t gridrpc_finish(grpc_error_t code, const char *detail)
{
    last_code = code;
    snprintf(last_detail, sizeof last_detail, "%s", code == GRPC_NO_ERROR || !detail ? "" : detail);
    return code;
}

grpc_error_t gridrpc_failf(grpc_error_t code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_detail, sizeof last_detail, fmt, ap);
    va_end(ap);
    last_code = code;
    return code;
}

static const char *const descriptions[] = {
    [GRPC_NO_ERROR] = "GridRPC success",
    [GRPC_NOT_INITIALIZED] = "GridRPC is not initialized (call grpc_initialize first)",
    [GRPC_CONFIGFILE_NOT_FOUND] = "GridRPC configuration file not found",
    [GRPC_CONFIGFILE_ERROR] = "GridRPC configuration file has an error",
    [GRPC_SERVER_NOT_FOUND] = "GridRPC server not found",
    [GRPC_FUNCTION_NOT_FOUND] = "GridRPC function not found on the server",
    [GRPC_INVALID_FUNCTION_HANDLE] = "GridRPC function handle is invalid",
    [GRPC_INVALID_SESSION_ID] = "GridRPC session id is invalid",
    [GRPC_RPC_REFUSED] = "GridRPC call refused by the server",
    [GRPC_COMMUNICATION_FAILED] = "GridRPC communication with the server failed",
    [GRPC_SESSION_FAILED] = "GridRPC session failed (grpc_get_error tells why)",
    [GRPC_NOT_COMPLETED] = "GridRPC call has not completed",
    [GRPC_NONE_COMPLETED] = "GridRPC: none of the calls has completed",
    [GRPC_OTHER_ERROR_CODE] = "GridRPC error (see the detail)",
    [GRPC_UNKNOWN_ERROR_CODE] = "GridRPC unknown error code",
    [GRPC_ALREADY_INITIALIZED] = "GridRPC is already initialized",
    [GRPC_LAST_ERROR_CODE] = "GridRPC last error code (a bound, not an error)",
};

const char *grpc_error_string(grpc_error_t code)
{
    if (code == GRPC_CANCELED_NP) return "GridRPC session cancelled";
    if (code == GRPC_TIMEOUT_NP) return "GridRPC session timed out";
    if (code == GRPC_INVALID_DATA_NP) return "GridRPC data is invalid (not initialised, freed, or gone from its server)";
    if (code < 0 || code > GRPC_LAST_ERROR_CODE) return descriptions[GRPC_UNKNOWN_ERROR_CODE];
    return descriptions[code];
}

/* numrpc results and their GridRPC codes: of a call, of binding a handle. */
static const struct {
    int rc;
    grpc_error_t call, bind;
} error_map[] = {
    {NUMRPC_OK, GRPC_NO_ERROR, GRPC_NO_ERROR},
    {NUMRPC_ENOENT, GRPC_FUNCTION_NOT_FOUND, GRPC_FUNCTION_NOT_FOUND},
    {NUMRPC_ENOSERVER, GRPC_SERVER_NOT_FOUND, GRPC_SERVER_NOT_FOUND},
    {NUMRPC_ECONNECT, GRPC_COMMUNICATION_FAILED, GRPC_SERVER_NOT_FOUND},
    {NUMRPC_EIO, GRPC_COMMUNICATION_FAILED, GRPC_SERVER_NOT_FOUND},
    {NUMRPC_EPROTO, GRPC_COMMUNICATION_FAILED, GRPC_COMMUNICATION_FAILED},
    {NUMRPC_EVERSION, GRPC_COMMUNICATION_FAILED, GRPC_COMMUNICATION_FAILED},
    {NUMRPC_EAUTH, GRPC_RPC_REFUSED, GRPC_RPC_REFUSED},
    {NUMRPC_EBUSY, GRPC_RPC_REFUSED, GRPC_RPC_REFUSED},
    {NUMRPC_ECANCELLED, GRPC_CANCELED_NP, GRPC_CANCELED_NP},
    {NUMRPC_ETIMEDOUT, GRPC_TIMEOUT_NP, GRPC_TIMEOUT_NP},
    {NUMRPC_ENOHANDLE, GRPC_INVALID_DATA_NP, GRPC_INVALID_DATA_NP},
};

grpc_error_t gridrpc_map_error(int rc, int binding_handle)
{
    for (size_t i = 0; i < sizeof error_map / sizeof *error_map; i++)
        if (error_map[i].rc == rc) return binding_handle ? error_map[i].bind : error_map[i].call;
    return GRPC_OTHER_ERROR_CODE;
}

grpc_error_t gridrpc_fail_numrpc(int rc)
{
    return gridrpc_finish(gridrpc_map_error(rc, 0), numrpc_last_error_detail());
}

grpc_error_t grpc_get_last_error(void)
{
    return last_code;
}

const char *grpc_last_error_detail_np(void)
{
    return last_detail;
}

void grpc_perror(const char *str)
{
    const char *what = grpc_error_string(last_code);
    if (str && *str) fprintf(stderr, "%s: ", str);
    if (last_detail[0]) fprintf(stderr, "%s (%s)\n", what, last_detail);
    else fprintf(stderr, "%s\n", what);
}

