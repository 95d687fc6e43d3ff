/* numrpc.h -- the public C API of libnumrpc: call a numerical routine on a
 * remote server in one line.  Everything not declared here is internal. */
#ifndef NUMRPC_H
#define NUMRPC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define NUMRPC_API __attribute__((visibility("default")))
#else
#define NUMRPC_API
#endif

/* ---- Error codes: one list for the whole system ----
 * X(NAME, value, message).  The enum is NUMRPC_<NAME>; numrpc_strerror()
 * returns the message and numrpc_errname() the name. */
#define NUMRPC_ERROR_LIST(X)                                                   \
    X(OK, 0, "success")                                                        \
    X(ENOMEM, -1, "out of memory")                                             \
    X(EINVAL, -2, "invalid argument")                                          \
    X(ENOENT, -3, "unknown routine")                                           \
    X(ECONNECT, -4, "cannot connect to server")                                \
    X(EPROTO, -5, "protocol error")                                            \
    X(EVERSION, -6, "protocol version mismatch")                               \
    X(ESERVER, -7, "server-side failure")                                      \
    X(ELIMIT, -8, "limit exceeded")                                            \
    X(ECANCELLED, -9, "call cancelled")                                        \
    X(ETIMEDOUT, -10, "call timed out")                                        \
    X(ECRASHED, -11, "routine crashed")                                        \
    X(EIO, -12, "connection lost")                                             \
    X(ESTALE, -13, "interface version changed")                                \
    X(ENOSERVER, -14, "no server configured")                                  \
    X(EBUSY, -15, "server busy or shutting down")                              \
    X(EAUTH, -16, "not authorised")                                            \
    X(ESYNTAX, -17, "syntax error")                                            \
    X(EINTERNAL, -18, "internal error")                                       \
    X(EPENDING, -19, "call still in progress")                                \
    X(ENOHANDLE, -20, "no such data handle")

typedef enum numrpc_error {
#define NUMRPC_ENUM_ENTRY_(name, value, msg) NUMRPC_##name = value,
    NUMRPC_ERROR_LIST(NUMRPC_ENUM_ENTRY_)
#undef NUMRPC_ENUM_ENTRY_
} numrpc_error;

/* Static strings; never NULL (an unknown code gives "unknown error"). */
NUMRPC_API const char *numrpc_strerror(int code);
NUMRPC_API const char *numrpc_errname(int code);
/* 1 when code is an outcome a call may end with: NUMRPC_OK or a failure
 * code of the list above (NUMRPC_EPENDING is a state, not an outcome);
 * else 0.  A status from the network is used only when this says 1. */
NUMRPC_API int numrpc_error_valid(int code);

/* Detail of the calling thread's last failure, in words a user can act on
 * ("dgefa: extent of a is -3 (n = -3)").  Thread-local; valid until the
 * thread's next numrpc call.  Empty string after success. */
NUMRPC_API const char *numrpc_last_error_detail(void);

/* ---- Types a routine's arguments can have (the IDL's types) ---- */
typedef enum numrpc_type {
    NUMRPC_T_VOID = 0,
    NUMRPC_T_CHAR = 1,     /* C char (passed as int by value)              */
    NUMRPC_T_INT = 2,      /* 32-bit int                                   */
    NUMRPC_T_LONG = 3,     /* 64-bit long                                  */
    NUMRPC_T_FLOAT = 4,    /* float (passed as double by value)            */
    NUMRPC_T_DOUBLE = 5,   /* double                                       */
    NUMRPC_T_SCOMPLEX = 6, /* float complex: two floats                    */
    NUMRPC_T_DCOMPLEX = 7, /* double complex: two doubles                  */
    NUMRPC_T_STRING = 8,   /* NUL-terminated char string                   */
    NUMRPC_T_FILE = 9,     /* filename: a client file shipped whole (path) */
    NUMRPC_T_RFILE = 10    /* rfile: a client file the server reads on
                              demand through the call's connection (path)  */
} numrpc_type;

/* ---- Blocking calls ----
 * numrpc_call(name, ...): the arguments in IDL order, by these rules (the
 * same for numrpc_call_async and numrpc_call_pinned):
 *  - a scalar of mode in goes by value: an integer type where the IDL says
 *    char, int or long (a value out of range is NUMRPC_EINVAL); any integer
 *    or floating type where it says float or double (converted, as a C
 *    prototype would); a complex scalar by value (double complex, float
 *    complex, std::complex), by a real (imaginary part 0), or, as earlier
 *    programs do, by a pointer to its two parts;
 *  - strings and file paths as char *; every other argument (arrays, and
 *    scalars of mode out or inout) by a pointer to the IDL's element type
 *    (void * fits anything; a complex array may be a double or float
 *    pointer to its interleaved parts; a numrpc_data * wherever an array
 *    goes; NULL where nothing travels);
 *  - each argument carries its C type, known at compile time (C11 _Generic,
 *    C++ templates): anything else -- a float array where a double array
 *    goes, a double where an int goes, a struct, a missing or an extra
 *    argument, a freed numrpc_data -- is NUMRPC_EINVAL naming the routine,
 *    the parameter and both types, and nothing is sent.
 * Arrays are read (in) and written (out) in the
 * caller's memory in place, with the layout the IDL gives (column-major,
 * leading dimensions honoured): elements outside the part the IDL says
 * travels are never touched.  The caller owns every buffer.
 * Outputs (out and inout arrays and scalars, output strings): a call that
 * returns NUMRPC_OK has written all of them; a call that fails before its
 * results began to arrive -- a refusal, a limit, an argument check, the
 * routine's own error, a crash, a server lost before it replied -- has
 * written none; a call whose reply was cut while its results arrived (the
 * connection lost, the deadline, a cancel mid-reply) may have written some
 * of them and not others, and is never resent.
 * name: "dgefa", or "numrpc://host:port/dgefa" for one server.
 * With several servers configured (or ranked by a metaserver), the call
 * tries them in order, each once, moving on from one it cannot reach, that
 * refuses it (NUMRPC_EBUSY, NUMRPC_EVERSION, NUMRPC_EAUTH), that does not
 * offer the routine (NUMRPC_ENOENT) or that is lost or garbled before any
 * reply byte reached the caller's memory; a crash, a limit, the deadline or
 * the routine's own error is the call's outcome.  Asynchronous calls follow
 * the same rule (docs/client.md, "Failover").  numrpc_last_call_info names
 * the server.
 * Returns NUMRPC_OK or a negative error code. */
