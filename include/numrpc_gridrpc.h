/* numrpc_gridrpc.h -- the GridRPC end-user API (OGF GFD.52) on libnumrpc:
 * function handles, calls, sessions, errors, and GFD.186 data management. */
#ifndef NUMRPC_GRIDRPC_H
#define NUMRPC_GRIDRPC_H

#include <stddef.h>

#include "numrpc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Types (GFD.52 section 3) ---- */
typedef int grpc_error_t;     /* a GRPC_* code                              */
typedef int grpc_sessionid_t; /* one asynchronous call; > 0 when valid      */

/* A function handle: the caller allocates it (usually on the stack) and
 * grpc_function_handle_default / _init fill it; grpc_function_handle_destruct
 * (or grpc_finalize) releases what it refers to.  The members are the
 * library's: do not read or write them.  A copy of a handle refers to the
 * same binding and is invalidated with it. */
typedef struct grpc_function_handle_s {
    unsigned int magic_np;
    int slot_np;
    unsigned long serial_np;
} grpc_function_handle_t;

/* The id of no session (grpc_probe_or, grpc_get_failed_sessionid, ...). */
#define GRPC_SESSIONID_VOID (-1)

/* ---- Error and status codes (GFD.52 section 3.3), then the extensions ---- */
#define GRPC_NO_ERROR 0
#define GRPC_NOT_INITIALIZED 1
#define GRPC_CONFIGFILE_NOT_FOUND 2
#define GRPC_CONFIGFILE_ERROR 3
#define GRPC_SERVER_NOT_FOUND 4
#define GRPC_FUNCTION_NOT_FOUND 5
#define GRPC_INVALID_FUNCTION_HANDLE 6
#define GRPC_INVALID_SESSION_ID 7
#define GRPC_RPC_REFUSED 8
#define GRPC_COMMUNICATION_FAILED 9
#define GRPC_SESSION_FAILED 10
#define GRPC_NOT_COMPLETED 11
#define GRPC_NONE_COMPLETED 12
#define GRPC_OTHER_ERROR_CODE 13
#define GRPC_UNKNOWN_ERROR_CODE 14
#define GRPC_ALREADY_INITIALIZED 15
#define GRPC_LAST_ERROR_CODE 16
/* Extensions: what grpc_get_error gives for a session that was cancelled
 * (grpc_cancel) or ran past its time limit (grpc_set_timeout_np). */
#define GRPC_CANCELED_NP 100
#define GRPC_TIMEOUT_NP 101
/* A grpc_data_t that grpc_data_init did not fill, or one unbound or freed
 * (or a copy of one); also a call whose data the server no longer holds
 * (freed, lease expired, server restarted). */
#define GRPC_INVALID_DATA_NP 102

/* ---- Initializing and finalizing (5.1) ----
 * config_file_name: NULL or "" = servers from the environment
 * (NUMRPC_SERVER); else a file of "name = value" lines, '#' comments:
 *   servers = host:port[,host:port...]   (several: asynchronous calls of
 *                                         default handles are farmed)
 *   packet_size = bytes                  timeout = seconds (0 = none)
 * GRPC_CONFIGFILE_NOT_FOUND when the file cannot be opened,
 * GRPC_CONFIGFILE_ERROR on a line it cannot use, GRPC_ALREADY_INITIALIZED
 * when called twice.  grpc_finalize cancels and waits for every session
 * still in progress, then releases every handle and session record;
 * GRPC_NOT_INITIALIZED before grpc_initialize.  Neither is MT-safe: call
 * them while no other thread uses the API.  Every other function returns
 * GRPC_NOT_INITIALIZED outside initialize..finalize, except
 * grpc_error_string, grpc_get_last_error, grpc_perror and the argument
 * stack functions. */
NUMRPC_API grpc_error_t grpc_initialize(const char *config_file_name);
NUMRPC_API grpc_error_t grpc_finalize(void);

/* ---- Function handles (5.2) ----
 * _default binds func_name to the configured servers (the first that
 * answers is asked for the routine's interface; asynchronous calls are
 * spread over all of them), _init to one server "host:port".  Both fetch
 * the routine's interface now: GRPC_SERVER_NOT_FOUND (no server answers
 * or the name is not host:port), GRPC_FUNCTION_NOT_FOUND, GRPC_RPC_REFUSED.
 * grpc_get_handle gives the handle a session was started with (the
 * caller's own pointer).  GRPC_INVALID_FUNCTION_HANDLE for a NULL, never
 * initialised or destructed handle. */
NUMRPC_API grpc_error_t grpc_function_handle_default(grpc_function_handle_t *handle,
                                                     const char *func_name);
NUMRPC_API grpc_error_t grpc_function_handle_init(grpc_function_handle_t *handle,
                                                  const char *server_name,
                                                  const char *func_name);
