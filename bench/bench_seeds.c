/* bench_seeds.c -- numrpc-bench-seeds: the seed papers' measurements (LSB's
 * latency and paced throughput, PVM's ring) for numrpc beside raw TCP. */
#define _GNU_SOURCE
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "numrpc.h"
#include "sibling.h"
#include "rawtcp.h"
#include "seeds.h"
#include "seeds_lsb.h"
#include "seeds_procs.h"
#include "seeds_report.h"
#include "seeds_ring.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: numrpc-bench-seeds [--quick] [--rounds R] [--ring-k K] [--null-count N]\n"
            "         [--lsb-sizes LIST] [--lsb-bytes B] [--ring-sizes LIST] [--csv FILE]\n"
            "         [--markdown FILE] [--server-bin PATH] [--stubs DIR] [--pin]\n"
            "The seed papers' measurements on loopback, numrpc beside raw TCP in interleaved\n"
            "rounds: LSB (TR-97-06) null one-way / two-way latency and paced one-way, two-way\n"
            "and streamed throughput for 1..256 KiB buffers; PVM's ring (NAS-96-006) as a data\n"
            "handle passed server to server around K numrpc-servers (default 3), 8 B..8 MiB,\n"
            "fitted to t(n) = t0 + n / r_max.  --quick: 5 rounds, fewer sizes, < 30 s.\n"
            "Unpinned (on a shared machine pinning makes every figure wait for one busy\n"
            "CPU); --pin: this client on CPU 0, every server and raw peer on CPU 1.\n"
            "Defaults: server and stubs of the build this program is in (env NUMRPC_SERVER_BIN,\n"
            "NUMRPC_STUBS_DIR override); benchsink next to this program.\n");
}

/* "1K,64K" into sizes (bytes, whole doubles, > 0).  The count, or -1. */
static int parse_sizes(const char *arg, size_t *sizes)
{
    char *copy = strdup(arg), *save = NULL;
    int n = 0;
    for (char *t = strtok_r(copy, ",", &save); t && copy; t = strtok_r(NULL, ",", &save)) {
        char *end;
        double v = strtod(t, &end);
        size_t mult = *end == 'K' || *end == 'k' ? 1u << 10 : *end == 'M' || *end == 'm' ? 1u << 20 : 1;
        size_t b = (size_t)(v * (double)mult) / 8 * 8;
        if (v <= 0 || b == 0 || n >= SEEDS_MAX_SIZES) {
            free(copy);
            return -1;
        }
        sizes[n++] = b;
    }
    free(copy);
    return n > 0 ? n : -1;
}

static struct lsb_results lsb;
static struct ring_results ring;
static struct seeds_ring g;

/* The LSB rounds against one server (numrpc_init'ed on it) and the raw peer. */
static int run_lsb(const struct seeds_options *o, const rawtcp_server *raw, size_t most)
{
    int fd = rawtcp_connect(raw, RAWTCP_TUNED), rc = fd < 0 ? -1 : 0;
    double *x = malloc(most), *acks = malloc(4096 * sizeof(double));
    if (fd < 0) fprintf(stderr, "numrpc-bench-seeds: cannot connect to the raw TCP peer\n");
    if (!x || !acks) rc = -1;
    for (size_t i = 0; rc == 0 && i < most / 8; i++) x[i] = 0.25 * (double)i;
    for (int r = -1; rc == 0 && r < o->rounds; r++) rc = seeds_lsb_round(o, fd, r, x, acks, &lsb);
    if (fd >= 0) close(fd);
    free(x);
    free(acks);
    return rc;
}

/* The ring's k servers on ports chosen ahead, each allowed to pull from all.
 * A port taken meanwhile by another process: new ports, up to 3 tries. */
static int start_ring(const struct seeds_options *o, const char *stubs, pid_t *pids, int cpu)
{
    g.k = o->ring_k;
    for (int attempt = 0; attempt < 3; attempt++) {
        int ports[SEEDS_MAX_RING], up = 0;
        char pull[SEEDS_MAX_RING * 32] = "";
        if (seeds_free_ports(ports, g.k) != 0) return -1;
        for (int i = 0; i < g.k; i++) {
            snprintf(g.label[i], sizeof g.label[i], "127.0.0.1:%d", ports[i]);
            snprintf(pull + strlen(pull), sizeof pull - strlen(pull), "%s%s", i ? "," : "", g.label[i]);
        }
        while (up < g.k && (pids[up] = seeds_spawn_server(o->server_bin, stubs, &ports[up], pull, cpu)) > 0) up++;
        if (up == g.k) return 0;
        for (int i = 0; i < up; i++) {
            bench_stop_process(pids[i]);
            pids[i] = -1;
        }
    }
    return -1;
}