#define numrpc_call(...)                                                       \
    numrpc_call_tagged_(NUMRPC_NARG_(__VA_ARGS__) - 1, NUMRPC_TAGGED_(__VA_ARGS__))
NUMRPC_API int numrpc_call_tagged_(int nargs, const char *name, ...);
/* Without the argument tags (programs built against earlier headers). */
NUMRPC_API int numrpc_call_counted_(int nargs, const char *name, ...);

/* One tagged argument for numrpc_callv.  For a scalar of mode in, set the
 * value member that matches type; for anything else set p (the caller's
 * memory, owned by the caller).  type may be NUMRPC_T_VOID to mean "take the
 * type from the interface" (then the value is read from the member the
 * interface's type names). */
typedef struct numrpc_arg {
    numrpc_type type;
    union {
        int i;
        long l;
        double d;
        float f;
        char c;
        void *p;
        const char *s;
    } v;
} numrpc_arg;

/* The same call from an array of tagged arguments; the base of the variadic
 * call, the Fortran module, GridRPC argument stacks and Python. */
NUMRPC_API int numrpc_callv(const char *name, const numrpc_arg *args,
                            int nargs);

/* ---- Pinned calls: what typed headers call ----
 * numrpc_call_pinned(pin, name, ...) is numrpc_call(name, ...) that first
 * checks the server's interface of name against pin, a pin line
 * ("NAME HASH DESCRIPTOR", as `numrpc describe --pin` and --c-header write
 * it): a server whose interface hash or parameters differ gets the call
 * refused with NUMRPC_EAUTH and a detail naming the routine and both
 * hashes, before any byte of the caller's memory is read or written.
 * pin is the caller's (a string literal in a typed header). */
#define numrpc_call_pinned(pin, ...)                                           \
    numrpc_call_pinned_tagged_((pin), NUMRPC_NARG_(__VA_ARGS__) - 1, NUMRPC_TAGGED_(__VA_ARGS__))
NUMRPC_API int numrpc_call_pinned_tagged_(const char *pin, int nargs, const char *name, ...);
NUMRPC_API int numrpc_call_pinned_counted_(const char *pin, int nargs, const char *name, ...);
NUMRPC_API int numrpc_callv_pinned(const char *pin, const char *name, const numrpc_arg *args,
                                   int nargs);

/* ---- Configuration ----
 * Servers come from numrpc_init(config) if called, else NUMRPC_SERVER
 * ("host:port[,host:port...]").  config may be NULL (read the environment).
 * Optional: the library initialises itself on the first call.
 * A token (a server started with --token-file needs one) comes from
 * token_file, else NUMRPC_TOKEN_FILE: a file of mode 0600 whose first line
 * is `name secret` (secret: 32 to 128 hex digits).  The library proves it
 * holds the secret without sending it, and refuses a server that cannot
 * prove it holds it too (NUMRPC_EAUTH).
 * TLS: with tls_ca (else NUMRPC_TLS_CA), a PEM file of the certificate
 * authorities to trust, every connection (servers and the metaserver) is
 * TLS 1.3; a server must present a certificate signed by one of them and
 * made out to the host name (or address) the library connects to, and,
 * when the metaserver named the server, the very certificate the server
 * announced to it.  tls_cert and tls_key (else NUMRPC_TLS_CERT and
 * NUMRPC_TLS_KEY; both or neither) are the client's own certificate for
 * servers that require one (mutual TLS).  The files are read once, at
 * numrpc_init (or the first call); a reconnection to a server resumes the
 * TLS session.  A server that fails verification is NUMRPC_EAUTH (wrong
 * CA, expired, another host, another certificate than announced); one
 * that does not speak TLS, or a failed handshake, is NUMRPC_ECONNECT; the
 * detail names the TLS reason.  A server that requires a client
 * certificate and got none (or refuses it) is NUMRPC_EAUTH.  A server
 * that refuses the connection before TLS (its connection limits, shutting
 * down) is its own code, NUMRPC_EBUSY mostly, with its detail marked
 * "(said before TLS, unauthenticated)".
 * The strings are read during numrpc_init: the caller keeps them. */
typedef struct numrpc_config {
    const char *servers;  /* "host:port[,host:port...]" or NULL            */
    size_t packet_size;   /* bytes per packet; 0 = NUMRPC_PACKET_SIZE or 4096 */
    const char *token_file; /* NULL: NUMRPC_TOKEN_FILE, or no token          */
    const char *pin_file; /* the interfaces this client accepts (written by
                             `numrpc describe --pin`); NULL = NUMRPC_PIN_FILE,
                             "" = no pins.  With pins, a routine not pinned,
                             or whose interface differs from its pin, is
                             refused (NUMRPC_EAUTH) before anything is sent.
                             Read during numrpc_init; the string is the
                             caller's (docs/client.md)                      */
    const char *tls_ca;   /* NULL: NUMRPC_TLS_CA, or no TLS                 */
    const char *tls_cert; /* NULL: NUMRPC_TLS_CERT, or no client certificate */
    const char *tls_key;  /* NULL: NUMRPC_TLS_KEY                           */
    const char *metaserver; /* "host:port" of the metaserver that places calls;
                               NULL: NUMRPC_METASERVER, "" = none (last: a
                               caller's older, shorter initialiser stays valid) */
} numrpc_config;
NUMRPC_API int numrpc_init(const numrpc_config *config);
/* Closes cached connections, forgets interfaces, and frees the process's
 * data handles on their servers (best effort, a few seconds a server). */