NUMRPC_API grpc_error_t grpc_function_handle_destruct(grpc_function_handle_t *handle);
NUMRPC_API grpc_error_t grpc_get_handle(grpc_function_handle_t **handle,
                                        grpc_sessionid_t session_id);

/* ---- Calls (5.3) ----
 * The routine's arguments follow as plain C values in IDL order, exactly
 * as numrpc_call takes them (numrpc.h): scalars of mode in by value,
 * complex scalars and everything else by pointer; how many are read comes
 * from the routine's interface.  grpc_call blocks and returns the call's
 * own code (GRPC_FUNCTION_NOT_FOUND, GRPC_COMMUNICATION_FAILED,
 * GRPC_RPC_REFUSED, GRPC_OTHER_ERROR_CODE for bad arguments or a routine
 * that crashed, ...).  grpc_call_async starts the call, writes its session
 * id and returns at once; the arrays and out scalars stay the caller's and
 * must stay valid and untouched until a wait returns the session (or a
 * probe says it is complete); they are written only if it succeeds. */
NUMRPC_API grpc_error_t grpc_call(grpc_function_handle_t *handle, ...);
NUMRPC_API grpc_error_t grpc_call_async(grpc_function_handle_t *handle,
                                        grpc_sessionid_t *session_id, ...);
/* The same with the number of arguments the caller wrote (the macros
 * below count them), checked against the interface before any is read. */
NUMRPC_API grpc_error_t grpc_call_counted_np_(int nargs, grpc_function_handle_t *handle, ...);
NUMRPC_API grpc_error_t grpc_call_async_counted_np_(int nargs, grpc_function_handle_t *handle,
                                                    grpc_sessionid_t *session_id, ...);
#ifndef NUMRPC_GRPC_NO_ARG_COUNT
/* A wrong argument count is reported (GRPC_OTHER_ERROR_CODE) instead of
 * reading garbage.  (grpc_call)(...) or defining NUMRPC_GRPC_NO_ARG_COUNT
 * calls the plain functions (needed above 62 arguments). */
#define grpc_call(...) grpc_call_counted_np_(NUMRPC_NARG_(__VA_ARGS__) - 1, __VA_ARGS__)
#define grpc_call_async(...)                                                   \
    grpc_call_async_counted_np_(NUMRPC_NARG_(__VA_ARGS__) - 2, __VA_ARGS__)
#endif

/* ---- Asynchronous control (5.4) ----
 * grpc_probe: GRPC_NO_ERROR when the session is complete (a wait returns at
 * once), GRPC_NOT_COMPLETED while it runs.  grpc_probe_or: GRPC_NO_ERROR
 * with a complete session of the list in *id_ptr, else GRPC_NONE_COMPLETED
 * with *id_ptr = GRPC_SESSIONID_VOID.  Neither returns the session.
 * grpc_cancel asks the session to stop and returns at once: its server
 * stops the routine; the session must still be waited for, and a wait then
 * returns GRPC_SESSION_FAILED with grpc_get_error = GRPC_CANCELED_NP (a
 * session already complete is not changed).  grpc_cancel_all does that for
 * every session in progress.  GRPC_INVALID_SESSION_ID for an id no wait
 * can return (never started, or already returned). */
NUMRPC_API grpc_error_t grpc_probe(grpc_sessionid_t session_id);
NUMRPC_API grpc_error_t grpc_probe_or(grpc_sessionid_t *id_array, size_t length,
                                      grpc_sessionid_t *id_ptr);
NUMRPC_API grpc_error_t grpc_cancel(grpc_sessionid_t session_id);
NUMRPC_API grpc_error_t grpc_cancel_all(void);

/* ---- Waiting (5.5) ----
 * A wait "returns" a session: each session is returned exactly once, to
 * one waiter; afterwards its id is GRPC_INVALID_SESSION_ID for waits,
 * probes and cancel, while grpc_get_error and grpc_get_handle still answer.
 * Each returns GRPC_NO_ERROR, or GRPC_SESSION_FAILED when a session it
 * returned failed (its id goes to grpc_get_failed_sessionid, its code to
 * grpc_get_error).  An invalid id in a list: GRPC_INVALID_SESSION_ID and
 * nothing is waited for.  grpc_wait_or / grpc_wait_any return one complete
 * session (*id_ptr); grpc_wait_any with no session in progress gives
 * GRPC_INVALID_SESSION_ID.  grpc_wait_all returns every session in progress
 * when it was entered.  Threads: several may wait at once; a session
 * another thread is waiting for is returned to one of them only. */
NUMRPC_API grpc_error_t grpc_wait(grpc_sessionid_t session_id);
NUMRPC_API grpc_error_t grpc_wait_and(grpc_sessionid_t *id_array, size_t length);
NUMRPC_API grpc_error_t grpc_wait_or(grpc_sessionid_t *id_array, size_t length,
                                     grpc_sessionid_t *id_ptr);
