/* bench_transfer.c -- numrpc-bench-transfer: round-trip and one-way throughput
 * and latency of numrpc against raw TCP, omniORB and gRPC, interleaved rounds. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "transfer_opt.h"
#include "sibling.h"
#include "transfer_place.h"
#include "transfer_measure.h"
#include "transfer_sweep.h"
#include "transfer_report.h"

/* ---- options ---- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: numrpc-bench-transfer [--server-bin PATH] [--stubs DIR] [--sizes LIST]\n"
            "         [--rounds R] [--quick] [--packet-sweep] [--csv FILE] [--markdown FILE]\n"
            "         [--placement same|different|unpinned] [--reps N] [--no-corba]\n"
            "         [--corba-server PATH] [--grpc-server PATH] [--no-grpc] [--delay-ms D]\n"
            "Round trips (N bytes out, N bytes back) of numrpc dcopy against a raw TCP echo\n"
            "(tuned and naive) and numrpc ping against an 8-byte ping-pong, interleaved in\n"
            "rounds.  Sizes: default 8,64K,8M,64M (--quick: 8,64K,8M).  Ratio = numrpc time\n"
            "/ raw tuned time in the same round; spread = min..max over rounds and a\n"
            "bootstrap %d%% CI of the median ratio (%d resamples, fixed seed).\n"
            "Defaults: server BUILD/server/numrpc-server, stubs BUILD/stubs/.libs, where\n"
            "BUILD is the parent of this program's directory (env NUMRPC_SERVER_BIN and\n"
            "NUMRPC_STUBS_DIR override).\n",
            (int)(CI_LEVEL * 100), BOOTSTRAP_RESAMPLES);
}


static void remove_stubs_dir(void)
{
    if (!bench_opt.stubs_tmp[0]) return;
    DIR *d = opendir(bench_opt.stubs_tmp);
    if (d) {
        struct dirent *e;
        char path[PATH_MAX];
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.') continue;
            snprintf(path, sizeof path, "%s/%s", bench_opt.stubs_tmp, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(bench_opt.stubs_tmp);
}

/* The servers' stubs dir: links to every module of bench_opt.stubs and to this
 * folder's benchsink module (numrpc's one-way sink).  Without benchsink the
 * numrpc one-way run is off. */
static void make_stubs_dir(void)
{
    char *sink = bench_sibling_path(".libs/benchsink.so");
    snprintf(bench_opt.stubs_tmp, sizeof bench_opt.stubs_tmp, "/tmp/numrpc-bench-stubs-XXXXXX");
    DIR *d = NULL;
    if (!sink || access(sink, R_OK) != 0 || !mkdtemp(bench_opt.stubs_tmp) ||
        !(d = opendir(bench_opt.stubs))) {
        bench_opt.stubs_tmp[0] = '\0';
        measure_on[SYS_NUMRPC_SINK] = 0;
        printf("# numrpc one-way sink: no benchsink module next to this program; skipped\n");
        free(sink);
        return;
    }
    atexit(remove_stubs_dir);
    char from[PATH_MAX], to[PATH_MAX], real[PATH_MAX];
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l < 4 || strcmp(e->d_name + l - 3, ".so") != 0) continue;
        snprintf(from, sizeof from, "%s/%s", bench_opt.stubs, e->d_name);
        snprintf(to, sizeof to, "%s/%s", bench_opt.stubs_tmp, e->d_name);
        if (realpath(from, real) && symlink(real, to) != 0) perror(to);
    }
    closedir(d);
    snprintf(to, sizeof to, "%s/benchsink.so", bench_opt.stubs_tmp);
    if (!realpath(sink, real) || symlink(real, to) != 0) measure_on[SYS_NUMRPC_SINK] = 0;
    free(sink);
    bench_opt.stubs_given =
        bench_opt.stubs; /* still reachable: bench_sibling_path's copy is not a leak */
    bench_opt.stubs = bench_opt.stubs_tmp;
}

