/* bench_untravelled.c -- what a CALL of a few hundred bytes can make a worker
 * touch: peak RSS growth of a fresh one-worker server per call, for servers
 * with and without the untravelled budget (docs/benchmarks.md, "Memory"). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "numrpc.h"
#include "stats.h"

/* A server to measure: its binary and the options that set it apart. */
typedef struct server_kind {
    const char *label, *bin, *opts[3];
} server_kind;

/* A field of /proc/PID/status in KiB (VmRSS, VmHWM); -1 when absent. */
static long vm_kib(pid_t pid, const char *field)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long v = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && line[n] == ':') v = atol(line + n + 1);
    if (f) fclose(f);
    return v;
}

/* The first child of pid (a one-worker server's worker); -1 when none. */
static pid_t first_child(pid_t pid)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
    FILE *f = fopen(path, "r");
    int child = -1;
    if (f && fscanf(f, "%d", &child) != 1) child = -1;
    if (f) fclose(f);
    return child;
}

/* Starts kind's server on stubs with one worker; its pid, its address in
 * addr (empty when it did not start). */
static pid_t start_server(const server_kind *k, const char *stubs, const char *port_file, char *addr, size_t len)
{
    unlink(port_file);
    fflush(stdout); /* the child's freopen would write what is buffered */
    pid_t pid = fork();
    if (pid == 0) {
        const char *argv[32] = {k->bin, "--port", "0", "--bind", "127.0.0.1", "--port-file", port_file,
                                "--stubs", stubs, "--workers", "1", "--max-workers", "1", "--blas-threads", "1",
                                "--admin-socket", "none", "--quiet"};
        int n = 18;
        for (int i = 0; i < 3 && k->opts[i]; i++) argv[n++] = k->opts[i];
        if (freopen("/dev/null", "w", stdout) == NULL) _exit(127);
        execv(k->bin, (char *const *)argv);
        _exit(127);
    }
    int port = 0;
    for (int i = 0; i < 2000 && port == 0 && pid > 0; i++) {
        FILE *f = fopen(port_file, "r");
        if (f == NULL || fscanf(f, "%d", &port) != 1) port = 0;
        if (f) fclose(f);
        if (port == 0) usleep(5000);
    }
    if (port) snprintf(addr, len, "127.0.0.1:%d", port);
    else addr[0] = '\0';
    return pid;
}

/* The calls: each request is a few hundred bytes; the caller's own strided
 * arrays span as much as the server would (calloc: never touched here). */
enum { CALL_DGELS, CALL_DGEMM, CALL_DCOPY, CALL_DGESVD, NCALLS };
static const char *const call_names[NCALLS] = {
    "dgels, lwork = 2^27 (1 GiB workspace)",
    "dgemm, m = 1, n = 8, ldc = 2^24 (1 GiB of C)",
    "dcopy, n = 2, incx = incy = 2^26 (1 GiB of gaps)",
    "dgesvd, jobu = 'A', m = 8192, n = 1 (U: 512 MiB the routine writes)",
};

static int make_call(int which, double *big1, double *big2)
{
    double a[4] = {4, 1, 1, 3}, b[8] = {1, 2, 3, 4, 5, 6, 7, 8}, one = 1, s = 0;
    int info = 0, m = 8192;
    switch (which) {
    case CALL_DGELS: return numrpc_call("dgels", 'N', 2, 2, 1, a, 2, b, 2, NULL, 1 << 27, &info);
    case CALL_DGEMM: return numrpc_call("dgemm", 'N', 'N', 1, 8, 1, 1.0, &one, 1, b, 1, 0.0, big1, 1 << 24);
    case CALL_DCOPY: return numrpc_call("dcopy", 2, big1, 1 << 26, big2, 1 << 26);
    default:
        for (int i = 0; i < m; i++) big2[i] = 1.0 / (1 + i);
        return numrpc_call("dgesvd", 'A', 'N', m, 1, big2, m, &s, big1, m, NULL, 1, NULL, 4 * m, &info);
    }
}

/* One round: a fresh server, one call; peak RSS growth (MiB), seconds,
 * request bytes (0 when the call was refused: no figures then). */