NUMRPC_API grpc_error_t grpc_wait_all(void);
NUMRPC_API grpc_error_t grpc_wait_any(grpc_sessionid_t *id_ptr);

/* ---- Error reporting (5.6) ----
 * grpc_error_string: a static description; an unknown code gives the same
 * string as GRPC_UNKNOWN_ERROR_CODE.  grpc_get_error: the session's code
 * (GRPC_NO_ERROR while it runs without error), GRPC_INVALID_SESSION_ID
 * for an id never started (or forgotten: the latest 16384 returned
 * sessions are remembered).  grpc_get_last_error: the code the calling
 * thread's last GridRPC call returned.  grpc_get_failed_sessionid pops the
 * failed sessions the waits reported, oldest first, one per call, then
 * gives GRPC_SESSIONID_VOID; it returns GRPC_NO_ERROR.  grpc_perror prints
 * "str: description (detail)" of the thread's last error to stderr. */
NUMRPC_API const char *grpc_error_string(grpc_error_t error_code);
NUMRPC_API grpc_error_t grpc_get_error(grpc_sessionid_t session_id);
NUMRPC_API grpc_error_t grpc_get_last_error(void);
NUMRPC_API grpc_error_t grpc_get_failed_sessionid(grpc_sessionid_t *id_ptr);
NUMRPC_API void grpc_perror(const char *str);

/* ---- Extensions (_np): argument stacks ----
 * An argument stack holds one pointer per argument, pushed in IDL order:
 * every argument by pointer, scalars of mode in too (a pointer to an int,
 * a double, ...), except a string, pushed as its char * itself.  The stack
 * and what it points at are the caller's; the values of in scalars are
 * copied when the call starts.  new_np gives NULL for maxsize < 0 or no
 * memory; push_np fails (GRPC_OTHER_ERROR_CODE) on a full stack; pop_np
 * gives the last pointer pushed, or NULL on an empty stack. */
typedef struct grpc_arg_stack_np grpc_arg_stack_t;
NUMRPC_API grpc_arg_stack_t *grpc_arg_stack_new_np(int maxsize);
NUMRPC_API grpc_error_t grpc_arg_stack_push_arg_np(grpc_arg_stack_t *stack, void *arg);
NUMRPC_API void *grpc_arg_stack_pop_arg_np(grpc_arg_stack_t *stack);
NUMRPC_API grpc_error_t grpc_arg_stack_destruct_np(grpc_arg_stack_t *stack);
NUMRPC_API grpc_error_t grpc_call_arg_stack_np(grpc_function_handle_t *handle,
                                               grpc_arg_stack_t *stack);
NUMRPC_API grpc_error_t grpc_call_arg_stack_async_np(grpc_function_handle_t *handle,
                                                     grpc_sessionid_t *session_id,
                                                     grpc_arg_stack_t *stack);

/* ---- Extensions (_np): session timing and details ---- */
typedef struct grpc_session_info_np {
    int complete;              /* 1 when the session is complete            */
    grpc_error_t error;        /* as grpc_get_error                         */
    int numrpc_error;          /* the numrpc code behind it (numrpc.h)      */
    unsigned long long bytes_sent, bytes_received; /* on the wire           */
    double send_seconds;       /* marshalling and sending the request       */
    double compute_seconds;    /* the routine on the server                 */
    double receive_seconds;    /* receiving the reply, less compute_seconds */
    double total_seconds;      /* from grpc_call_async to completion        */
    char server[64];           /* "host:port" that ran it                   */
} grpc_session_info_np;
/* The figures of a session in progress or returned (complete ones: all of
 * them; running ones: the server so far).  GRPC_INVALID_SESSION_ID for an
 * unknown id. */
NUMRPC_API grpc_error_t grpc_session_info_get_np(grpc_sessionid_t session_id,
                                                 grpc_session_info_np *info);
/* The detail of the thread's last error ("dmmul: takes 4 arguments ...");
 * "" after success.  Valid until the thread's next GridRPC call. */
NUMRPC_API const char *grpc_last_error_detail_np(void);
/* The time limit of every call started afterwards (0 = none), as
 * numrpc_set_timeout; such a session fails with GRPC_TIMEOUT_NP. */
NUMRPC_API grpc_error_t grpc_set_timeout_np(double seconds);