static int run_ring(const struct seeds_options *o)
{
    size_t most = 0;
    for (int s = 0; s < o->nring; s++)
        if (o->ring_sizes[s] > most) most = o->ring_sizes[s];
    double *x = malloc(2 * most);
    int rc = x && seeds_ring_prepare(o, &g) == 0 ? 0 : -1;
    for (int r = -1; rc == 0 && r < o->rounds; r++) rc = seeds_ring_round(o, &g, r, x, &ring);
    seeds_ring_release(o, &g);
    free(x);
    return rc;
}

int main(int argc, char **argv)
{
    static struct seeds_options o;
    const char *lsb_arg = NULL, *ring_arg = NULL;
    o.server_bin = getenv("NUMRPC_SERVER_BIN");
    o.stubs = getenv("NUMRPC_STUBS_DIR");
    o.ring_k = 3;
    static const struct option lo[] = {
        {"quick", no_argument, 0, 'q'},          {"rounds", required_argument, 0, 'r'},
        {"ring-k", required_argument, 0, 'k'},   {"null-count", required_argument, 0, 'n'},
        {"lsb-sizes", required_argument, 0, 'l'}, {"lsb-bytes", required_argument, 0, 'B'},
        {"ring-sizes", required_argument, 0, 'z'}, {"csv", required_argument, 0, 'c'},
        {"markdown", required_argument, 0, 'm'}, {"server-bin", required_argument, 0, 'b'},
        {"stubs", required_argument, 0, 's'},    {"help", no_argument, 0, 'h'},
        {"pin", no_argument, 0, 'p'},
        {0, 0, 0, 0}};
    int ch, pin = 0;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (ch) {
        case 'q': o.quick = 1; break;
        case 'r': o.rounds = atoi(optarg); break;
        case 'k': o.ring_k = atoi(optarg); break;
        case 'n': o.null_count = atoi(optarg); break;
        case 'l': lsb_arg = optarg; break;
        case 'B': o.lsb_bytes = (size_t)strtoull(optarg, NULL, 10); break;
        case 'z': ring_arg = optarg; break;
        case 'c': o.csv = optarg; break;
        case 'm': o.markdown = optarg; break;
        case 'b': o.server_bin = optarg; break;
        case 's': o.stubs = optarg; break;
        case 'p': pin = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return 2;
    }
    if (o.rounds <= 0) o.rounds = o.quick ? 5 : 7;
    if (o.rounds > SEEDS_MAX_ROUNDS) o.rounds = SEEDS_MAX_ROUNDS;
    if (o.null_count <= 0) o.null_count = o.quick ? 1000 : 10000;
    if (o.lsb_bytes == 0) o.lsb_bytes = o.quick ? (2u << 20) : (8u << 20);
    if (o.ring_k < 2 || o.ring_k > SEEDS_MAX_RING) {
        fprintf(stderr, "numrpc-bench-seeds: --ring-k wants 2..%d\n", SEEDS_MAX_RING);
        return 2;
    }
    o.nlsb = parse_sizes(lsb_arg ? lsb_arg : o.quick ? "1K,16K,256K" : "1K,2K,4K,8K,16K,32K,64K,128K,256K",
                         o.lsb_sizes);
    o.nring = parse_sizes(ring_arg ? ring_arg : o.quick ? "8,4K,256K,2M" : "8,64,512,4K,32K,256K,1M,8M",
                          o.ring_sizes);
    if (o.nlsb < 0 || o.nring < 0) {
        fprintf(stderr, "numrpc-bench-seeds: bad size list\n");
        return 2;
    }
    if (!o.server_bin) o.server_bin = bench_sibling_path("../server/numrpc-server");
    if (!o.stubs) o.stubs = bench_sibling_path("../stubs/.libs");
    char *sink = bench_sibling_path(".libs/benchsink.so");
    char stubs[64] = "";
    if (!o.server_bin || access(o.server_bin, X_OK) != 0) {
        fprintf(stderr, "numrpc-bench-seeds: no server at %s (--server-bin)\n", o.server_bin ? o.server_bin : "?");
        free(sink);
        return 2;
    }
    if (seeds_stubs_dir(o.stubs, sink, stubs, sizeof stubs) != 0) {
        free(sink);
        return 2;
    }
    free(sink);
    signal(SIGPIPE, SIG_IGN);
    double load[3] = {0, 0, 0};
    FILE *la = fopen("/proc/loadavg", "r");
    if (la) {
        if (fscanf(la, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
        fclose(la);
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int client_cpu = !pin || ncpu < 2 ? -1 : 0, server_cpu = client_cpu < 0 ? -1 : 1;
    snprintf(o.placement, sizeof o.placement, "%s",
             client_cpu < 0 ? "unpinned" : "client on CPU 0, every server and raw peer on CPU 1");
    printf("# numrpc-bench-seeds: %d rounds, %ld CPUs, %s, load average %.2f %.2f %.2f, server %s\n",
           o.rounds, ncpu, o.placement, load[0], load[1], load[2], o.server_bin);
    fflush(stdout);

    /* Every process is forked before numrpc_init starts threads. */
    rawtcp_server raw = {0};
    int lsb_port = 0, rc = 0;
    pid_t lsb_pid = -1, ring_pids[SEEDS_MAX_RING];
    for (int i = 0; i < SEEDS_MAX_RING; i++) ring_pids[i] = -1;
    seeds_pin(client_cpu); /* before numrpc_init: its threads inherit it */
    if (rawring_start(&g.raw, o.ring_k, server_cpu) != 0 || rawtcp_server_spawn(&raw, server_cpu) != 0) {
        fprintf(stderr, "numrpc-bench-seeds: the raw TCP peers did not start\n");
        rc = 1;
    }
    if (rc == 0 && (lsb_pid = seeds_spawn_server(o.server_bin, stubs, &lsb_port, NULL, server_cpu)) < 0)
        rc = 1;
    if (rc == 0 && start_ring(&o, stubs, ring_pids, server_cpu) != 0) rc = 1;
    if (rc == 0) {
        char server[32];
        snprintf(server, sizeof server, "127.0.0.1:%d", lsb_port);
        numrpc_config cfg = {.servers = server};
        int e = numrpc_init(&cfg);
        if (e != NUMRPC_OK) {
            fprintf(stderr, "numrpc-bench-seeds: numrpc_init: %s\n", numrpc_last_error_detail());
            rc = 1;
        }
    }
    size_t most = 0;
    for (int s = 0; s < o.nlsb; s++)
        if (o.lsb_sizes[s] > most) most = o.lsb_sizes[s];
    if (rc == 0 && run_lsb(&o, &raw, most) != 0) rc = 1;
    if (rc == 0 && run_ring(&o) != 0) rc = 1;
    numrpc_finalize();
    for (int i = 0; i < SEEDS_MAX_RING; i++) bench_stop_process(ring_pids[i]);
    bench_stop_process(lsb_pid);
    rawtcp_server_stop(&raw);
    rawring_stop(&g.raw);
    seeds_stubs_dir_remove(stubs);
    if (rc != 0) {
        fprintf(stderr, "numrpc-bench-seeds: failed\n");
        return 1;
    }
    FILE *md = o.markdown ? fopen(o.markdown, "w") : NULL;
    if (o.markdown && !md) perror(o.markdown);
    seeds_report_lsb(stdout, &o, &lsb);
    seeds_report_ring(stdout, &o, &ring);
    if (md) {
        fprintf(md, "Loopback, %s, %d interleaved rounds, load average at the start %.2f %.2f %.2f "
                    "(a shared machine: other jobs ran meanwhile).\n\n", o.placement, o.rounds, load[0], load[1],
                load[2]);
        seeds_report_lsb(md, &o, &lsb);
        seeds_report_ring(md, &o, &ring);
        if (fclose(md) != 0) rc = 1;
    }
    if (o.csv && seeds_write_csv(o.csv, &o, &lsb, &ring) != 0) rc = 1;
    return rc;
}
