/* config.c -- numrpc-server's options: one table serves the command line,
 * the configuration file (key = value) and its rereading on SIGHUP. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http_port.h"
#include "protocol.h"

#ifndef NUMRPC_STUBDIR
#define NUMRPC_STUBDIR "/usr/local/lib/numrpc/stubs"
#endif

enum opt_kind { OPT_INT, OPT_U64, OPT_SIZE, OPT_STR, OPT_FLAG, OPT_LEVEL };

typedef struct option_def {
    const char *name;
    char short_name;
    int kind;
    size_t offset;
    size_t size; /* strings: buffer size */
    const char *arg, *help;
} option_def;

#define F(field) offsetof(server_config, field), sizeof(((server_config *)0)->field)

static const option_def options[] = {
    {"port", 'p', OPT_INT, F(port), "P", "TCP port (0 = any free port; default 7800)"},
    {"bind", 'b', OPT_STR, F(bind_addr), "ADDR", "address to listen on (default 127.0.0.1; beyond loopback needs --tls-cert, --token-file or --allow-insecure)"},
    {"stubs", 's', OPT_STR, F(stubs_dir), "DIR", "stub modules to serve (default " NUMRPC_STUBDIR ")"},
    {"port-file", 'f', OPT_STR, F(port_file), "FILE", "write the port chosen to FILE once calls and admin requests are accepted"},
    {"config", 0, OPT_STR, F(config_file), "FILE", "key = value options; reread on SIGHUP"},
    {"admin-socket", 0, OPT_STR, F(admin_socket), "PATH",
     "local admin socket, mode 0600 (default $XDG_RUNTIME_DIR or /tmp: numrpc-server-PORT.sock; \"none\" = off)"},
    {"module-dir", 0, OPT_STR, F(module_dir), "DIR",
     "private copies of registered modules (default: next to the admin socket)"},
    {"packet-size", 0, OPT_SIZE, F(packet_size), "BYTES", "default reply packet size (default 4096)"},
    {"workers", 0, OPT_INT, F(min_workers), "N", "pre-forked workers (default 4)"},
    {"max-workers", 0, OPT_INT, F(max_workers), "N", "concurrent calls at most (default 32)"},
    {"max-connections", 0, OPT_INT, F(max_connections), "N", "open connections at most (default 1024)"},
    {"max-connections-per-peer", 0, OPT_INT, F(max_connections_per_peer), "N",
     "open connections from one address (an IPv6 /64) at most (default 0 = a quarter of --max-connections)"},
    {"max-receiving-per-peer", 0, OPT_INT, F(max_receiving_per_peer), "N",
     "workers one address may hold at once with requests still arriving; its other requests wait, and "
     "more than a quarter of --max-queue of them is EBUSY (default 0 = a quarter of --max-workers, at least 1)"},
    {"max-queue", 0, OPT_INT, F(max_queue), "N",
     "requests waiting whole for a worker at most; beyond, EBUSY (default 256, 0 = no limit)"},
    {"max-call-bytes", 0, OPT_U64, F(max_call_bytes), "B", "array memory of one call at most (default 8 GiB)"},
    {"max-array-elems", 0, OPT_U64, F(max_array_elems), "N", "elements of one array at most (default 2^30)"},
    {"max-call-seconds", 0, OPT_INT, F(max_call_seconds), "S", "wall time of one routine at most (default 0 = none)"},
    {"max-worker-memory", 0, OPT_U64, F(max_worker_memory), "B",
     "address space of a worker process at most (default: twice the call bytes allowed, 256 MiB per BLAS "
     "thread and 1 GiB; 0 = none)"},
    {"idle-timeout", 0, OPT_INT, F(idle_timeout_ms), "MS", "close connections idle this long (default 600000, 0 = never)"},
    {"drain-timeout", 0, OPT_INT, F(drain_timeout_ms), "MS",
     "after SIGTERM, calls in flight get this long (default 600000)"},
    {"io-timeout", 0, OPT_INT, F(io_timeout_ms), "MS", "a stalled transfer inside a call fails (default 60000)"},
    {"request-timeout", 0, OPT_INT, F(request_timeout_ms), "MS",
     "a request's first packet (and a new connection's first request) arrives whole within this (default 10000)"},
    {"min-rate", 0, OPT_SIZE, F(min_rate), "B",
     "bytes per second a request arrives at, at least, once --request-timeout has passed (default 16K, 0 = any)"},
    {"blas-threads", 0, OPT_INT, F(blas_threads), "N", "BLAS threads per call (default: all cores)"},
    {"keepalive-ms", 0, OPT_INT, F(keepalive_ms), "MS", "keepalive period while a routine computes (default 5000)"},
    {"quiet", 'q', OPT_FLAG, F(quiet), NULL, "errors only in the log (as --log-level error)"},
    {"log-level", 0, OPT_LEVEL, F(log_level), "LEVEL",
     "error, warn, notice (default) or info (one line per call) or debug"},
    {"admin-secret-file", 0, OPT_STR, F(admin_secret_file), "FILE",
     "secret (mode 0600) for remote admin by challenge-response (default: remote admin off)"},
    {"token-file", 0, OPT_STR, F(token_file), "FILE",
     "clients' tokens, mode 0600: lines `name secret rights...` (docs/admin.md \"Tokens\"; default: none)"},
    {"allow-insecure", 0, OPT_FLAG, F(allow_insecure), NULL,
     "listen beyond loopback with neither tokens nor TLS: anyone who reaches the port may call"},
    {"tls-cert", 0, OPT_STR, F(tls_cert), "FILE",
     "certificate chain (PEM) for TLS 1.3 on every connection (with --tls-key; default: plain TCP)"},
    {"tls-key", 0, OPT_STR, F(tls_key), "FILE", "private key (PEM) of --tls-cert"},
    {"tls-client-ca", 0, OPT_STR, F(tls_client_ca), "FILE",
     "require client certificates signed by this CA (mutual TLS; needs --tls-cert)"},
    /* Memory of calls (docs/admin.md, "Memory"). */
    {"max-untravelled-bytes", 0, OPT_U64, F(max_untravelled_bytes), "B",
     "memory a call may ask for beyond the arrays it sends (out and work arrays, gaps), plus 4 times "
     "what it sends (default 64 MiB)"},
    {"max-server-memory", 0, OPT_U64, F(max_server_memory), "B",
     "array memory of all calls in flight together; beyond, EBUSY (default 3/4 of physical memory, 0 = none)"},
    /* Data handles (docs/handles.md, docs/admin.md "Handles"). */
    {"handle-dir", 0, OPT_STR, F(handle_dir), "DIR",
     "where the private directory of handles is made, mode 0700, removed at exit (default /dev/shm)"},
    {"max-handles", 0, OPT_INT, F(max_handles), "N", "handles kept at most (default 4096)"},
    {"max-handles-per-identity", 0, OPT_INT, F(max_handles_per_identity), "N",
     "handles of one token (or one address, an IPv6 /64, without tokens) at most (default 0 = a quarter of "
     "--max-handles, at least 1)"},
    {"handle-bytes", 0, OPT_U64, F(handle_bytes), "B",
     "bytes of all handles together at most (default 1/4 of physical memory)"},
    {"handle-bytes-per-identity", 0, OPT_U64, F(handle_bytes_per_identity), "B",
     "bytes of one token's handles (or one address's without tokens) at most (default half of --handle-bytes)"},
    {"handle-lease-ms", 0, OPT_INT, F(handle_lease_ms), "MS",
     "a handle not renewed or used this long is freed (default 60000)"},
    {"pull-from", 0, OPT_STR, F(pull_from), "LIST",
     "servers (host:port,...) whose handles this one may fetch for a call (DATA_PULL; default: none)"},
    {"handle-ticket-ms", 0, OPT_INT, F(handle_ticket_ms), "MS",
     "a ticket for one server-to-server copy of a handle is good this long (default 10000)"},
    {"peer-token-file", 0, OPT_STR, F(peer_token_file), "FILE",
     "a client token file (`name secret`) this server proves to the servers it pulls from (default: none)"},
    {"peer-tls-ca", 0, OPT_STR, F(peer_tls_ca), "FILE",
     "pull over TLS: the CA the --pull-from servers' certificates must chain to (default: plain TCP)"},
    /* The HTTP port (docs/admin.md, "Metrics"). */
    {"http-port", 0, OPT_INT, F(http_port), "P",
     "serve Prometheus /metrics over HTTP on port P of --bind (0 = any free port; default: off), HTTPS with "
     "--tls-cert, a `status` token with --token-file"},
    {"http-port-file", 0, OPT_STR, F(http_port_file), "FILE", "write the HTTP port chosen to FILE once it serves"},
    {"http-timeout", 0, OPT_INT, F(http_timeout), "S",
     "an HTTP request must arrive whole within S seconds, and its reply be taken within S more (default 10)"},
    /* Worker confinement (docs/security.md, "Worker confinement"). */
    {"worker-dir", 0, OPT_STR, F(worker_dirs), "DIRS",
     "directories (comma-separated) where routines may read and write, besides their private temporary one"},
    {"user", 0, OPT_STR, F(user), "NAME",
     "workers run routines as this user (name or uid), not as the server's (default: the server's own)"},
};
#define NOPTIONS (sizeof options / sizeof options[0])

