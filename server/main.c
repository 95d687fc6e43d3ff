/* main.c -- numrpc-server's command line: options, the listening socket,
 * then the dispatcher. */
#include "server.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sock.h"

#ifndef NUMRPC_STUBDIR
#define NUMRPC_STUBDIR "/usr/local/lib/numrpc/stubs"
#endif

static void usage(FILE *out)
{
    fprintf(out,
            "usage: numrpc-server [options]\n"
            "  --port P              TCP port (0 = any free port; default 7800)\n"
            "  --bind ADDR           address to listen on (default 0.0.0.0)\n"
            "  --stubs DIR           stub modules to serve (default " NUMRPC_STUBDIR ")\n"
            "  --port-file FILE      write the port chosen to FILE\n"
            "  --packet-size BYTES   default reply packet size (default 4096)\n"
            "  --workers N           pre-forked workers (default 4)\n"
            "  --max-workers N       concurrent calls at most (default 32)\n"
            "  --max-connections N   open connections at most (default 1024)\n"
            "  --max-call-bytes B    array memory of one call at most (default 8 GiB)\n"
            "  --max-array-elems N   elements of one array at most (default 2^30)\n"
            "  --io-timeout MS       a stalled transfer inside a call fails (default 60000)\n"
            "  --blas-threads N      BLAS threads per call (default: all cores)\n"
            "  --keepalive-ms MS     keepalive period while a routine computes (default 5000)\n"
            "  --quiet               no per-event log lines\n");
}

static long long number(const char *opt, const char *text)
{
    char *end;
    long long v = strtoll(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < 0) {
        fprintf(stderr, "numrpc-server: %s wants a non-negative number, got \"%s\"\n", opt, text);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    server_config cfg = {
        .bind_addr = "0.0.0.0",
        .port = 7800,
        .stubs_dir = NUMRPC_STUBDIR,
        .packet_size = PROTO_DEFAULT_PACKET,
        .min_workers = 4,
        .max_workers = 32,
        .max_connections = 1024,
        .max_call_bytes = 8ULL << 30,
        .max_array_elems = 1ULL << 30,
        .io_timeout_ms = 60000,
        .blas_threads = 0,
        .keepalive_ms = PROTO_KEEPALIVE_SECONDS * 1000,
    };
    static const struct option opts[] = {
        {"port", required_argument, 0, 'p'},
        {"bind", required_argument, 0, 'b'},
        {"stubs", required_argument, 0, 's'},
        {"port-file", required_argument, 0, 'f'},
        {"packet-size", required_argument, 0, 'k'},
        {"workers", required_argument, 0, 'w'},
        {"max-workers", required_argument, 0, 'W'},
        {"max-connections", required_argument, 0, 'c'},
        {"max-call-bytes", required_argument, 0, 'B'},
        {"max-array-elems", required_argument, 0, 'E'},
        {"io-timeout", required_argument, 0, 't'},
        {"blas-threads", required_argument, 0, 'T'},
        {"keepalive-ms", required_argument, 0, 'K'},
        {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    int o;
    while ((o = getopt_long(argc, argv, "p:b:s:f:h", opts, NULL)) != -1) {
        switch (o) {
        case 'p': cfg.port = (int)number("--port", optarg); break;
        case 'b': cfg.bind_addr = optarg; break;
        case 's': cfg.stubs_dir = optarg; break;
        case 'f': cfg.port_file = optarg; break;
        case 'k': cfg.packet_size = (size_t)number("--packet-size", optarg); break;
        case 'w': cfg.min_workers = (int)number("--workers", optarg); break;
        case 'W': cfg.max_workers = (int)number("--max-workers", optarg); break;
        case 'c': cfg.max_connections = (int)number("--max-connections", optarg); break;
        case 'B': cfg.max_call_bytes = (uint64_t)number("--max-call-bytes", optarg); break;
        case 'E': cfg.max_array_elems = (uint64_t)number("--max-array-elems", optarg); break;
        case 't': cfg.io_timeout_ms = (int)number("--io-timeout", optarg); break;
        case 'T': cfg.blas_threads = (int)number("--blas-threads", optarg); break;
        case 'K': cfg.keepalive_ms = (int)number("--keepalive-ms", optarg); break;
        case 'q': cfg.quiet = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return 2;
    }
    if (cfg.min_workers < 1) cfg.min_workers = 1;
    if (cfg.max_workers < cfg.min_workers) cfg.max_workers = cfg.min_workers;
    if (cfg.max_connections < 1) cfg.max_connections = 1;
    if (cfg.keepalive_ms < 10) cfg.keepalive_ms = 10;
    if (cfg.blas_threads == 0) cfg.blas_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);

    err_t err;
    int port = 0;
    int fd = sock_listen(cfg.bind_addr, cfg.port, &port, &err);
    if (fd < 0) {
        fprintf(stderr, "numrpc-server: %s\n", err.detail);
        return 1;
    }
    if (cfg.port_file) {
        FILE *f = fopen(cfg.port_file, "w");
        if (f == NULL) {
            fprintf(stderr, "numrpc-server: cannot write %s\n", cfg.port_file);
            return 1;
        }
        fprintf(f, "%d\n", port);
        fclose(f);
    }
    printf("numrpc-server listening on %s:%d (%d workers, stubs %s)\n", cfg.bind_addr, port,
           cfg.min_workers, cfg.stubs_dir);
    fflush(stdout);
    if (dispatcher_run(&cfg, fd, &err) != 0) {
        fprintf(stderr, "numrpc-server: %s\n", err.detail);
        return 1;
    }
    return 0;
}