int main(int argc, char **argv)
{
    const char *sizes_arg = NULL;
    const char *place_arg = NULL;
    int no_corba = 0, no_grpc = 0;
    size_t maxbytes = 0;
    bench_opt.rounds = 0;
    bench_opt.placement_only = -1;
    bench_opt.server_bin = getenv("NUMRPC_SERVER_BIN");
    bench_opt.stubs = getenv("NUMRPC_STUBS_DIR");
    static const struct option lo[] = {
        {"server-bin", required_argument, 0, 'b'}, {"stubs", required_argument, 0, 's'},
        {"sizes", required_argument, 0, 'z'},      {"rounds", required_argument, 0, 'r'},
        {"quick", no_argument, 0, 'q'},            {"packet-sweep", no_argument, 0, 'p'},
        {"csv", required_argument, 0, 'c'},        {"markdown", required_argument, 0, 'm'},
        {"placement", required_argument, 0, 'P'},  {"help", no_argument, 0, 'h'},
        {"corba-server", required_argument, 0, 'C'}, {"no-corba", no_argument, 0, 'N'},
        {"reps", required_argument, 0, 'R'},
        {"grpc-server", required_argument, 0, 'G'}, {"no-grpc", no_argument, 0, 'g'},
        {"delay-ms", required_argument, 0, 'D'},
        {"host", required_argument, 0, 'H'},       {"server-netns", required_argument, 0, 'S'},
        {"link", required_argument, 0, 'L'},       {"buffer-sweep", no_argument, 0, 'B'},
        {"sweep-bytes", required_argument, 0, 'y'}, {"sweep-packets", required_argument, 0, 'k'},
        {"sweep-bufs", required_argument, 0, 'u'}, {"sweep-csv", required_argument, 0, 'v'},
        {0, 0, 0, 0}};
    const char *sweep_packets_arg = "1K,4K,16K,64K,256K,1M", *sweep_bufs_arg = "0,64K,256K,4M";
    int ch;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (ch) {
        case 'b': bench_opt.server_bin = optarg; break;
        case 's': bench_opt.stubs = optarg; break;
        case 'z': sizes_arg = optarg; break;
        case 'r': bench_opt.rounds = atoi(optarg); break;
        case 'q': bench_opt.quick = 1; break;
        case 'p': bench_opt.packet_sweep = 1; break;
        case 'c': bench_opt.csv = optarg; break;
        case 'm': bench_opt.markdown = optarg; break;
        case 'P': place_arg = optarg; break;
        case 'C': bench_opt.corba_bin = optarg; break;
        case 'R': bench_opt.reps = atoi(optarg); break;
        case 'G': bench_opt.grpc_bin = optarg; break;
        case 'g': no_grpc = 1; break;
        case 'D': bench_opt.delay_ms = atof(optarg); break;
        case 'N': no_corba = 1; break;
        case 'H': bench_opt.host = optarg; break;
        case 'S': bench_opt.server_netns = optarg; break;
        case 'L': bench_opt.link = optarg; break;
        case 'B': bench_opt.buffer_sweep = 1; break;
        case 'y': bench_opt.sweep_bytes = bench_parse_size(optarg); break;
        case 'k': sweep_packets_arg = optarg; break;
        case 'u': sweep_bufs_arg = optarg; break;
        case 'v': bench_opt.sweep_csv = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return 2;
    }
    if (!bench_opt.server_bin) bench_opt.server_bin = bench_sibling_path("../server/numrpc-server");
    if (!bench_opt.stubs) bench_opt.stubs = bench_sibling_path("../stubs/.libs");
    if (!bench_opt.host) bench_opt.host = "127.0.0.1";
    if (!bench_opt.link)
        bench_opt.link = strcmp(bench_opt.host, "127.0.0.1") == 0 ? "loopback" : bench_opt.host;
    {
        struct in_addr a;
        if (inet_pton(AF_INET, bench_opt.host, &a) != 1) {
            fprintf(stderr, "numrpc-bench-transfer: --host wants an IPv4 address\n");
            return 2;
        }
    }
    setenv("NUMRPC_BENCH_HOST", bench_opt.host, 1); /* rawtcp, proxies, baselines */
    bench_opt.netns_fd = bench_opt.home_netns_fd = -1;
    if (bench_opt.server_netns) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "/var/run/netns/%s", bench_opt.server_netns);
        bench_opt.netns_fd = open(path, O_RDONLY | O_CLOEXEC);
        bench_opt.home_netns_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        if (bench_opt.netns_fd < 0 || bench_opt.home_netns_fd < 0) {
            fprintf(stderr, "numrpc-bench-transfer: network namespace %s: %s\n", path,
                    strerror(errno));
            return 2;
        }
        printf("# servers in network namespace %s at %s; this client in its own\n",
               bench_opt.server_netns, bench_opt.host);
    }
    if (!bench_opt.sweep_bytes)
        bench_opt.sweep_bytes = bench_opt.delay_ms > 0 ? 256u << 10 : 8u << 20;
    {
        char *copy = strdup(sweep_packets_arg), *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t && bench_opt.nsweep_packets < 16;
             t = strtok_r(NULL, ",", &save))
            bench_opt.sweep_packets[bench_opt.nsweep_packets++] = bench_parse_size(t);
        free(copy);
        copy = strdup(sweep_bufs_arg);
        for (char *t = strtok_r(copy, ",", &save); t && bench_opt.nsweep_bufs < 8;
             t = strtok_r(NULL, ",", &save))
            bench_opt.sweep_bufs[bench_opt.nsweep_bufs++] =
                strcmp(t, "0") == 0 ? 0 : (int)bench_parse_size(t);
        free(copy);
    }
    make_stubs_dir();
    bench_opt.proxy_bin = bench_sibling_path("numrpc-delay-proxy");