/* ---- Data management (OGF GFD.186) on numrpc data handles ----
 * docs/gridrpc.md says what is covered.  A grpc_data_t describes one array:
 * its element type, its dimensions (a 0-terminated list: {n, 0} a vector,
 * {rows, cols, 0} a column-major matrix, leading dimension rows), where it
 * comes from (input URIs) and where it should be (output URIs, each with a
 * mode).  URIs:
 *   memory://localhost/KEY  the caller's memory registered under KEY with
 *                           grpc_data_memory_mapping_set ("memory:///KEY" too)
 *   numrpc://host:port      a numrpc server: the data is kept there as a
 *                           handle (docs/handles.md); "numrpc://" alone lets
 *                           the library pick (metaserver, else first server)
 * Lists of URIs end with NULL, lists of modes with GRPC_END_LIST (one mode
 * per output URI).  The caller allocates the grpc_data_t (as a function
 * handle) and passes its address to every function and to grpc_call,
 * where it stands for an array argument; a copy of it is not recognised. */
typedef enum grpc_data_type_e {
    GRPC_BOOL, GRPC_INT, GRPC_DOUBLE, GRPC_COMPLEX, GRPC_STRING, GRPC_FILE,
    GRPC_CONTAINER_OF_GRPC_DATA,
    /* numrpc's other element types (extensions) */
    GRPC_FLOAT_NP = 100, GRPC_LONG_NP, GRPC_CHAR_NP, GRPC_FLOAT_COMPLEX_NP
} grpc_data_type_t; /* GRPC_INT: int, GRPC_COMPLEX: double complex */
typedef enum grpc_data_mode_e {
    GRPC_VOLATILE,      /* not kept: the data travels with each call      */
    GRPC_STICKY,        /* kept on the server until unbound or freed      */
    GRPC_UNIQUE_STICKY, /* the same here: numrpc keeps one copy only      */
    GRPC_PERSISTENT,    /* kept even after grpc_data_unbind and
                           grpc_finalize, until numrpc_finalize or the
                           process ends (its lease runs out)              */
    GRPC_END_LIST
} grpc_data_mode_t;
typedef enum grpc_data_info_type_e {
    GRPC_DATA_HANDLE,     /* the server handle's id (hex)                 */
    GRPC_INPUT_URI,       /* the input URIs given, one a line             */
    GRPC_OUTPUT_URI,      /* the output URIs given, one a line            */
    GRPC_MANAGEMENT_MODE, /* the server copy's mode ("GRPC_STICKY", ...)  */
    GRPC_TYPE,            /* "GRPC_DOUBLE", ...                           */
    GRPC_DIMENSION,       /* "rows cols"                                  */
    GRPC_LOCATIONS_LIST,  /* where the data is now, one URI a line        */
    GRPC_STATUS           /* not covered (GRPC_OTHER_ERROR_CODE)          */
} grpc_data_info_type_t;
typedef struct grpc_data_s {
    unsigned int magic_np;
    int slot_np;
    unsigned long serial_np;
} grpc_data_t;

/* Describes the data and moves it where the outputs say now: a memory
 * input and a numrpc:// output (not GRPC_VOLATILE) is a put, a numrpc://
 * output alone an empty handle for an out argument to fill; with no
 * server output the memory input is passed in calls as a plain array. */
NUMRPC_API grpc_error_t grpc_data_init(grpc_data_t *data, const char **list_of_URI_input,
                                       const char **list_of_URI_output,
                                       grpc_data_type_t data_type, const size_t *data_dimensions,
                                       const grpc_data_mode_t *list_of_data_mode);
/* Copies the data: from its server copy into memory:// outputs (a get),
 * or from memory (list_of_input_URI, or the data's own memory input when
 * NULL) to a numrpc:// output (a put that replaces any server copy). */
NUMRPC_API grpc_error_t grpc_data_transfer(grpc_data_t *data, const char **list_of_input_URI,
                                           const char **list_of_output_URI,
                                           const grpc_data_mode_t *list_of_output_modes);
/* *info: a malloc'd string the caller frees (free()); URI is ignored. */
NUMRPC_API grpc_error_t grpc_data_getinfo(grpc_data_t *data, grpc_data_info_type_t info_tag,
                                          const char *URI, char **info);
/* The client lets go of data: its server copy is freed unless its mode is
 * GRPC_PERSISTENT (then it lives until numrpc_finalize or the process ends). */
NUMRPC_API grpc_error_t grpc_data_unbind(grpc_data_t *data);
/* Frees the server copy (URI_locations NULL, or listing its numrpc://
 * server or "numrpc://"); memory:// locations are the caller's and are
 * left alone.  The grpc_data_t is released once no server copy is left. */
NUMRPC_API grpc_error_t grpc_data_free(grpc_data_t *data, const char **URI_locations);
/* memory://localhost/key names address data (set again to change it). */
NUMRPC_API grpc_error_t grpc_data_memory_mapping_set(const char *key, void *data);
NUMRPC_API grpc_error_t grpc_data_memory_mapping_get(const char *key, void **data);

#ifdef __cplusplus
}
#endif
#endif /* NUMRPC_GRIDRPC_H */