static int measure(const server_kind *k, const char *stubs, const char *port_file, int which, double *grow_mib,
                   double *seconds, double *request, int *code)
{
    char addr[64];
    pid_t pid = start_server(k, stubs, port_file, addr, sizeof addr);
    numrpc_config cfg = {.servers = addr};
    int ok = addr[0] && numrpc_init(&cfg) == NUMRPC_OK && numrpc_call("ping") == NUMRPC_OK;
    pid_t worker = ok ? first_child(pid) : -1;
    long rss0 = worker > 0 ? vm_kib(worker, "VmRSS") : -1;
    /* dgemm's C spans ldc x n = 2^27 doubles; dcopy's x and y 2^26 + 1. */
    double *big1 = calloc((size_t)1 << 27, sizeof(double)), *big2 = calloc(((size_t)1 << 26) + 1, sizeof(double));
    ok = ok && rss0 > 0 && big1 && big2;
    if (ok) {
        double t0 = bench_now();
        *code = make_call(which, big1, big2);
        *seconds = bench_now() - t0;
        numrpc_call_info info = {0};
        *request = *code == NUMRPC_OK && numrpc_last_call_info(&info) == NUMRPC_OK ? (double)info.bytes_sent : 0;
        *grow_mib = (double)(vm_kib(worker, "VmHWM") - rss0) / 1024.0;
    }
    numrpc_finalize();
    free(big1);
    free(big2);
    if (pid > 0) {
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
    }
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: numrpc-bench-untravelled SERVER_BIN STUB_DIR [ROUNDS [BEFORE_SERVER_BIN]]\n"
                        "STUB_DIR serves blas.so and lapack.so; BEFORE_SERVER_BIN, a server built before the\n"
                        "budget, adds a column.\n");
        return 2;
    }
    int rounds = argc > 3 ? atoi(argv[3]) : 3;
    if (rounds < 1 || rounds > 99) rounds = 3;
    server_kind kinds[3];
    int nkinds = 0;
    if (argc > 4) kinds[nkinds++] = (server_kind){"before the budget", argv[4], {NULL}};
    kinds[nkinds++] = (server_kind){"budget off (8 GiB)", argv[1], {"--max-untravelled-bytes", "8G", NULL}};
    kinds[nkinds++] = (server_kind){"budget 64 MiB (default)", argv[1], {NULL}};
    char port_file[] = "/tmp/numrpc-bench-untravelled-XXXXXX";
    int fd = mkstemp(port_file);
    if (fd < 0) return 1;
    close(fd);

    printf("Worker peak RSS growth (VmHWM after the call - VmRSS before, MiB) and call time, median of %d "
           "rounds (min..max), a fresh one-worker server per round\n\n",
           rounds);
    printf("| call | request bytes |");
    for (int k = 0; k < nkinds; k++) printf(" %s |", kinds[k].label);
    printf("\n| --- | --- |");
    for (int k = 0; k < nkinds; k++) printf(" --- |");
    printf("\n");
    int status = 0;
    for (int c = 0; c < NCALLS; c++) {
        char cells[3][96];
        double request = 0;
        for (int k = 0; k < nkinds; k++) {
            double grow[99], secs[99], req = 0;
            int code = 0;
            for (int r = 0; r < rounds; r++) {
                if (measure(&kinds[k], argv[2], port_file, c, &grow[r], &secs[r], &req, &code) != 0) {
                    fprintf(stderr, "numrpc-bench-untravelled: %s: the server did not serve\n", kinds[k].label);
                    unlink(port_file);
                    return 1;
                }
                if (req > 0) request = req;
            }
            double lo = bench_min(grow, (size_t)rounds), hi = bench_max(grow, (size_t)rounds);
            snprintf(cells[k], sizeof cells[k], "%.1f (%.1f..%.1f) MiB, %.2f ms, %s", bench_median(grow, (size_t)rounds),
                     lo, hi, bench_median(secs, (size_t)rounds) * 1e3,
                     code == NUMRPC_OK ? "served" : code == NUMRPC_ELIMIT ? "ELIMIT" : "other error");
            if (code != NUMRPC_OK && code != NUMRPC_ELIMIT) status = 1;
        }
        printf("| %s | %.0f |", call_names[c], request);
        for (int k = 0; k < nkinds; k++) printf(" %s |", cells[k]);
        printf("\n");
    }
    unlink(port_file);
    return status;
}