NUMRPC_API void numrpc_finalize(void);

/* ---- What the last call on this thread cost ---- */
typedef struct numrpc_call_info {
    uint64_t bytes_sent;     /* request bytes on the wire, framing included */
    uint64_t bytes_received; /* reply bytes on the wire, framing included   */
    double send_seconds;     /* marshalling and sending the request, to its
                                last byte                                   */
    double compute_seconds;  /* the routine on the server (server's clock)  */
    double receive_seconds;  /* the rest of the wait for the reply, then
                                reading it; send + compute + receive =
                                total, none negative (docs/client.md)       */
    double total_seconds;    /* wall time from the request's first byte
                                written to the reply's last byte read       */
    char server[64];         /* "host:port" that ran it                     */
    uint32_t connections;    /* connections the call opened: 0 when a
                                pooled one served it, 1 (more after a
                                reconnection or a server that failed)
                                otherwise                                   */
    uint32_t tls_resumed;    /* of those, TLS handshakes that resumed an
                                earlier session (no certificate exchange,
                                one round trip less); 0 over plain TCP.
                                Both are filled by blocking calls; the
                                asynchronous ones leave them 0.             */
} numrpc_call_info;
/* Copies the calling thread's last call's figures into *info. */
NUMRPC_API int numrpc_last_call_info(numrpc_call_info *info);

/* ---- Asynchronous calls ----
 * numrpc_call_async(&id, name, ...) takes the arguments numrpc_call takes,
 * binds them to the routine's interface (fetched once per server, like a
 * blocking call's) and returns at once with a call id in *id; a background
 * thread marshals and sends the request and receives the reply.  Calls
 * with several servers in NUMRPC_SERVER are spread over them (task
 * farming: docs/architecture.md).
 *
 * Ownership.  Scalars of mode in (strings and complex values included) are
 * copied before numrpc_call_async returns: the caller may reuse them.
 * Arrays and out scalars stay the caller's memory, and the caller owns
 * every buffer until the call completes: it must keep them valid, not
 * write the in and inout arrays, and not read or write the out ones until
 * a wait returns the call (or numrpc_probe says it is complete).  Outputs
 * are written as numrpc_call's are (above): all of them by a call that
 * succeeds, none by one that fails or is cancelled before its results
 * began to arrive, maybe some by one cut while they arrived (its detail
 * then says "results had started to arrive: not resent").
 *
 * Ids are process-wide: any thread may wait for, probe or cancel any call.
 * A wait "returns" a call: its id is then retired, and each call is
 * returned exactly once (a second wait for it gives NUMRPC_EINVAL).
 * Several threads may wait at once: numrpc_wait_any gives each completed
 * call to exactly one of them; numrpc_wait_all returns every call in
 * progress when it was entered, less those another thread returned first.
 * numrpc_get_error and numrpc_call_info_of still answer for the latest
 * 4096 returned calls.
 *
 * Every function returns NUMRPC_OK or a negative code; a wait returns the
 * call's own result, and its detail goes to numrpc_last_error_detail(). */
#define numrpc_call_async(idp, ...)                                            \
    numrpc_call_async_tagged_((idp), NUMRPC_NARG_(__VA_ARGS__) - 1, NUMRPC_TAGGED_(__VA_ARGS__))
NUMRPC_API int numrpc_call_async_tagged_(int *id, int nargs, const char *name, ...);
NUMRPC_API int numrpc_call_async_counted_(int *id, int nargs, const char *name, ...);
/* The same from an array of tagged arguments (copied like varargs). */
NUMRPC_API int numrpc_callv_async(int *id, const char *name, const numrpc_arg *args,
                                  int nargs);
/* Waits for call id; returns its result. */
NUMRPC_API int numrpc_wait(int id);
/* Waits for every call in progress; NUMRPC_OK, or the first failed one's
 * code (the lowest id among the failures). */
NUMRPC_API int numrpc_wait_all(void);
/* Waits for any call; its id goes to *id, its result is returned.
 * NUMRPC_EINVAL (and *id = 0) when no call is in progress. */
NUMRPC_API int numrpc_wait_any(int *id);
/* Waits for all n calls; NUMRPC_OK or the first failure in ids' order.
 * An unknown id gives NUMRPC_EINVAL at once (nothing is waited for). */
NUMRPC_API int numrpc_wait_and(const int *ids, int n);
/* Waits for one of the n calls: the first to complete is returned (*id). */
NUMRPC_API int numrpc_wait_or(const int *ids, int n, int *id);
/* 1 when call id is complete (a wait returns at once), 0 while it runs,
 * NUMRPC_EINVAL for an unknown id.  Does not return the call. */
NUMRPC_API int numrpc_probe(int id);
/* 1 with *id set when one of the n calls is complete, else 0 (*id = 0). */
NUMRPC_API int numrpc_probe_or(const int *ids, int n, int *id);
/* Asks for call id to stop and returns at once: an unsent call ends now; a
 * running one is stopped on its server (its worker is killed) and ends
 * with NUMRPC_ECANCELLED once the server has answered.  A call whose
 * results are already arriving, or that is complete, is not changed.  The
 * call must still be waited for.  NUMRPC_EINVAL for an unknown id. */