void config_defaults(server_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    snprintf(cfg->bind_addr, sizeof cfg->bind_addr, "127.0.0.1");
    cfg->port = 7800;
    snprintf(cfg->stubs_dir, sizeof cfg->stubs_dir, "%s", NUMRPC_STUBDIR);
    cfg->packet_size = PROTO_DEFAULT_PACKET;
    cfg->min_workers = 4;
    cfg->max_workers = 32;
    cfg->max_connections = 1024;
    cfg->max_queue = 256;
    cfg->max_call_bytes = 8ULL << 30;
    cfg->max_array_elems = 1ULL << 30;
    cfg->idle_timeout_ms = 600000;
    cfg->drain_timeout_ms = 600000;
    cfg->io_timeout_ms = 60000;
    cfg->request_timeout_ms = 10000;
    cfg->min_rate = 16 << 10;
    cfg->keepalive_ms = PROTO_KEEPALIVE_SECONDS * 1000;
    cfg->log_level = LOG_LEVEL_NOTICE;
    cfg->max_worker_memory = CONFIG_MEMORY_AUTO;
    cfg->max_untravelled_bytes = 64ULL << 20;
    cfg->max_server_memory = CONFIG_MEMORY_AUTO;
    snprintf(cfg->handle_dir, sizeof cfg->handle_dir, "/dev/shm");
    cfg->max_handles = 4096;
    cfg->handle_bytes = CONFIG_MEMORY_AUTO;
    cfg->handle_bytes_per_identity = CONFIG_MEMORY_AUTO;
    cfg->handle_lease_ms = 60000;
    cfg->handle_ticket_ms = 10000;
    cfg->http_port = CONFIG_HTTP_OFF;
    cfg->http_timeout = HTTP_PORT_TIMEOUT_S;
}

