/* soak_client.c -- one client of the soak (soak.sh): for a bounded time, a
 * mix of checked calls (small, 8 MiB), failing, cancelled and timed-out
 * ones, one record per call; a watchdog reports a call that never returns. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "checked_call.h"
#include "numrpc.h"
#include "stats.h"

/* What the mix draws from, with its weight (out of 100) and the outcome it
 * must end with: a good call's right answer, or the failure named. */
typedef enum call_kind {
    K_DCOPY,
    K_DGEMM,
    K_LIVE,
    K_BIG,
    K_CRASH,
    K_NOENT,
    K_CANCEL,
    K_TIMEOUT,
    NKINDS
} call_kind;
static const struct {
    const char *name;
    int weight;
    int expect; /* NUMRPC_OK: a good call whose answer is checked */
} kinds[NKINDS] = {
    [K_DCOPY] = {"dcopy", 42, NUMRPC_OK},
    [K_DGEMM] = {"dgemm", 25, NUMRPC_OK},
    [K_LIVE] = {"live", 10, NUMRPC_OK},
    [K_BIG] = {"dcopy8M", 2, NUMRPC_OK},
    [K_CRASH] = {"crash", 6, NUMRPC_ECRASHED},
    [K_NOENT] = {"noroutine", 5, NUMRPC_ENOENT},
    [K_CANCEL] = {"cancel", 5, NUMRPC_ECANCELLED},
    [K_TIMEOUT] = {"timeout", 5, NUMRPC_ETIMEDOUT},
};

#define NSMALL 4
static const int dcopy_sizes[NSMALL] = {1, 100, 1000, 4096};
static const int dgemm_sizes[NSMALL] = {8, 16, 32, 64};
#define BIG_N (1 << 20) /* 8 MiB of doubles */
/* A routine that sleeps (faults.idl's hold on a file that never appears),
 * for calls cancelled or stopped by their time limit without burning CPU. */
#define NEVER_PATH "/nonexistent/numrpc-soak/never"

static struct options {
    double seconds, call_timeout, watchdog, short_timeout;
    int client, think_ms;
    const char *records;
} opt = {60, 20, 60, 0.3, 0, 50, NULL};

static FILE *out;
static _Atomic double call_started; /* bench_now() of the call in progress, 0 = none */
static char call_what[64];          /* its kind, for the watchdog's line */

static void usage(void)
{
    fprintf(
        stderr,
        "usage: numrpc-soak-client --records FILE [--client I] [--seconds S] [--think-ms M]\n"
        "         [--call-timeout S] [--short-timeout S] [--watchdog S]\n"
        "Calls whatever server NUMRPC_SERVER or NUMRPC_METASERVER names for S seconds: dcopy\n"
        "and dgemm checked against local BLAS, dcopy of 8 MiB, live_version (1 or 2), crash(1)\n"
        "(ECRASHED), an unknown routine (ENOENT), hold() cancelled (ECANCELLED) or past a\n"
        "time limit of --short-timeout (ETIMEDOUT); every other call has --call-timeout.\n"
        "One line per call in FILE: unix_ms kind expected code wrong seconds limit server (of a\n"
        "success) and, when the outcome was not the expected one or came 5 s past the limit,\n"
        "its detail; then \"end\".\n"
        "A call still running after --watchdog s writes \"lost\" and ends the client (exit 3).\n");
    exit(2);
}

static void parse_options(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v == NULL) usage();
        if (strcmp(a, "--records") == 0)
            opt.records = v;
        else if (strcmp(a, "--client") == 0)
            opt.client = atoi(v);
        else if (strcmp(a, "--seconds") == 0)
            opt.seconds = atof(v);
        else if (strcmp(a, "--think-ms") == 0)
            opt.think_ms = atoi(v);
        else if (strcmp(a, "--call-timeout") == 0)
            opt.call_timeout = atof(v);
        else if (strcmp(a, "--short-timeout") == 0)
            opt.short_timeout = atof(v);
        else if (strcmp(a, "--watchdog") == 0)
            opt.watchdog = atof(v);
        else
            usage();
        i++;
    }
    if (opt.records == NULL || !(opt.seconds > 0) || opt.think_ms < 0 || !(opt.call_timeout > 0) ||
        !(opt.short_timeout > 0) || !(opt.watchdog > opt.call_timeout))
        usage();
}

static double unix_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec * 1e3 + (double)tv.tv_usec * 1e-3;
}

/* Watches the calling thread: a call past --watchdog seconds is lost. */
static void *watchdog(void *arg)
{
    (void)arg;
    for (;;) {
        usleep(200000);
        double t = atomic_load(&call_started);
        if (t > 0 && bench_now() - t > opt.watchdog) {
            char line[160];
            int n =
                snprintf(line, sizeof line, "lost %s after %.0f s\n", call_what, bench_now() - t);
            fflush(out);
            if (write(fileno(out), line, (size_t)n) < 0 || write(2, line, (size_t)n) < 0) _exit(4);
            _exit(3);
        }
    }
    return NULL;
}