NUMRPC_API int numrpc_cancel(int id);
/* The result of a complete call (returned or not), NUMRPC_EPENDING while
 * it runs, NUMRPC_EINVAL for an unknown id. */
NUMRPC_API int numrpc_get_error(int id);
/* The figures of call id (complete: all of them; running: the server).
 * NUMRPC_EINVAL for an unknown id. */
NUMRPC_API int numrpc_call_info_of(int id, numrpc_call_info *info);
/* Time limit of every call started afterwards, blocking or not, in
 * seconds from its start (0, the default, = none).  It covers the whole
 * call: the client stops connecting, sending or waiting at it, and the
 * server, counting from the request's first byte, stops receiving,
 * computing or replying; the call ends with NUMRPC_ETIMEDOUT. */
NUMRPC_API int numrpc_set_timeout(double seconds);

/* What the farm knows about one server (asynchronous calls only). */
typedef struct numrpc_server_stats {
    char server[64];        /* "host:port"                                  */
    uint64_t calls;         /* asynchronous calls completed there           */
    int in_flight;          /* sent or queued on its connections now        */
    int max_in_flight;      /* the most at once so far                      */
    int cap;                /* the adaptive cap on calls in flight          */
    int connections;        /* open connections                             */
    double flops_per_second; /* measured (calls per second when the routine
                                has no complexity expression)               */
} numrpc_server_stats;
/* Fills up to max entries; returns how many servers the farm knows. */
NUMRPC_API int numrpc_server_stats_get(numrpc_server_stats *out, int max);

/* ---- Progress of a call (docs/client.md "Progress") ----
 * numrpc_set_progress(fn, arg, period): every call started afterwards asks
 * for a frame at most every period seconds (0.05 to 65.5; NULL fn or
 * period <= 0: none, the default), process-wide.  fn runs in a blocking
 * call's thread (call_id 0), or on the reader thread of an asynchronous
 * call (call_id its id); it returns quickly and never calls numrpc; p lives
 * until it returns.  A frame the caller's socket cannot take is missed. */
typedef struct numrpc_progress {
    int call_id;         /* 0 for a blocking call, else the async call's id   */
    const char *routine;
    double elapsed;      /* seconds since the request's first byte reached the server */
    double predicted;    /* seconds the call should take (CalcOrder / the server's speed); -1: unknown */
    double fraction;     /* 0..1 when the routine says, else -1              */
    const char *message; /* the routine's own words, or ""                   */
} numrpc_progress;
typedef void (*numrpc_progress_fn)(const numrpc_progress *p, void *arg);
NUMRPC_API void numrpc_set_progress(numrpc_progress_fn fn, void *arg, double period);

/* ---- Group calls (docs/client.md "Group calls") ----
 * numrpc_call_each(servers, each, max, &count, name, ...): numrpc_call's
 * arguments to every server at once.  servers: "host:port,..." or NULL (the
 * metaserver's ranking for name, else NUMRPC_SERVER).  each[i].out[p] is
 * server i's own copy of out/inout argument p (the library's: free with
 * numrpc_each_free); the caller's get the first success in list order.
 * No handles, no out strings.  Returns the first failure in list order. */
typedef struct numrpc_each {
    char server[256];  /* "host:port"                                   */
    int status;        /* NUMRPC_OK or this server's error code         */
    char detail[512];  /* its error's detail ("" on success)            */
    double seconds;    /* the call's wall time there (0: never sent)    */
    int nout;          /* entries of out and out_bytes (the parameters) */
    void **out;        /* per parameter: this server's copy, or NULL    */
    size_t *out_bytes; /* per parameter: bytes of out[p] (0: none)      */
} numrpc_each;
#define numrpc_call_each(servers, each, max, countp, ...) \
    numrpc_call_each_tagged_((servers), (each), (max), (countp), NUMRPC_NARG_(__VA_ARGS__) - 1, NUMRPC_TAGGED_(__VA_ARGS__))
NUMRPC_API int numrpc_call_each_tagged_(const char *servers, numrpc_each *each, int max, int *count, int nargs,
                                        const char *name, ...);
/* The same from tagged arguments (for bindings such as Python's). */
NUMRPC_API int numrpc_callv_each(const char *servers, numrpc_each *each, int max, int *count, const char *name,
                                 const numrpc_arg *args, int nargs);
NUMRPC_API void numrpc_each_free(numrpc_each *each, int count);

/* ---- Discovery (what the CLI is built on) ---- */
/* Writes a malloc'd, '\n'-separated list of routine names the server
 * offers into *names_out; the caller frees it with free(). server may be
 * NULL for the first configured server. */
NUMRPC_API int numrpc_list(const char *server, char **names_out);
/* Writes a malloc'd IDL rendering of routine name's interface into
 * *idl_out; the caller frees it. */
NUMRPC_API int numrpc_describe(const char *name, char **idl_out);

/* Writes a typed C wrapper of routine name (a static inline function
 * numrpc_NAME with the routine's parameter types, calling
 * numrpc_call_pinned with the routine's pin line) into
 * a malloc'd *decl_out, and the routine's module into a malloc'd
 * *module_out; the caller frees both.  `numrpc describe --c-header MODULE`
 * prints a header of these. */
NUMRPC_API int numrpc_describe_c(const char *name, char **module_out, char **decl_out);

/* Writes the pin line of routine name (a routine or numrpc:// URL) into a
 * malloc'd *pin_out (no newline); the caller frees it.  `numrpc describe
 * --pin` prints these. */
NUMRPC_API int numrpc_describe_pin(const char *name, char **pin_out);

/* ---- Reading a routine's interface (what bindings such as Python's use) ----
 * numrpc_routine_get(name, &r) fetches the interface name (a routine, or a
 * numrpc:// URL) from the server a call of it would try first, as
 * numrpc_describe does; *r is the caller's, freed by numrpc_routine_free.
 * The strings it hands out live as long as r. */