static const char *const level_names[] = {"error", "warn", "notice", "info", "debug"};

void config_usage(FILE *out)
{
    fprintf(out, "usage: numrpc-server [options]\n"
                 "       numrpc-server admin [--socket PATH | --port P] register MODULE.so | unregister NAME | list\n");
    for (size_t i = 0; i < NOPTIONS; i++) {
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", options[i].name, options[i].arg ? " " : "",
                 options[i].arg ? options[i].arg : "");
        fprintf(out, "  %-24s %s\n", left, options[i].help);
    }
    fprintf(out, "  %-24s %s\n  %-24s %s\n  %-24s %s\n", "--metaserver HOST:PORT",
            "join this metaserver (docs/metaserver.md)", "--advertise HOST",
            "the address clients reach this server at (default: --bind, else as the metaserver sees it)",
            "--metaserver-token-file F", "the token (`name secret`, a 0600 file) proven to a metaserver with tokens");
    fprintf(out, "  %-24s %s\n  %-24s %s\n  %-24s %s\n  %-24s %s\n  %-24s %s\n  %-24s %s\n  %-24s %s\n  %-24s %s\n"
                 "  %-24s %s\n  %-24s %s\n",
            "--mpi-ranks N", "run Backend \"MPI\" routines on a resident job of N ranks (docs/mpi.md)",
            "--mpi-hostfile F", "mpirun's host file (its first host must be this machine)", "--mpi-grid PxQ",
            "the process grid (default: the squarest)", "--mpi-block NB", "ScaLAPACK block size (default 64)",
            "--mpirun PATH", "the mpirun to start the job with", "--mpi-agent PATH",
            "OpenMPI's plm_rsh_agent (ssh, or a namespace script)", "--mpi-args \"...\"",
            "more mpirun arguments, split on blanks (e.g. --oversubscribe)", "--mpi-engine PATH",
            "the engine executable (default: numrpc-mpi-engine beside numrpc-server)", "--mpi-keep-bytes B",
            "data handles' arrays the job keeps on its ranks between calls (default 1 GiB; 0: none)",
            "--mpi-start-timeout S",
            "seconds the job may take to start (default 60)");
    fprintf(out, "Sizes take a K, M or G suffix (powers of 1024).  A configuration file holds\n"
                 "the same options as `name = value` lines; the command line wins.\n");
}