/* The client's checked cases, made once (8 MiB of input for the big one). */
static checked_case small_dcopy[NSMALL], small_dgemm[NSMALL], big;

static int make_cases(void)
{
    unsigned seed = 1000u * (unsigned)opt.client;
    for (int i = 0; i < NSMALL; i++)
        if (checked_case_init(&small_dcopy[i], CHECKED_DCOPY, dcopy_sizes[i], seed + i) != 0 ||
            checked_case_init(&small_dgemm[i], CHECKED_DGEMM, dgemm_sizes[i], seed + 10 + i) != 0)
            return -1;
    return checked_case_init(&big, CHECKED_DCOPY, BIG_N, seed + 20);
}

/* hold() started asynchronously and cancelled 10-100 ms later. */
static int cancelled_call(unsigned *rng)
{
    int id, rc = numrpc_call_async(&id, "hold", NEVER_PATH);
    if (rc != NUMRPC_OK) return rc;
    usleep(10000 + rand_r(rng) % 90000);
    rc = numrpc_cancel(id);
    int waited = numrpc_wait(id);
    return rc != NUMRPC_OK ? rc : waited;
}

/* One call of kind k; *wrong when a good call came back with another answer
 * (or a failing one succeeded). */
static int one_call(call_kind k, unsigned *rng, int *wrong)
{
    int rc, v = 0;
    *wrong = 0;
    switch (k) {
    case K_DCOPY:
        return checked_case_call(&small_dcopy[rand_r(rng) % NSMALL], wrong);
    case K_DGEMM:
        return checked_case_call(&small_dgemm[rand_r(rng) % NSMALL], wrong);
    case K_BIG:
        return checked_case_call(&big, wrong);
    case K_LIVE:
        rc = numrpc_call("live_version", &v);
        *wrong = rc == NUMRPC_OK && v != 1 && v != 2;
        return rc;
    case K_CRASH:
        rc = numrpc_call("crash", 1);
        break;
    case K_NOENT:
        rc = numrpc_call("no_such_routine_in_the_soak", 1);
        break;
    case K_CANCEL:
        rc = cancelled_call(rng);
        break;
    case K_TIMEOUT:
        rc = numrpc_call("hold", NEVER_PATH);
        break;
    default:
        rc = NUMRPC_EINTERNAL;
    }
    *wrong = rc == NUMRPC_OK; /* a call that must fail came back as a success */
    return rc;
}

static call_kind draw(unsigned *rng)
{
    int r = rand_r(rng) % 100;
    for (int k = 0; k < NKINDS; k++) {
        if (r < kinds[k].weight) return (call_kind)k;
        r -= kinds[k].weight;
    }
    return K_DCOPY;
}

int main(int argc, char **argv)
{
    parse_options(argc, argv);
    out = fopen(opt.records, "w");
    if (out == NULL) {
        fprintf(stderr, "soak_client: %s: %s\n", opt.records, strerror(errno));
        return 1;
    }
    pthread_t tid;
    if (make_cases() != 0 || numrpc_init(NULL) != NUMRPC_OK ||
        numrpc_set_timeout(opt.call_timeout) != NUMRPC_OK ||
        pthread_create(&tid, NULL, watchdog, NULL) != 0) {
        fprintf(stderr, "soak_client %d: cannot start: %s\n", opt.client,
                numrpc_last_error_detail());
        return 1;
    }
    unsigned rng = 7919u * (unsigned)opt.client + 1;
    long calls = 0, wrong_total = 0;
    double end = bench_now() + opt.seconds;
    while (bench_now() < end) {
        call_kind k = calls < NKINDS ? (call_kind)calls : draw(&rng); /* each kind once first */
        int wrong;
        snprintf(call_what, sizeof call_what, "%s", kinds[k].name);
        double limit = k == K_TIMEOUT ? opt.short_timeout : opt.call_timeout;
        numrpc_set_timeout(limit); /* before the call: its detail stays readable after */
        double t_unix = unix_ms(), t0 = bench_now();
        atomic_store(&call_started, t0);
        int rc = one_call(k, &rng, &wrong);
        atomic_store(&call_started, 0.0);
        double t = bench_now() - t0;
        numrpc_call_info info = {0};
        numrpc_last_call_info(&info);
        fprintf(out, "%.0f %s %s %s %d %.6f %g %s%s%s\n", t_unix, kinds[k].name,
                checked_code_name(kinds[k].expect), checked_code_name(rc), wrong, t, limit,
                rc == NUMRPC_OK && info.server[0] ? info.server : "-",
                rc != kinds[k].expect || t > limit + 5 ? " " : "",
                rc != kinds[k].expect || t > limit + 5 ? numrpc_last_error_detail() : "");
        calls++;
        wrong_total += wrong;
        if (opt.think_ms > 0)
            usleep((useconds_t)(opt.think_ms * 500 + rand_r(&rng) % (opt.think_ms * 1000 + 1)));
    }
    fprintf(out, "end calls=%ld wrong=%ld\n", calls, wrong_total);
    fclose(out);
    numrpc_finalize();
    return wrong_total ? 1 : 0;
}