typedef struct numrpc_routine numrpc_routine;
typedef enum numrpc_mode {
    NUMRPC_MODE_IN = 1,
    NUMRPC_MODE_OUT = 2,
    NUMRPC_MODE_INOUT = 3,
    NUMRPC_MODE_WORK = 4 /* server-side scratch: the caller passes NULL */
} numrpc_mode;
#define NUMRPC_MAX_RANK 4
typedef struct numrpc_param_info {
    const char *name; /* as the IDL names it */
    int type;         /* numrpc_type */
    int mode;         /* numrpc_mode */
    int rank;         /* 0 for a scalar */
} numrpc_param_info;
/* What an array argument is for given scalars: its memory block's extents,
 * dimension 0 fastest (Fortran order), and how many elements travel. */
typedef struct numrpc_param_shape {
    int rank;
    int64_t dims[NUMRPC_MAX_RANK];
    uint64_t elems;  /* product of dims: the block the caller provides */
    uint64_t travel; /* elements that cross the network (a band, a stride) */
    int64_t bound;   /* strings: the most characters each holds; -1: none */
} numrpc_param_shape;
NUMRPC_API int numrpc_routine_get(const char *name, numrpc_routine **r);
NUMRPC_API void numrpc_routine_free(numrpc_routine *r);
/* Its name, module, one-line description and interface hash. */
NUMRPC_API const char *numrpc_routine_name(const numrpc_routine *r);
NUMRPC_API const char *numrpc_routine_module(const numrpc_routine *r);
NUMRPC_API const char *numrpc_routine_description(const numrpc_routine *r);
NUMRPC_API uint64_t numrpc_routine_hash(const numrpc_routine *r);
/* The parameter count (IDL order), and parameter i's name, type, mode, rank. */
NUMRPC_API int numrpc_routine_nparams(const numrpc_routine *r);
NUMRPC_API int numrpc_routine_param(const numrpc_routine *r, int i, numrpc_param_info *info);
/* Every parameter's shape (shapes: nparams entries; scalars get rank 0)
 * for the scalar arguments in args (tagged as for numrpc_callv, nargs =
 * nparams; array entries are not read and may be NULL).  NUMRPC_EINVAL
 * naming the parameter when a shape expression fails (a negative extent,
 * an overflow). */
NUMRPC_API int numrpc_routine_shapes(const numrpc_routine *r, const numrpc_arg *args, int nargs,
                                     numrpc_param_shape *shapes);
/* The interface as IDL, malloc'd into *idl_out (the caller frees it). */
NUMRPC_API int numrpc_routine_idl(const numrpc_routine *r, char **idl_out);

/* ---- Data handles: arrays kept on a server between calls (docs/handles.md) ----
 * A numrpc_data* stands wherever an array argument goes (numrpc_call,
 * numrpc_callv with NUMRPC_T_* of the array and the handle as its pointer,
 * the asynchronous calls): the routine reads the server's copy, and an out
 * or inout array's result stays there (it changes only when the call
 * succeeds).  A call naming handles runs on their server.  The library owns
 * the handle: it is valid in this process until numrpc_data_free (or
 * numrpc_finalize), and the library renews its lease on the server while
 * the process lives.
 *
 * server: "host:port", or NULL for the server the metaserver picks
 * (NUMRPC_METASERVER) or else the first of NUMRPC_SERVER.  type: a numeric
 * NUMRPC_T_* (not strings or files).  The array is rows x cols, column-major
 * with leading dimension ld >= rows (a vector: n x 1, ld n); the server keeps
 * ld x cols elements so that a routine sees the layout a call would send. */
typedef struct numrpc_data numrpc_data;
/* Sends the rows x cols elements of a to the server; *h is the new handle. */
NUMRPC_API int numrpc_data_put(numrpc_data **h, const char *server, int type, const void *a, size_t rows,
                               size_t cols, size_t ld);
/* A handle of zeros, for an out argument to fill on the server. */
NUMRPC_API int numrpc_data_new(numrpc_data **h, const char *server, int type, size_t rows, size_t cols,
                               size_t ld);
/* Copies the handle's rows x cols elements into a (leading dimension ld). */
NUMRPC_API int numrpc_data_get(numrpc_data *h, void *a, size_t ld);
/* Frees the handle on its server and here (h is invalid afterwards, even
 * when the server is gone: NUMRPC_ENOHANDLE or a connection error). */
NUMRPC_API int numrpc_data_free(numrpc_data *h);

/* ---- Events: what a metaserver sees happen (docs/metaserver.md "Events") ----
 * numrpc_watch calls fn for each event of the metaserver ("host:port", NULL:
 * NUMRPC_METASERVER) in the caller's thread until fn returns nonzero or
 * `seconds` pass (0: no limit): NUMRPC_OK; else EAUTH (tokens without the
 * `status` right), EIO (stream ended), ETIMEDOUT (silent 20 s).  types:
 * "join,leave,drain,undrain,register,unregister,overload" or a part (NULL:
 * all).  The strings live until fn returns.  A subscriber 256 events behind
 * is dropped: calls and queries never wait for one. */
typedef struct numrpc_event {
    const char *type;    /* "join", "leave", ...                             */
    double time;         /* when the metaserver saw it, Unix seconds         */
    const char *server;  /* "host:port" ("" when none)                       */
    const char *name;    /* the server's name, as it joined                  */
    const char *routine; /* register, unregister: the module ("" otherwise)  */
    const char *detail;  /* the rest: why a server left, routines, queue     */
} numrpc_event;
typedef int (*numrpc_event_fn)(const numrpc_event *e, void *arg); /* nonzero: stop */
NUMRPC_API int numrpc_watch(const char *metaserver, const char *types, numrpc_event_fn fn, void *arg,
                            double seconds);