#ifdef HAVE_CORBA
    if (bench_opt.delay_ms > 0 && access(bench_opt.proxy_bin, X_OK) != 0) {
        fprintf(stderr, "numrpc-bench-transfer: --delay-ms needs %s\n", bench_opt.proxy_bin);
        return 2;
    }
    if (bench_opt.delay_ms > 0)
        printf("# every connection through a delay proxy: +%g ms each way\n", bench_opt.delay_ms);
    if (!bench_opt.corba_bin)
        bench_opt.corba_bin = bench_sibling_path("../apps/corba/numrpc-corba-server");
    if (no_corba || (bench_opt.corba_bin && access(bench_opt.corba_bin, X_OK) != 0))
        bench_opt.corba_bin = NULL;
#else
    (void)no_corba;
    bench_opt.corba_bin = NULL;
#endif
    if (!bench_opt.corba_bin) printf("# omniORB baseline: not built or disabled; skipped\n");
#ifdef HAVE_GRPC
    if (!bench_opt.grpc_bin) bench_opt.grpc_bin = bench_sibling_path("numrpc-grpc-server");
    if (no_grpc || (bench_opt.grpc_bin && access(bench_opt.grpc_bin, X_OK) != 0))
        bench_opt.grpc_bin = NULL;
#else
    (void)no_grpc;
    bench_opt.grpc_bin = NULL;