static const option_def *find_option(const char *key, char short_name)
{
    for (size_t i = 0; i < NOPTIONS; i++)
        if ((key && strcmp(options[i].name, key) == 0) || (short_name && options[i].short_name == short_name))
            return &options[i];
    return NULL;
}

static int parse_number(const char *key, const char *text, int sized, unsigned long long *out, err_t *err)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    unsigned long long mul = 1;
    if (sized && *end) {
        switch (toupper((unsigned char)*end)) {
        case 'K': mul = 1ULL << 10; end++; break;
        case 'M': mul = 1ULL << 20; end++; break;
        case 'G': mul = 1ULL << 30; end++; break;
        default: break;
        }
        if (toupper((unsigned char)*end) == 'I' && toupper((unsigned char)end[1]) == 'B') end += 2;
        else if (toupper((unsigned char)*end) == 'B') end++;
    }
    if (*text == '\0' || *text == '-' || *end != '\0' || errno != 0 || (mul > 1 && v > ~0ULL / mul))
        return err_set(err, NUMRPC_EINVAL, "%s wants a non-negative number, got \"%s\"", key, text);
    *out = v * mul;
    return 0;
}

int config_parse_size(const char *key, const char *text, uint64_t *out, err_t *err)
{
    unsigned long long v = 0;
    int rc = parse_number(key, text, 1, &v, err);
    if (rc == 0) *out = v;
    return rc;
}