/* ---- Argument tags for numrpc_call (internal helper macros) ----
 * numrpc_call, numrpc_call_async and numrpc_call_pinned pass each argument
 * after a tag that says its C type, chosen at compile time (C11 _Generic;
 * templates under C++): the library compares it with the routine's
 * parameter before anything is sent (docs/client.md, "Arguments"). */
enum numrpc_tag_ {
    NUMRPC_TAG_OTHER_ = 0, /* a type numrpc cannot pass: a struct, long double... */
    NUMRPC_TAG_INT_,       /* char, short, int, _Bool (promoted to int) */
    NUMRPC_TAG_UINT_,      /* unsigned int */
    NUMRPC_TAG_LONG_,      /* long */
    NUMRPC_TAG_ULONG_,     /* unsigned long (size_t) */
    NUMRPC_TAG_LLONG_,     /* long long */
    NUMRPC_TAG_ULLONG_,    /* unsigned long long */
    NUMRPC_TAG_DOUBLE_,    /* float, double (promoted to double) */
    NUMRPC_TAG_SCOMPLEX_,  /* float complex, by value */
    NUMRPC_TAG_DCOMPLEX_,  /* double complex, by value */
    NUMRPC_TAG_P_VOID_ = 16, /* pointers, by what they point to: void (and NULL) */
    NUMRPC_TAG_P_CHAR_,    /* char, signed char, unsigned char */
    NUMRPC_TAG_P_SHORT_,
    NUMRPC_TAG_P_INT_,
    NUMRPC_TAG_P_UINT_,
    NUMRPC_TAG_P_LONG_,
    NUMRPC_TAG_P_LLONG_,
    NUMRPC_TAG_P_FLOAT_,
    NUMRPC_TAG_P_DOUBLE_,
    NUMRPC_TAG_P_SCOMPLEX_,
    NUMRPC_TAG_P_DCOMPLEX_,
    NUMRPC_TAG_P_STRINGS_, /* char ** (arrays of strings) */
    NUMRPC_TAG_P_DATA_,    /* numrpc_data * */
    NUMRPC_TAG_P_OTHER_    /* a pointer to anything else */
};
#ifdef __cplusplus
extern "C++" { /* templates, even where numrpc.h is included inside extern "C" */
#include <complex>
#include <cstddef>
#include <type_traits>
template <class T> struct numrpc_tag_of_ { static const int v = NUMRPC_TAG_OTHER_; };
template <class T> struct numrpc_ptag_ { static const int v = NUMRPC_TAG_P_OTHER_; };
template <class T> struct numrpc_tag_of_<T *> {
    static const int v = numrpc_ptag_<typename std::remove_cv<T>::type>::v;
};
#define NUMRPC_TAG_IS_(table, type, tag)                                       \
    template <> struct table<type> { static const int v = tag; };
NUMRPC_TAG_IS_(numrpc_tag_of_, bool, NUMRPC_TAG_INT_)
NUMRPC_TAG_IS_(numrpc_tag_of_, char, NUMRPC_TAG_INT_)
NUMRPC_TAG_IS_(numrpc_tag_of_, signed char, NUMRPC_TAG_INT_)
NUMRPC_TAG_IS_(numrpc_tag_of_, unsigned char, NUMRPC_TAG_INT_)
NUMRPC_TAG_IS_(numrpc_tag_of_, short, NUMRPC_TAG_INT_)
NUMRPC_TAG_IS_(numrpc_tag_of_, unsigned short, NUMRPC_TAG_INT_)
NUMRPC_TAG_IS_(numrpc_tag_of_, int, NUMRPC_TAG_INT_)
NUMRPC_TAG_IS_(numrpc_tag_of_, unsigned int, NUMRPC_TAG_UINT_)
NUMRPC_TAG_IS_(numrpc_tag_of_, long, NUMRPC_TAG_LONG_)
NUMRPC_TAG_IS_(numrpc_tag_of_, unsigned long, NUMRPC_TAG_ULONG_)
NUMRPC_TAG_IS_(numrpc_tag_of_, long long, NUMRPC_TAG_LLONG_)
NUMRPC_TAG_IS_(numrpc_tag_of_, unsigned long long, NUMRPC_TAG_ULLONG_)
NUMRPC_TAG_IS_(numrpc_tag_of_, float, NUMRPC_TAG_DOUBLE_)
NUMRPC_TAG_IS_(numrpc_tag_of_, double, NUMRPC_TAG_DOUBLE_)
NUMRPC_TAG_IS_(numrpc_tag_of_, std::complex<float>, NUMRPC_TAG_SCOMPLEX_)
NUMRPC_TAG_IS_(numrpc_tag_of_, std::complex<double>, NUMRPC_TAG_DCOMPLEX_)
NUMRPC_TAG_IS_(numrpc_tag_of_, std::nullptr_t, NUMRPC_TAG_P_VOID_)
NUMRPC_TAG_IS_(numrpc_ptag_, void, NUMRPC_TAG_P_VOID_)
NUMRPC_TAG_IS_(numrpc_ptag_, char, NUMRPC_TAG_P_CHAR_)
NUMRPC_TAG_IS_(numrpc_ptag_, signed char, NUMRPC_TAG_P_CHAR_)
NUMRPC_TAG_IS_(numrpc_ptag_, unsigned char, NUMRPC_TAG_P_CHAR_)
NUMRPC_TAG_IS_(numrpc_ptag_, short, NUMRPC_TAG_P_SHORT_)
NUMRPC_TAG_IS_(numrpc_ptag_, int, NUMRPC_TAG_P_INT_)
NUMRPC_TAG_IS_(numrpc_ptag_, unsigned int, NUMRPC_TAG_P_UINT_)
NUMRPC_TAG_IS_(numrpc_ptag_, long, NUMRPC_TAG_P_LONG_)
NUMRPC_TAG_IS_(numrpc_ptag_, long long, NUMRPC_TAG_P_LLONG_)
NUMRPC_TAG_IS_(numrpc_ptag_, float, NUMRPC_TAG_P_FLOAT_)
NUMRPC_TAG_IS_(numrpc_ptag_, double, NUMRPC_TAG_P_DOUBLE_)
NUMRPC_TAG_IS_(numrpc_ptag_, std::complex<float>, NUMRPC_TAG_P_SCOMPLEX_)
NUMRPC_TAG_IS_(numrpc_ptag_, std::complex<double>, NUMRPC_TAG_P_DCOMPLEX_)
NUMRPC_TAG_IS_(numrpc_ptag_, char *, NUMRPC_TAG_P_STRINGS_)
NUMRPC_TAG_IS_(numrpc_ptag_, const char *, NUMRPC_TAG_P_STRINGS_)
NUMRPC_TAG_IS_(numrpc_ptag_, numrpc_data, NUMRPC_TAG_P_DATA_)
#undef NUMRPC_TAG_IS_
/* A value passes through "..." as itself (nullptr as a null void *). */
template <class T> inline const T &numrpc_val_(const T &x) { return x; }
inline void *numrpc_val_(std::nullptr_t) { return 0; }
#define NUMRPC_TAG_(x) numrpc_tag_of_<typename std::decay<decltype(x)>::type>::v, numrpc_val_(x)
} /* extern "C++" */
#else
#define NUMRPC_TAG_C_(x) _Generic((x),                                           \
    _Bool: NUMRPC_TAG_INT_, char: NUMRPC_TAG_INT_, signed char: NUMRPC_TAG_INT_,   \
    unsigned char: NUMRPC_TAG_INT_, short: NUMRPC_TAG_INT_,                        \
    unsigned short: NUMRPC_TAG_INT_, int: NUMRPC_TAG_INT_,                         \
    unsigned int: NUMRPC_TAG_UINT_, long: NUMRPC_TAG_LONG_,                        \
    unsigned long: NUMRPC_TAG_ULONG_, long long: NUMRPC_TAG_LLONG_,                \
    unsigned long long: NUMRPC_TAG_ULLONG_, float: NUMRPC_TAG_DOUBLE_,             \
    double: NUMRPC_TAG_DOUBLE_, NUMRPC_TAG_COMPLEX_C_                              \
    void *: NUMRPC_TAG_P_VOID_, const void *: NUMRPC_TAG_P_VOID_,                  \
    char *: NUMRPC_TAG_P_CHAR_, const char *: NUMRPC_TAG_P_CHAR_,                  \
    signed char *: NUMRPC_TAG_P_CHAR_, const signed char *: NUMRPC_TAG_P_CHAR_,    \
    unsigned char *: NUMRPC_TAG_P_CHAR_, const unsigned char *: NUMRPC_TAG_P_CHAR_, \
    short *: NUMRPC_TAG_P_SHORT_, const short *: NUMRPC_TAG_P_SHORT_,              \
    int *: NUMRPC_TAG_P_INT_, const int *: NUMRPC_TAG_P_INT_,                      \
    unsigned int *: NUMRPC_TAG_P_UINT_, const unsigned int *: NUMRPC_TAG_P_UINT_,  \
    long *: NUMRPC_TAG_P_LONG_, const long *: NUMRPC_TAG_P_LONG_,                  \
    long long *: NUMRPC_TAG_P_LLONG_, const long long *: NUMRPC_TAG_P_LLONG_,      \
    float *: NUMRPC_TAG_P_FLOAT_, const float *: NUMRPC_TAG_P_FLOAT_,              \
    double *: NUMRPC_TAG_P_DOUBLE_, const double *: NUMRPC_TAG_P_DOUBLE_,          \
    char **: NUMRPC_TAG_P_STRINGS_, const char **: NUMRPC_TAG_P_STRINGS_,          \
    char *const *: NUMRPC_TAG_P_STRINGS_, const char *const *: NUMRPC_TAG_P_STRINGS_, \
    numrpc_data *: NUMRPC_TAG_P_DATA_, const numrpc_data *: NUMRPC_TAG_P_DATA_,    \
    default: NUMRPC_TAG_OTHER_)