#endif
    if (!bench_opt.grpc_bin) printf("# gRPC baseline: not built or disabled; skipped\n");
    if (access(bench_opt.server_bin, X_OK) != 0) {
        fprintf(stderr, "numrpc-bench-transfer: no server at %s (use --server-bin)\n",
                bench_opt.server_bin);
        return 2;
    }
    if (bench_opt.rounds <= 0) bench_opt.rounds = bench_opt.quick ? 5 : 7;
    if (bench_opt.rounds < 5) fprintf(stderr, "numrpc-bench-transfer: note: fewer than 5 rounds\n");
    if (bench_opt.rounds > MAX_ROUNDS) bench_opt.rounds = MAX_ROUNDS;
    if (sizes_arg) {
        char *copy = strdup(sizes_arg), *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t && bench_opt.nsizes < MAX_SIZES;
             t = strtok_r(NULL, ",", &save)) {
            size_t v = bench_parse_size(t);
            if (v == 0) {
                fprintf(stderr, "numrpc-bench-transfer: bad size '%s'\n", t);
                return 2;
            }
            bench_opt.sizes[bench_opt.nsizes++] = v;
        }
        free(copy);
    } else {
        bench_opt.sizes[bench_opt.nsizes++] = 8;
        bench_opt.sizes[bench_opt.nsizes++] = 64u << 10;
        bench_opt.sizes[bench_opt.nsizes++] = 8u << 20;
        if (!bench_opt.quick) bench_opt.sizes[bench_opt.nsizes++] = 64u << 20;
    }
    for (int i = 0; i < bench_opt.nsizes; i++) {
        if (bench_opt.sizes[i] / 8 > INT_MAX) {
            fprintf(stderr, "numrpc-bench-transfer: size too large for dcopy\n");
            return 2;
        }
        size_t b = bench_opt.sizes[i] < 8 ? 8 : bench_opt.sizes[i] / 8 * 8;
        if (b > maxbytes) maxbytes = b;
    }
    if (bench_opt.packet_sweep && maxbytes < (8u << 20)) maxbytes = 8u << 20;
    if (bench_opt.buffer_sweep && maxbytes < bench_opt.sweep_bytes)
        maxbytes = bench_opt.sweep_bytes;
    if (measure_alloc_buffers(maxbytes) != 0) {
        fprintf(stderr, "numrpc-bench-transfer: out of memory\n");
        return 2;
    }

    int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    struct placement pls[3];
    int npl = 0;
    if (ncpu >= 2) {
        pls[npl++] = (struct placement){"same-cpu", 0, 0};
        pls[npl++] = (struct placement){"different-cpus", 0, 1};
    } else {
        pls[npl++] = (struct placement){"unpinned-1cpu", -1, -1};
    }
    if (place_arg) {
        for (int i = 0; i < npl; i++)
            if (strncmp(pls[i].name, place_arg, strlen(place_arg)) == 0)
                bench_opt.placement_only = i;
        if (bench_opt.placement_only < 0 && npl == 1) {
            printf("# placement '%s': one CPU here, running unpinned\n", place_arg);
            bench_opt.placement_only = 0;
        }
        if (bench_opt.placement_only < 0) {
            fprintf(stderr, "numrpc-bench-transfer: placement '%s' not available here\n",
                    place_arg);
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    printf("# numrpc-bench-transfer: %d online CPUs, %d rounds, server %s, stubs %s\n", ncpu,
           bench_opt.rounds, bench_opt.server_bin, bench_opt.stubs);
    fflush(stdout);
    int failed = 0;
    for (int pi = 0; pi < npl; pi++) {
        if (bench_opt.placement_only >= 0 && pi != bench_opt.placement_only) continue;
        if (sweep_placement(pi, &pls[pi]) != 0) failed = 1;
    }
    FILE *md = NULL;
    if (bench_opt.markdown) {
        md = fopen(bench_opt.markdown, "w");
        if (!md) perror(bench_opt.markdown);
    }
    if (md && !bench_opt.buffer_sweep)
        fprintf(md, "Round trip: N bytes each way (dcopy: x out, y back; raw: echo). "
                    "Cells: median of per-round medians. Ratio: numrpc time / raw tuned "
                    "time (lower is better), median over %d rounds (round min..max; "
                    "bootstrap 90%% CI of the median).\n",
                bench_opt.rounds);
    if (bench_opt.buffer_sweep) {
        report_sweep(md);
        if (bench_opt.sweep_csv && report_write_sweep_csv(bench_opt.sweep_csv, pls) != 0)
            failed = 1;
    } else {
        report_tables(pls, npl, ncpu, md);
        if (bench_opt.csv && report_write_csv(bench_opt.csv, pls) != 0) failed = 1;
    }
    if (md) fclose(md);
    if (measure_verify_failures()) {
        fprintf(stderr, "numrpc-bench-transfer: %d transfers returned wrong data\n",
                measure_verify_failures());
        return 1;
    }
    return failed ? 1 : 0;
}
