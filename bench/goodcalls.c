/* goodcalls.c -- a legitimate client under measurement: P processes make K
 * blocking dcopy/dgemm calls of a few sizes in all, every answer checked
 * against local BLAS, some on a new connection; prints each call's latency
 * and a summary line (attack_p99.sh). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checked_call.h"
#include "numrpc.h"
#include "stats.h"

#define MAX_PROCS 64
#define MAX_CODES 64
#define NCASES    5
/* The sizes every process cycles through: small copies, a 512 KiB copy,
 * two small products. */
static const struct {
    checked_kind kind;
    const char *routine;
    int n;
} case_sizes[NCASES] = {
    {CHECKED_DCOPY, "dcopy", 16},    {CHECKED_DCOPY, "dcopy", 4096}, {CHECKED_DGEMM, "dgemm", 32},
    {CHECKED_DCOPY, "dcopy", 65536}, {CHECKED_DGEMM, "dgemm", 96},
};

/* One call's outcome, written by the process that made it into memory
 * shared with the parent. */
typedef struct call_record {
    int proc, kase, made, fresh, rc, wrong;
    double seconds;
} call_record;

static struct options {
    const char *server, *label, *csv, *go_file;
    int calls, procs, fresh_every;
    double timeout, budget;
} opt = {NULL, "run", NULL, NULL, 400, 4, 10, 5.0, 30.0};

static void usage(void)
{
    fprintf(
        stderr,
        "usage: numrpc-goodcalls --server HOST:PORT [--calls K] [--procs P] [--fresh-every F]\n"
        "         [--timeout S] [--budget S] [--label L] [--csv FILE] [--go-file PATH]\n"
        "P client processes make K blocking calls in all (dcopy of 16, 4096 and 65536 doubles,\n"
        "dgemm of order 32 and 96, in turn), each answer compared with local BLAS.  Every F-th\n"
        "call of a process (default 10; 0 = none) is a new client's: connections and interfaces\n"
        "forgotten first (numrpc_finalize).  Each process first makes one untimed call of each\n"
        "kind; with --go-file the program then prints \"warm\" and waits (at most 120 s) until\n"
        "PATH exists.  No call starts after --budget seconds of measuring; each has the time\n"
        "limit --timeout.  --csv appends label,proc,routine,n,fresh,code,wrong,seconds per call.\n"
        "The last line is a summary (latencies of right answers only); exit 1 when an answer\n"
        "was wrong or the warm-up failed.\n");
    exit(2);
}

static void parse_options(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v == NULL) usage();
        if (strcmp(a, "--server") == 0)
            opt.server = v;
        else if (strcmp(a, "--calls") == 0)
            opt.calls = atoi(v);
        else if (strcmp(a, "--procs") == 0)
            opt.procs = atoi(v);
        else if (strcmp(a, "--fresh-every") == 0)
            opt.fresh_every = atoi(v);
        else if (strcmp(a, "--timeout") == 0)
            opt.timeout = atof(v);
        else if (strcmp(a, "--budget") == 0)
            opt.budget = atof(v);
        else if (strcmp(a, "--label") == 0)
            opt.label = v;
        else if (strcmp(a, "--csv") == 0)
            opt.csv = v;
        else if (strcmp(a, "--go-file") == 0)
            opt.go_file = v;
        else
            usage();
        i++;
    }
    if (opt.server == NULL || opt.calls < 1 || opt.procs < 1 || opt.procs > MAX_PROCS ||
        opt.fresh_every < 0 || opt.timeout < 0 || opt.budget <= 0)
        usage();
}

/* A client as a new program starts: no connection, no interface known. */
static int start_client(void)
{
    numrpc_config cfg = {.servers = opt.server};
    int rc = numrpc_init(&cfg);
    return rc != NUMRPC_OK ? rc : numrpc_set_timeout(opt.timeout);
}

/* Process p: warms up, tells the parent (warm_fd), waits for the go (EOF
 * on go_fd), then makes calls p, p + P, ...  Exit status 1: the warm-up failed. */
static int run_client(int p, call_record *records, int warm_fd, int go_fd)
{
    checked_case cases[NCASES];
    int status = start_client() != NUMRPC_OK;
    for (int k = 0; k < NCASES; k++) {
        int wrong;
        if (checked_case_init(&cases[k], case_sizes[k].kind, case_sizes[k].n, 100u * p + k) != 0)
            return 1;
        if (checked_case_call(&cases[k], &wrong) != NUMRPC_OK || wrong)
            status = 1; /* untimed: the interface */
    }
    char c = 'w';
    if (write(warm_fd, &c, 1) != 1 || read(go_fd, &c, 1) != 0) return 1;
    double t_go = bench_now();
    for (int i = p, j = 0; i < opt.calls; i += opt.procs, j++) {
        call_record *r = &records[i];
        r->proc = p;
        r->kase = j % NCASES;
        if (bench_now() - t_go > opt.budget) continue; /* not made: the budget is spent */
        r->made = 1;
        r->fresh = opt.fresh_every > 0 && j % opt.fresh_every == opt.fresh_every - 1;
        double t0 = bench_now();
        if (r->fresh) {
            numrpc_finalize();
            r->rc = start_client();
        }
        if (r->rc == NUMRPC_OK) r->rc = checked_case_call(&cases[r->kase], &r->wrong);
        r->seconds = bench_now() - t0;
    }
    for (int k = 0; k < NCASES; k++)
        checked_case_free(&cases[k]);
    numrpc_finalize();
    return status;
}