int config_set(server_config *cfg, const char *key, const char *value, err_t *err)
{
    const option_def *o = find_option(key, 0);
    if (o == NULL) return err_set(err, NUMRPC_EINVAL, "unknown option \"%s\"", key);
    char *field = (char *)cfg + o->offset;
    unsigned long long v = 0;
    switch (o->kind) {
    case OPT_STR:
        if (strlen(value) >= o->size) return err_set(err, NUMRPC_EINVAL, "%s: value too long", key);
        memcpy(field, value, strlen(value) + 1);
        return 0;
    case OPT_FLAG:
        if (value == NULL || strcmp(value, "1") == 0 || strcmp(value, "yes") == 0 || strcmp(value, "true") == 0)
            *(int *)field = 1;
        else if (strcmp(value, "0") == 0 || strcmp(value, "no") == 0 || strcmp(value, "false") == 0)
            *(int *)field = 0;
        else
            return err_set(err, NUMRPC_EINVAL, "%s wants yes or no, got \"%s\"", key, value);
        return 0;
    case OPT_LEVEL:
        for (int i = 0; i < (int)(sizeof level_names / sizeof level_names[0]); i++) {
            if (strcmp(value, level_names[i]) != 0) continue;
            *(int *)field = i;
            return 0;
        }
        return err_set(err, NUMRPC_EINVAL, "%s wants error, warn, notice, info or debug, got \"%s\"", key, value);
    case OPT_INT:
        if (parse_number(key, value, 0, &v, err) != 0) return err->code;
        if (v > 0x7fffffffULL) return err_set(err, NUMRPC_EINVAL, "%s: %s is too large", key, value);
        *(int *)field = (int)v;
        return 0;
    case OPT_SIZE:
        if (parse_number(key, value, 1, &v, err) != 0) return err->code;
        *(size_t *)field = (size_t)v;
        return 0;
    default:
        if (parse_number(key, value, 1, &v, err) != 0) return err->code;
        *(uint64_t *)field = (uint64_t)v;
        return 0;
    }
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = '\0';
    return s;
}

int config_load_file(server_config *cfg, const char *path, err_t *err)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) return err_set(err, NUMRPC_EINVAL, "cannot read configuration file %s: %s", path, strerror(errno));
    char line[2048];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *s = trim(line);
        if (*s == '\0') continue;
        char *eq = strchr(s, '=');
        if (eq == NULL) {
            rc = err_set(err, NUMRPC_EINVAL, "%s:%d: expected `name = value`", path, lineno);
            break;
        }
        *eq = '\0';
        char *key = trim(s), *value = trim(eq + 1);
        if (strcmp(key, "config") == 0) {
            rc = err_set(err, NUMRPC_EINVAL, "%s:%d: a configuration file cannot name another", path, lineno);
        } else if (config_set(cfg, key, value, err) != 0) {
            char where[CONFIG_PATH_MAX + 32];
            snprintf(where, sizeof where, "%s:%d", path, lineno);
            err_prefix(err, where);
            rc = err->code;
        }
    }
    fclose(f);
    return rc;
}

/* Walks argv; calls config_set for each option (only --config when
 * only_config, so that the file can be read before the rest). */
static int apply_args(server_config *cfg, int argc, char **argv, int only_config, int *help, err_t *err)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const option_def *o = NULL;
        const char *value = NULL;
        char key[64];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            *help = 1;
            continue;
        }
        if (strncmp(a, "--", 2) == 0) {
            const char *eq = strchr(a + 2, '=');
            size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
            if (len >= sizeof key) len = sizeof key - 1;
            memcpy(key, a + 2, len);
            key[len] = '\0';
            o = find_option(key, 0);
            if (eq) value = eq + 1;
        } else if (a[0] == '-' && a[1] && a[2] == '\0') {
            o = find_option(NULL, a[1]);
        }
        if (o == NULL) return err_set(err, NUMRPC_EINVAL, "unknown option \"%s\" (--help lists them)", a);
        if (o->kind != OPT_FLAG && value == NULL) {
            if (i + 1 >= argc) return err_set(err, NUMRPC_EINVAL, "--%s wants a value", o->name);
            value = argv[++i];
        }
        if (only_config != (strcmp(o->name, "config") == 0)) continue;
        if (config_set(cfg, o->name, value, err) != 0) return err->code;
    }
    return 0;
}

/* a + b, or 0 (no limit) when it does not fit. */
static uint64_t sum_or_none(uint64_t a, uint64_t b)
{
    uint64_t s;
    return __builtin_add_overflow(a, b, &s) ? 0 : s;
}

/* The memory limits left at their defaults, from this machine and the
 * other options (docs/admin.md, "Memory"). */