#ifndef __STDC_NO_COMPLEX__
#define NUMRPC_TAG_COMPLEX_C_                                                  \
    float _Complex: NUMRPC_TAG_SCOMPLEX_, double _Complex: NUMRPC_TAG_DCOMPLEX_,   \
    float _Complex *: NUMRPC_TAG_P_SCOMPLEX_, const float _Complex *: NUMRPC_TAG_P_SCOMPLEX_, \
    double _Complex *: NUMRPC_TAG_P_DCOMPLEX_, const double _Complex *: NUMRPC_TAG_P_DCOMPLEX_,
#else
#define NUMRPC_TAG_COMPLEX_C_
#endif
#define NUMRPC_TAG_(x) NUMRPC_TAG_C_(x), (x)
#endif
/* name, a, b, ... -> name, TAG(a), a, TAG(b), b, ... (up to 63 arguments) */
#define NUMRPC_TAGGED_(...)                                                    \
    NUMRPC_HEAD_(__VA_ARGS__, ~) NUMRPC_CAT_(NUMRPC_S_, NUMRPC_NTAIL_(__VA_ARGS__))(__VA_ARGS__)
#define NUMRPC_HEAD_(first, ...) first
#define NUMRPC_CAT_(a, b) NUMRPC_CAT2_(a, b)
#define NUMRPC_CAT2_(a, b) a##b
#define NUMRPC_S_0(x)
#define NUMRPC_S_1(x, a) , NUMRPC_TAG_(a)
#define NUMRPC_S_2(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_1(x, __VA_ARGS__)
#define NUMRPC_S_3(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_2(x, __VA_ARGS__)
#define NUMRPC_S_4(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_3(x, __VA_ARGS__)
#define NUMRPC_S_5(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_4(x, __VA_ARGS__)
#define NUMRPC_S_6(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_5(x, __VA_ARGS__)
#define NUMRPC_S_7(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_6(x, __VA_ARGS__)
#define NUMRPC_S_8(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_7(x, __VA_ARGS__)
#define NUMRPC_S_9(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_8(x, __VA_ARGS__)
#define NUMRPC_S_10(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_9(x, __VA_ARGS__)
#define NUMRPC_S_11(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_10(x, __VA_ARGS__)
#define NUMRPC_S_12(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_11(x, __VA_ARGS__)
#define NUMRPC_S_13(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_12(x, __VA_ARGS__)
#define NUMRPC_S_14(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_13(x, __VA_ARGS__)
#define NUMRPC_S_15(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_14(x, __VA_ARGS__)
#define NUMRPC_S_16(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_15(x, __VA_ARGS__)
#define NUMRPC_S_17(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_16(x, __VA_ARGS__)
#define NUMRPC_S_18(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_17(x, __VA_ARGS__)
#define NUMRPC_S_19(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_18(x, __VA_ARGS__)
#define NUMRPC_S_20(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_19(x, __VA_ARGS__)
#define NUMRPC_S_21(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_20(x, __VA_ARGS__)
#define NUMRPC_S_22(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_21(x, __VA_ARGS__)
#define NUMRPC_S_23(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_22(x, __VA_ARGS__)
#define NUMRPC_S_24(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_23(x, __VA_ARGS__)
#define NUMRPC_S_25(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_24(x, __VA_ARGS__)
#define NUMRPC_S_26(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_25(x, __VA_ARGS__)
#define NUMRPC_S_27(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_26(x, __VA_ARGS__)
#define NUMRPC_S_28(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_27(x, __VA_ARGS__)
#define NUMRPC_S_29(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_28(x, __VA_ARGS__)
#define NUMRPC_S_30(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_29(x, __VA_ARGS__)
#define NUMRPC_S_31(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_30(x, __VA_ARGS__)
#define NUMRPC_S_32(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_31(x, __VA_ARGS__)
#define NUMRPC_S_33(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_32(x, __VA_ARGS__)
#define NUMRPC_S_34(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_33(x, __VA_ARGS__)
#define NUMRPC_S_35(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_34(x, __VA_ARGS__)
#define NUMRPC_S_36(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_35(x, __VA_ARGS__)
#define NUMRPC_S_37(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_36(x, __VA_ARGS__)
#define NUMRPC_S_38(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_37(x, __VA_ARGS__)
#define NUMRPC_S_39(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_38(x, __VA_ARGS__)
#define NUMRPC_S_40(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_39(x, __VA_ARGS__)
#define NUMRPC_S_41(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_40(x, __VA_ARGS__)
#define NUMRPC_S_42(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_41(x, __VA_ARGS__)
#define NUMRPC_S_43(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_42(x, __VA_ARGS__)
#define NUMRPC_S_44(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_43(x, __VA_ARGS__)
#define NUMRPC_S_45(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_44(x, __VA_ARGS__)
#define NUMRPC_S_46(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_45(x, __VA_ARGS__)
#define NUMRPC_S_47(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_46(x, __VA_ARGS__)
#define NUMRPC_S_48(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_47(x, __VA_ARGS__)
#define NUMRPC_S_49(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_48(x, __VA_ARGS__)
#define NUMRPC_S_50(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_49(x, __VA_ARGS__)
#define NUMRPC_S_51(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_50(x, __VA_ARGS__)
#define NUMRPC_S_52(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_51(x, __VA_ARGS__)
#define NUMRPC_S_53(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_52(x, __VA_ARGS__)
#define NUMRPC_S_54(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_53(x, __VA_ARGS__)
#define NUMRPC_S_55(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_54(x, __VA_ARGS__)
#define NUMRPC_S_56(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_55(x, __VA_ARGS__)
#define NUMRPC_S_57(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_56(x, __VA_ARGS__)
#define NUMRPC_S_58(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_57(x, __VA_ARGS__)
#define NUMRPC_S_59(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_58(x, __VA_ARGS__)
#define NUMRPC_S_60(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_59(x, __VA_ARGS__)
#define NUMRPC_S_61(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_60(x, __VA_ARGS__)
#define NUMRPC_S_62(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_61(x, __VA_ARGS__)
#define NUMRPC_S_63(x, a, ...) , NUMRPC_TAG_(a) NUMRPC_S_62(x, __VA_ARGS__)

/* ---- Argument counting for numrpc_call (internal helper macros) ---- */
#define NUMRPC_NARG_(...)                                                      \
    NUMRPC_NARG_N_(__VA_ARGS__, 64, 63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47,    \
        46, 45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23,    \
        22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define NUMRPC_NARG_N_( \
    _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, _19, _20, _21, _22,   \
    _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, _33, _34, _35, _36, _37, _38, _39, _40, _41, _42,    \
    _43, _44, _45, _46, _47, _48, _49, _50, _51, _52, _53, _54, _55, _56, _57, _58, _59, _60, _61, _62,    \
    _63, _64, N, ...)                                                                                      \
    N

/* The count less one (the arguments after the name). */
#define NUMRPC_NTAIL_(...)                                                     \
    NUMRPC_NARG_N_(__VA_ARGS__, 63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46,    \
        45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22,    \
        21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, ~)

#ifdef __cplusplus
}
#endif
#endif /* NUMRPC_H */
