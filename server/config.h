/* config.h -- numrpc-server's configuration: the options of the command
 * line and of the configuration file (config.c). */
#ifndef NUMRPC_SERVER_CONFIG_H
#define NUMRPC_SERVER_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"

#define CONFIG_PATH_MAX 1024

/* Log levels: a line is written when its level <= the configured one. */
enum log_level { LOG_LEVEL_ERROR = 0, LOG_LEVEL_WARN, LOG_LEVEL_NOTICE, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG };

typedef struct server_config {
    char bind_addr[256];       /* default "127.0.0.1"                        */
    int port;                  /* 0 = pick a free port                       */
    char stubs_dir[CONFIG_PATH_MAX]; /* directory of stub modules (*.so)     */
    char port_file[CONFIG_PATH_MAX]; /* if set, the chosen port is written  */
    char config_file[CONFIG_PATH_MAX]; /* --config: reread on SIGHUP        */
    char admin_socket[CONFIG_PATH_MAX]; /* local admin socket ("" = none)  */
    char module_dir[CONFIG_PATH_MAX]; /* private copies of registered modules */
    size_t packet_size;        /* default reply packet size                  */
    int min_workers;           /* pre-forked workers                         */
    int max_workers;           /* workers at most (concurrent calls)         */
    int max_connections;       /* open connections at most                   */
    int max_connections_per_peer; /* from one address (0 = a quarter of all) */
    int max_receiving_per_peer; /* workers one address holds with requests arriving */
    int max_queue;             /* requests waiting for a worker (0 = any)    */
    uint64_t max_call_bytes;   /* array memory of one call at most           */
    uint64_t max_array_elems;  /* elements of one array at most              */
    int max_call_seconds;      /* wall time of one routine (0 = no limit)    */
    uint64_t max_worker_memory; /* address space of a worker (0 = no limit) */
    int idle_timeout_ms;       /* an idle connection is closed (0 = never)   */
    int drain_timeout_ms;      /* SIGTERM: calls in flight get this long     */
    int io_timeout_ms;         /* a stalled read or write inside a call      */
    int request_timeout_ms;    /* a request's first packet arrives whole     */
    size_t min_rate;           /* bytes/s of a request after that (0 = any)  */
    int blas_threads;          /* BLAS threads per call (0 = cores)          */
    int keepalive_ms;          /* keepalive period while a routine computes  */
    int quiet;
    int log_level;             /* enum log_level (default notice)           */
    char admin_secret_file[CONFIG_PATH_MAX]; /* remote admin secret ("" = off) */
    char token_file[CONFIG_PATH_MAX]; /* clients' tokens ("" = anyone may call) */
    int allow_insecure;        /* serve beyond loopback with neither tokens nor TLS */
    /* TLS (--tls-cert and --tls-key, both or neither): every connection on
     * the port is TLS 1.3; --tls-client-ca requires client certificates. */
    char tls_cert[CONFIG_PATH_MAX];
    char tls_key[CONFIG_PATH_MAX];
    char tls_client_ca[CONFIG_PATH_MAX];
    /* Memory of calls (callmem.c): what one call may ask for beyond what
     * it sends, and what all calls in flight may hold (0 = no limit). */
    uint64_t max_untravelled_bytes;
    uint64_t max_server_memory;
    /* Data handles (handles.c; docs/handles.md): where their files go, how
     * many and how many bytes the server keeps, and their lease. */
    char handle_dir[CONFIG_PATH_MAX]; /* the parent of the private directory */
    int max_handles;
    int max_handles_per_identity;       /* one token's (or address's); 0 = a quarter */
    uint64_t handle_bytes;              /* all handles together              */
    uint64_t handle_bytes_per_identity; /* one token's (or address's)        */
    int handle_lease_ms;
    /* Moving handles between servers (pull.c; docs/security.md "Handles
     * moved between servers"): the servers a DATA_PULL may fetch from
     * ("host:port,host:port"; "" = none), and what this server proves to
     * them: a client token file, and the CA their certificates must chain
     * to (its own --tls-cert, if any, is its client certificate). */
    char pull_from[CONFIG_PATH_MAX];
    int handle_ticket_ms; /* a DATA_GRANT's ticket is good this long */
    char peer_token_file[CONFIG_PATH_MAX];
    char peer_tls_ca[CONFIG_PATH_MAX];
    /* The HTTP port (metrics.c; docs/admin.md "Metrics"): off while
     * http_port is CONFIG_HTTP_OFF; bound on --bind, with --tls-cert's
     * certificate and --token-file's tokens. */
    int http_port;
    char http_port_file[CONFIG_PATH_MAX];
    int http_timeout; /* seconds for a request to arrive, and for its reply to be taken */
    /* --user: workers become this user (name or uid) before they are
     * confined (worker_sandbox.c; "" = stay the server's user). */
    char user[256];
    /* --worker-dir: directories (comma-separated) where routines may read
     * and write besides their private temporary one, e.g. a data or
     * scratch area ("" = none; worker_sandbox.c). */
    char worker_dirs[CONFIG_PATH_MAX];
} server_config;

#define CONFIG_HTTP_OFF (-1)

/* A memory limit left at its default, computed by config_normalise. */
#define CONFIG_MEMORY_AUTO UINT64_MAX

/* The defaults of every option. */
void config_defaults(server_config *cfg);
/* Sets option key (a long option name without "--") from its text. */
int config_set(server_config *cfg, const char *key, const char *value, err_t *err);
/* A size as the options take them (a K, M or G suffix): 0 or NUMRPC_EINVAL. */
int config_parse_size(const char *key, const char *text, uint64_t *out, err_t *err);
/* Reads "key = value" lines ('#' starts a comment). */
int config_load_file(server_config *cfg, const char *path, err_t *err);
/* Defaults, then the file named by --config (if any), then the command line
 * (which wins).  *help is set when --help was given. */
int config_build(server_config *cfg, int argc, char **argv, int *help, err_t *err);
/* Clamps values to their sane ranges (after any change). */
void config_normalise(server_config *cfg);
void config_usage(FILE *out);

#endif