static void resolve_memory_defaults(server_config *cfg)
{
    if (cfg->max_server_memory == CONFIG_MEMORY_AUTO) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        cfg->max_server_memory = pages > 0 && page > 0 ? (uint64_t)pages / 4 * 3 * (uint64_t)page : 0;
    }
    if (cfg->max_worker_memory == CONFIG_MEMORY_AUTO) {
        /* A call's arrays twice over (the routine may copy them), OpenBLAS's
         * buffers, malloc arena and stack per thread, the process itself. */
        uint64_t call = cfg->max_call_bytes;
        if (cfg->max_server_memory && cfg->max_server_memory < call) call = cfg->max_server_memory;
        uint64_t threads = (uint64_t)(cfg->blas_threads > 0 ? cfg->blas_threads : 1) << 28;
        cfg->max_worker_memory = call > UINT64_MAX / 2 ? 0 : sum_or_none(2 * call, sum_or_none(threads, 1ULL << 30));
    }
    if (cfg->handle_bytes == CONFIG_MEMORY_AUTO) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        cfg->handle_bytes = pages > 0 && page > 0 ? (uint64_t)pages / 4 * (uint64_t)page : 0;
    }
    if (cfg->handle_bytes_per_identity == CONFIG_MEMORY_AUTO) cfg->handle_bytes_per_identity = cfg->handle_bytes / 2;
}

void config_normalise(server_config *cfg)
{
    if (cfg->min_workers < 1) cfg->min_workers = 1;
    if (cfg->max_workers < cfg->min_workers) cfg->max_workers = cfg->min_workers;
    if (cfg->max_connections < 1) cfg->max_connections = 1;
    if (cfg->max_receiving_per_peer <= 0) cfg->max_receiving_per_peer = cfg->max_workers / 4 > 1 ? cfg->max_workers / 4 : 1;
    if (cfg->request_timeout_ms < 1) cfg->request_timeout_ms = 1;
    if (cfg->keepalive_ms < 10) cfg->keepalive_ms = 10;
    if (cfg->max_handles < 1) cfg->max_handles = 1;
    if (cfg->handle_lease_ms < 100) cfg->handle_lease_ms = 100;
    if (cfg->handle_ticket_ms < 1) cfg->handle_ticket_ms = 1;
    if (cfg->blas_threads == 0) cfg->blas_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    resolve_memory_defaults(cfg);
}

int config_build(server_config *cfg, int argc, char **argv, int *help, err_t *err)
{
    config_defaults(cfg);
    *help = 0;
    int rc = apply_args(cfg, argc, argv, 1, help, err);
    if (rc == 0 && cfg->config_file[0]) {
        char file[CONFIG_PATH_MAX];
        memcpy(file, cfg->config_file, sizeof file);
        rc = config_load_file(cfg, file, err);
        memcpy(cfg->config_file, file, sizeof file);
    }
    if (rc == 0) rc = apply_args(cfg, argc, argv, 0, help, err);
    if (rc == 0 && (cfg->tls_cert[0] == '\0') != (cfg->tls_key[0] == '\0'))
        rc = err_set(err, NUMRPC_EINVAL, "--tls-cert and --tls-key go together: give both or neither");
    if (rc == 0 && cfg->http_port > 65535)
        rc = err_set(err, NUMRPC_EINVAL, "--http-port %d: want 0..65535", cfg->http_port);
    if (rc == 0 && (cfg->http_timeout < 1 || cfg->http_timeout > HTTP_PORT_TIMEOUT_MAX_S))
        rc = err_set(err, NUMRPC_EINVAL, "--http-timeout %d: want 1..%d seconds", cfg->http_timeout,
                     HTTP_PORT_TIMEOUT_MAX_S);
    if (rc == 0 && cfg->tls_client_ca[0] && !cfg->tls_cert[0])
        rc = err_set(err, NUMRPC_EINVAL, "--tls-client-ca needs TLS: give --tls-cert and --tls-key too");
    if (rc == 0) config_normalise(cfg);
    return rc;
}