static int wait_for_go_file(void)
{
    printf("warm\n");
    fflush(stdout);
    for (int i = 0; i < 12000; i++) {
        if (access(opt.go_file, F_OK) == 0) return 0;
        usleep(10000);
    }
    fprintf(stderr, "goodcalls: %s did not appear within 120 s\n", opt.go_file);
    return -1;
}

/* The q-quantile (nearest rank) of v[0..n-1] in milliseconds, as text in
 * out ("-" when n is 0); sorts v. */
static const char *quantile_ms(char out[32], double *v, size_t n, double q)
{
    if (n == 0) return "-";
    bench_median(v, n); /* sorts */
    size_t rank = (size_t)(q * (double)n + 0.999999);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    snprintf(out, 32, "%.3f", v[rank - 1] * 1e3);
    return out;
}

/* Prints the summary (and the CSV rows); returns the count of wrong answers. */
static long report(const call_record *records)
{
    FILE *csv = opt.csv ? fopen(opt.csv, "a") : NULL;
    if (opt.csv && csv == NULL) fprintf(stderr, "goodcalls: %s: %s\n", opt.csv, strerror(errno));
    int by_code[MAX_CODES] = {0};
    long made = 0, ok = 0, refused = 0, errors = 0, wrong = 0, skipped = 0, nfresh = 0;
    double *lat = malloc((size_t)opt.calls * sizeof *lat),
           *fresh = malloc((size_t)opt.calls * sizeof *fresh);
    if (lat == NULL || fresh == NULL) exit(1);
    for (int i = 0; i < opt.calls; i++) {
        const call_record *r = &records[i];
        if (!r->made) {
            skipped++;
            continue;
        }
        made++;
        if (r->rc == NUMRPC_OK && !r->wrong) { /* latencies of right answers only */
            lat[ok++] = r->seconds;
            if (r->fresh) fresh[nfresh++] = r->seconds;
        } else if (r->rc == NUMRPC_EBUSY || r->rc == NUMRPC_ECONNECT) {
            refused++;
        } else if (r->rc != NUMRPC_OK) {
            errors++;
        }
        wrong += r->wrong;
        if (r->rc < 0 && -r->rc < MAX_CODES) by_code[-r->rc]++;
        if (csv)
            fprintf(csv, "%s,%d,%s,%d,%d,%s,%d,%.6f\n", opt.label, r->proc,
                    case_sizes[r->kase].routine, case_sizes[r->kase].n, r->fresh,
                    checked_code_name(r->rc), r->wrong, r->seconds);
    }
    if (csv) fclose(csv);
    char codes[512] = "-";
    size_t at = 0;
    for (int c = 1; c < MAX_CODES; c++)
        if (by_code[c] && at < sizeof codes - 40)
            at += (size_t)snprintf(codes + at, sizeof codes - at, "%s%s:%d", at ? ";" : "",
                                   checked_code_name(-c), by_code[c]);
    char p50[32], p99[32], f50[32], fmax[32];
    printf(
        "summary label=%s calls=%ld ok=%ld refused=%ld errors=%ld wrong=%ld skipped=%ld p50_ms=%s "
        "p99_ms=%s fresh=%ld fresh_p50_ms=%s fresh_max_ms=%s codes=%s\n",
        opt.label, made, ok, refused, errors, wrong, skipped,
        quantile_ms(p50, lat, (size_t)ok, 0.5), quantile_ms(p99, lat, (size_t)ok, 0.99), nfresh,
        quantile_ms(f50, fresh, (size_t)nfresh, 0.5), quantile_ms(fmax, fresh, (size_t)nfresh, 1.0),
        codes);
    free(lat);
    free(fresh);
    return wrong;
}

int main(int argc, char **argv)
{
    parse_options(argc, argv);
    size_t bytes = (size_t)opt.calls * sizeof(call_record);
    call_record *records =
        mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int warm[2], go[2];
    if (records == MAP_FAILED || pipe(warm) != 0 || pipe(go) != 0) {
        perror("goodcalls");
        return 1;
    }
    memset(records, 0, bytes);
    pid_t pids[MAX_PROCS];
    for (int p = 0; p < opt.procs; p++) {
        pids[p] = fork();
        if (pids[p] < 0) {
            perror("goodcalls: fork");
            return 1;
        }
        if (pids[p] == 0) {
            close(warm[0]);
            close(go[1]);
            _exit(run_client(p, records, warm[1], go[0]));
        }
    }
    close(warm[1]);
    close(go[0]);
    int warmed = 0, status = 0;
    char c;
    while (warmed < opt.procs && read(warm[0], &c, 1) == 1)
        warmed++;
    if (warmed < opt.procs || (opt.go_file && wait_for_go_file() != 0)) status = 1;
    close(go[1]); /* go: every process reads EOF */
    for (int p = 0; p < opt.procs; p++) {
        int ws;
        if (waitpid(pids[p], &ws, 0) != pids[p] || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
            fprintf(stderr, "goodcalls: client process %d failed (warm-up or startup)\n", p);
            status = 1;
        }
    }
    if (report(records) > 0) status = 1;
    munmap(records, bytes);
    return status;
}
