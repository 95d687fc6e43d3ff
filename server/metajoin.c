/* metajoin.c -- joins a metaserver from a helper process: measures P_calc(n)
 * with dmmul calls on this server's own workers, proves its join token,
 * sends routines, load changes and heartbeats. */
#define _GNU_SOURCE
#include "metajoin.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "log.h"
#include "marshal.h"
#include "msg.h"
#include "msg_meta.h"
#include "peer.h"
#include "protocol.h"
#include "sock.h"
#include "tls.h"
#include "tokens.h"

#define MJ_CONNECT_MS 2000
#define MJ_IO_MS 20000
#define MJ_RETRY_SECONDS 1.0
static const int speed_sizes[] = {64, 128, 256, 512};
#define MJ_POINTS ((int)(sizeof speed_sizes / sizeof speed_sizes[0]))
_Static_assert(MJ_POINTS <= RANK_MAX_POINTS, "the speed curve fits a JOIN");

/* The dispatcher's load as it last told it; shared with the helper. */
typedef struct mj_load {
    _Atomic int in_flight, queued, draining;
    _Atomic int linked;     /* the helper is joined (it sends at once)      */
    _Atomic int drain_sent; /* the helper sent a LOAD saying "draining"     */
} mj_load;

/* The dispatcher waits this long at most, once, for the helper to tell the
 * metaserver it drains (a server with nothing in flight exits at once,
 * and its helper with it). */
#define MJ_DRAIN_WAIT_SECONDS 0.2

static struct {
    char meta_host[256];
    int meta_port;
    char advertise[256];
    char token_file[CONFIG_PATH_MAX]; /* --metaserver-token-file ("" = none) */
    char tls_ca[CONFIG_PATH_MAX];     /* --metaserver-tls-ca ("" = plain TCP) */
    char fingerprint[TLS_FINGERPRINT_HEX + 1]; /* of --tls-cert, announced ("" = none) */
    int active;
    server_config cfg; /* a copy taken at start                      */
    mj_load *load;     /* MAP_SHARED: written by the dispatcher        */
    int efd;           /* eventfd: the dispatcher wakes the helper     */
    pid_t helper;      /* the joining process (in the dispatcher)      */
} mj = {.efd = -1};

/* The routines as announced: name, hash, descriptor (owned). */
typedef struct mj_list {
    msg_meta_routine *items;
    uint32_t count;
} mj_list;

static void list_free(mj_list *l)
{
    msg_meta_routines_free(l->items, l->count);
    l->items = NULL;
    l->count = 0;
}

/* The options taken here, and which of them argument a is ("--name V" or
 * "--name=V"): its index, or -1. */
enum { OPT_METASERVER, OPT_ADVERTISE, OPT_TOKEN_FILE, OPT_TLS_CA };
static const char *const option_names[] = {"--metaserver", "--advertise", "--metaserver-token-file",
                                           "--metaserver-tls-ca"};

static int option_of(const char *a)
{
    for (int k = 0; k < (int)(sizeof option_names / sizeof option_names[0]); k++) {
        size_t n = strlen(option_names[k]);
        if (strncmp(a, option_names[k], n) == 0 && (a[n] == '\0' || a[n] == '=')) return k;
    }
    return -1;
}

int metajoin_take_options(int *argc, char **argv, err_t *err)
{
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i], *eq = strchr(a, '='), *v = NULL;
        int which = option_of(a);
        /* The server's own certificate (the server's option, left in argv):
         * its fingerprint goes into the JOIN, for clients to check. */
        const char *cert = strcmp(a, "--tls-cert") == 0 ? (i + 1 < *argc ? argv[i + 1] : NULL)
                           : strncmp(a, "--tls-cert=", 11) == 0 ? a + 11
                                                               : NULL;
        if (cert && tls_file_fingerprint(cert, mj.fingerprint, err) != 0) return err->code;
        if (which < 0) {
            argv[out++] = argv[i];
            continue;
        }
        if (eq) v = eq + 1;
        else if (i + 1 < *argc) v = argv[++i];
        if (v == NULL || *v == '\0') return err_set(err, NUMRPC_EINVAL, "%s needs a value", a);
        int rc = 0;
        if (which == OPT_ADVERTISE) {
            snprintf(mj.advertise, sizeof mj.advertise, "%s", v);
        } else if (which == OPT_TLS_CA) {
            /* Checked now (a context is made and freed): a bad file stops
             * the server at start. */
            tls_context *probe = tls_client_context_new(v, NULL, NULL, err);
            rc = probe ? 0 : err->code;
            tls_context_free(probe);
            if (rc != 0) err_prefix(err, "--metaserver-tls-ca");
            snprintf(mj.tls_ca, sizeof mj.tls_ca, "%s", v);
        } else if (which == OPT_TOKEN_FILE) {
            /* Read now, so that a bad file stops the server at start;
             * again at each join, so that a new secret needs no restart. */
            token own;
            rc = tokens_load_own(v, &own, err);
            memset(&own, 0, sizeof own);
            snprintf(mj.token_file, sizeof mj.token_file, "%s", v);
        } else {
            rc = sock_parse_hostport(v, mj.meta_host, sizeof mj.meta_host, &mj.meta_port, err);
            if (rc != 0) err_prefix(err, "--metaserver");
            mj.active = 1;
        }
        if (rc != 0) return rc;
    }
    argv[out] = NULL;
    *argc = out;
    return 0;
}

int metajoin_active(void)
{
    return mj.active;
}

void metajoin_note_load(int in_flight, int queued, int draining)
{
    mj_load *l = mj.load;
    if (l == NULL || (atomic_load(&l->in_flight) == in_flight && atomic_load(&l->queued) == queued &&
                      atomic_load(&l->draining) == draining))
        return;
    int drain_starts = draining && !atomic_load(&l->draining);
    atomic_store(&l->in_flight, in_flight);
    atomic_store(&l->queued, queued);
    atomic_store(&l->draining, draining);
    uint64_t one = 1;
    if (write(mj.efd, &one, sizeof one) < 0) { /* a full counter already wakes it */
    }
    /* SIGTERM: the metaserver hears of the drain before this server can
     * exit (subscribers get their `drain` event); bounded, and only while
     * the helper is joined. */
    double until = sock_now() + MJ_DRAIN_WAIT_SECONDS;
    while (drain_starts && atomic_load(&l->linked) && !atomic_load(&l->drain_sent) && sock_now() < until) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

/* ---- A connection speaking the numrpc protocol (to this server or to
 * the metaserver) ---- */

/* Connects and says HELLO as peer.c does, with the link's time limits. */
static int conn_open(msg_conn *c, tls_context *tls, const char *host, int port, const token *own,
                     const char *token_file, err_t *err)
{
    return peer_open(c, tls, host, port, own, token_file, "numrpc-server metajoin", MJ_CONNECT_MS, MJ_IO_MS, err);
}

/* ---- What this server offers, asked of itself (LIST, GET_IFACE) ---- */

static const char *self_host(void)
{
    const char *b = mj.cfg.bind_addr;
    return b[0] == '\0' || strcmp(b, "0.0.0.0") == 0 || strcmp(b, "::") == 0 ? "127.0.0.1" : b;
}

/* Connects to this server itself, as it asks any client to: over TLS when
 * it has --tls-cert, with its own certificate as the only one trusted (and
 * as the client certificate mutual TLS wants: the server accepts its own,
 * tls_server_context_new); with tokens, the first token of its own file
 * that may call every routine (read again each time, so a reload is
 * followed).  The TLS context is made at the first call and kept for the
 * helper's life. */
static int self_open(msg_conn *c, err_t *err)
{
    static tls_context *self_tls;
    if (mj.cfg.tls_cert[0] && self_tls == NULL &&
        (self_tls = tls_self_context_new(mj.cfg.tls_cert, mj.cfg.tls_key, err)) == NULL)
        return err->code;
    token_table own = {0};
    const token *pick = NULL;
    int rc = mj.cfg.token_file[0] ? tokens_load(mj.cfg.token_file, &own, err) : 0;
    for (size_t i = 0; rc == 0 && i < own.count && pick == NULL; i++)
        if (own.items[i].rights & TOKEN_CALL_ALL) pick = &own.items[i];
    if (rc == 0 && own.count > 0 && pick == NULL)
        rc = err_set(err, NUMRPC_EAUTH, "no token of %s has the `call` right this server's metaserver link needs",
                     mj.cfg.token_file);
    if (rc == 0) rc = conn_open(c, self_tls, self_host(), mj.cfg.port, pick, NULL, err);
    tokens_free(&own);
    return rc;
}

static int fetch_routines(msg_conn *c, mj_list *out, err_t *err)
{
    mj_list l = {0};
    msg_routine_entry *names = NULL;
    uint32_t id = msg_conn_next_id(c), count = 0;
    int rc = msg_write_list(&c->writer, id, err);
    if (rc == 0) rc = msg_read_list_reply(&c->reader, id, c->label, 4096, &names, &count, err);
    if (rc == 0 && (l.items = calloc(count + 1, sizeof *l.items)) == NULL) rc = err_set(err, NUMRPC_ENOMEM, "list");
    for (uint32_t i = 0; rc == 0 && i < count; i++, l.count++) {
        msg_meta_routine *m = &l.items[i];
        snprintf(m->name, sizeof m->name, "%s", names[i].name);
        m->hash = names[i].hash;
        id = msg_conn_next_id(c);
        rc = msg_write_get_iface(&c->writer, id, m->name, err);
        if (rc == 0) rc = msg_read_iface_reply(&c->reader, id, c->label, &m->blob, &m->len, err);
    }
    free(names);
    if (rc != 0) list_free(&l);
    else *out = l;
    return rc;
}

static int same_list(const mj_list *a, const mj_list *b)
{
    if (a->count != b->count) return 0;
    for (uint32_t i = 0; i < a->count; i++)
        if (strcmp(a->items[i].name, b->items[i].name) != 0 || a->items[i].hash != b->items[i].hash) return 0;
    return 1;
}

/* ---- P_calc(n): dmmul on this server's workers, as a client on this
 * host would see it (the quota and the worker's BLAS threads are in it) ---- */

static int time_dmmul(msg_conn *c, const iface_t *f, int n, double *a, double *b, double *cm, err_t *err)
{
    int32_t nn = n;
    void *argv[IFACE_MAX_PARAMS] = {&nn, a, b, cm};
    iface_shape shapes[IFACE_MAX_PARAMS];
    msg_call_header h = {.hash = f->hash, .reply_packet = PROTO_DEFAULT_PACKET, .nargs = f->nparams};
    msg_call_result res;
    snprintf(h.name, sizeof h.name, "%s", f->name);
    if (f->nparams != 4) return err_set(err, NUMRPC_EINVAL, "dmmul has %u parameters", f->nparams);
    int rc = marshal_eval_shapes(f, argv, shapes, err);
    uint32_t id = msg_conn_next_id(c);
    if (rc == 0) rc = msg_write_call_header(&c->writer, id, &h, err);
    if (rc == 0) rc = marshal_write(&c->writer, f, argv, shapes, MARSHAL_REQUEST, err);
    if (rc == 0) rc = wire_end(&c->writer, err);
    if (rc == 0) rc = msg_read_reply(&c->reader, id, c->label, err);
    if (rc == 0) rc = msg_read_call_result(&c->reader, &res, err);
    if (rc == 0) rc = wire_skip_message(&c->reader, err);
    return rc;
}

static int measure_speed(msg_conn *c, const mj_list *l, rank_curve *curve, err_t *err)
{
    const msg_meta_routine *r = NULL;
    for (uint32_t i = 0; i < l->count && r == NULL; i++)
        if (strcmp(l->items[i].name, "dmmul") == 0) r = &l->items[i];
    if (r == NULL) return 0; /* no curve: the metaserver assumes a default */
    iface_t f;
    int rc = iface_decode(r->blob, r->len, &f, err);
    if (rc != 0) return rc;
    int maxn = speed_sizes[MJ_POINTS - 1];
    double *a = malloc(sizeof(double) * (size_t)maxn * maxn * 3);
    if (a == NULL) rc = err_set(err, NUMRPC_ENOMEM, "speed matrices");
    int npoints = 0;
    for (size_t i = 0; rc == 0 && i < (size_t)maxn * maxn * 3; i++) a[i] = (double)(i % 7) * 0.25 - 0.5;
    for (int p = 0; rc == 0 && p < MJ_POINTS; p++) {
        int n = speed_sizes[p];
        double *b = a + (size_t)maxn * maxn, *cm = b + (size_t)maxn * maxn;
        /* Long enough for a CPU quota's periods (100 ms) to show. */
        double budget = p == MJ_POINTS - 1 ? 0.3 : 0.05, compute = 0, start = sock_now();
        int reps = 0;
        /* Wall time per call, not the reply's compute seconds: a quota
         * also throttles the worker while it reads the arrays, between
         * the routine's runs. */
        while (rc == 0 && (reps < 2 || compute < budget) && reps < 500 && sock_now() - start < 3) {
            double t0 = sock_now();
            rc = time_dmmul(c, &f, n, a, b, cm, err);
            compute += sock_now() - t0;
            reps++;
        }
        if (rc == 0 && compute > 0) {
            curve->n[npoints] = n;
            curve->rate[npoints] = 2.0 * n * n * (double)n * reps / compute;
            npoints++;
        }
    }
    free(a);
    iface_free(&f);
    curve->npoints = rc == 0 ? npoints : 0;
    return rc;
}

/* Calls that run at once at the measured speed: the CPUs this process may
 * use (affinity, then a cgroup v1 CPU quota) over the BLAS threads a call
 * takes. */
static int count_slots(void)
{
    cpu_set_t set;
    double cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    FILE *f = fopen("/proc/self/cgroup", "r");
    char line[1024], path[1200];
    while (f && fgets(line, sizeof line, f)) {
        char *ctl = strchr(line, ':'), *grp = ctl ? strchr(ctl + 1, ':') : NULL;
        if (grp == NULL || strstr(ctl, "cpu") == NULL || strstr(ctl, "cpuset")) continue;
        *grp = '\0';
        grp[strcspn(grp + 1, "\n") + 1] = '\0';
        long long quota = -1, period = 0;
        snprintf(path, sizeof path, "/sys/fs/cgroup/%s%s/cpu.cfs_quota_us", ctl + 1, grp + 1);
        FILE *q = fopen(path, "r");
        if (q) {
            if (fscanf(q, "%lld", &quota) != 1) quota = -1;
            fclose(q);
        }
        snprintf(path, sizeof path, "/sys/fs/cgroup/%s%s/cpu.cfs_period_us", ctl + 1, grp + 1);
        q = fopen(path, "r");
        if (q) {
            if (fscanf(q, "%lld", &period) != 1) period = 0;
            fclose(q);
        }
        if (quota > 0 && period > 0 && (double)quota / period < cpus) cpus = (double)quota / period;
    }
    if (f) fclose(f);
    int threads = mj.cfg.blas_threads > 0 ? mj.cfg.blas_threads : 1;
    int slots = (int)(cpus / threads);
    if (slots > mj.cfg.max_workers) slots = mj.cfg.max_workers;
    return slots < 1 ? 1 : slots;
}

/* ---- Messages to the metaserver ---- */

static int send_join(msg_conn *m, const mj_list *l, const rank_curve *curve, int slots, uint32_t *heartbeat_ms,
                     err_t *err)
{
    msg_meta_join j = {.port = (uint32_t)mj.cfg.port,
                       .slots = (uint32_t)slots,
                       .curve = *curve,
                       .routines = l->items,
                       .nroutines = l->count};
    snprintf(j.host, sizeof j.host, "%s",
             mj.advertise[0] ? mj.advertise : strcmp(mj.cfg.bind_addr, "0.0.0.0") == 0 ? "" : mj.cfg.bind_addr);
    snprintf(j.name, sizeof j.name, "numrpc-server pid %d", (int)getpid());
    snprintf(j.fingerprint, sizeof j.fingerprint, "%s", mj.fingerprint);
    msg_meta_joined joined;
    uint32_t id = msg_conn_next_id(m);
    int rc = msg_write_meta_join(&m->writer, id, &j, err);
    if (rc == 0) rc = msg_read_reply(&m->reader, id, m->label, err);
    if (rc == 0) rc = msg_read_meta_join_reply(&m->reader, &joined, err);
    if (rc == 0) *heartbeat_ms = joined.heartbeat_ms;
    return rc;
}

static double load_average(void)
{
    double v = 0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &v) != 1) v = 0;
        fclose(f);
    }
    return v;
}

static int send_load(msg_conn *m, int in_flight, int queued, int draining, err_t *err)
{
    msg_meta_load l = {.in_flight = (uint32_t)in_flight,
                       .queued = (uint32_t)queued,
                       .draining = (uint32_t)draining,
                       .loadavg = load_average()};
    return msg_write_meta_load(&m->writer, msg_conn_next_id(m), &l, err);
}

static void log_note(const char *what, const err_t *err)
{
    server_log(&mj.cfg, LOG_LEVEL_NOTICE, "metaserver %s:%d: %s%s%s", mj.meta_host, mj.meta_port, what,
               err ? ": " : "", err ? err->detail : "");
}

/* Asks this server what it serves (a fresh connection each time, so that
 * the answer comes from workers of the current configuration). */
static int self_routines(mj_list *out, err_t *err)
{
    msg_conn c;
    int rc = self_open(&c, err);
    if (rc != 0) return rc;
    rc = fetch_routines(&c, out, err);
    msg_conn_free(&c);
    return rc;
}

/* Start-up: what this server serves, and its speed curve (retried until
 * the server answers). */
static void measure_self(mj_list *routines, rank_curve *curve)
{
    err_t err;
    for (int attempt = 0;; attempt++) {
        msg_conn c;
        int rc = self_open(&c, &err);
        if (rc == 0) {
            rc = fetch_routines(&c, routines, &err);
            if (rc == 0) rc = measure_speed(&c, routines, curve, &err);
            msg_conn_free(&c);
        }
        if (rc == 0) return;
        list_free(routines);
        curve->npoints = 0;
        if (attempt == 0) log_note("measuring this server failed (retrying)", &err);
        sleep(1);
    }
}

static void metajoin_main(void)
{
    err_t err;
    mj_list routines = {0};
    rank_curve curve = {0};
    measure_self(&routines, &curve);
    int slots = count_slots();
    tls_context *tls = NULL; /* for the metaserver link, made once (this process's life) */
    if (mj.tls_ca[0] && (tls = tls_client_context_new(mj.tls_ca, NULL, NULL, &err)) == NULL) {
        log_note("cannot use --metaserver-tls-ca", &err);
        _exit(1);
    }
    msg_conn m;
    int linked = 0; /* m is open and joined */
    uint32_t heartbeat_ms = 1000;
    double last_sent = 0, last_list = sock_now(), next_try = 0;
    int sent_in_flight = -1, sent_queued = -1, sent_draining = -1;
    for (;;) {
        double now = sock_now();
        if (!linked && now >= next_try) {
            int rc = conn_open(&m, tls, mj.meta_host, mj.meta_port, NULL, mj.token_file, &err);
            if (rc == 0) {
                rc = send_join(&m, &routines, &curve, slots, &heartbeat_ms, &err);
                if (rc != 0) msg_conn_free(&m);
            }
            if (rc != 0) {
                if (next_try == 0) log_note("cannot join (retrying every second)", &err);
                next_try = now + MJ_RETRY_SECONDS;
            } else {
                log_note("joined", NULL);
                linked = 1;
                atomic_store(&mj.load->linked, 1);
                last_sent = now;
                sent_in_flight = sent_queued = sent_draining = -1;
            }
        }
        struct pollfd pfd[2] = {{.fd = mj.efd, .events = POLLIN}, {.fd = linked ? msg_conn_fd(&m) : -1, .events = POLLIN}};
        int wait_ms = linked ? (int)heartbeat_ms : (int)(MJ_RETRY_SECONDS * 1000);
        int n = poll(pfd, linked ? 2 : 1, wait_ms);
        if (n < 0 && errno != EINTR) break;
        if (n > 0 && (pfd[0].revents & POLLIN)) {
            uint64_t v;
            if (read(pfd[0].fd, &v, sizeof v) < 0) { /* nothing pending */
            }
        }
        int rc = 0;
        if (linked && n > 0 && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)))
            rc = err_set(&err, NUMRPC_EIO, "the metaserver closed the connection"); /* it never speaks first */
        now = sock_now();
        int in_flight = atomic_load(&mj.load->in_flight), queued = atomic_load(&mj.load->queued),
            draining = atomic_load(&mj.load->draining);
        if (rc == 0 && linked && (in_flight != sent_in_flight || queued != sent_queued || draining != sent_draining)) {
            rc = send_load(&m, in_flight, queued, draining, &err);
            if (rc == 0 && draining) atomic_store(&mj.load->drain_sent, 1);
            sent_in_flight = in_flight;
            sent_queued = queued;
            sent_draining = draining;
            last_sent = now;
        }
        /* Live registration: the list again every heartbeat period. */
        if (rc == 0 && !draining && now - last_list >= heartbeat_ms / 1000.0) {
            mj_list fresh = {0};
            last_list = now;
            err_t e2;
            if (self_routines(&fresh, &e2) == 0 && !same_list(&fresh, &routines)) {
                list_free(&routines);
                routines = fresh;
                fresh.items = NULL;
                fresh.count = 0;
                if (linked) {
                    rc = msg_write_meta_routines(&m.writer, msg_conn_next_id(&m), routines.items, routines.count,
                                                 &err);
                    last_sent = now;
                }
            }
            list_free(&fresh);
        }
        if (rc == 0 && linked && now - last_sent >= heartbeat_ms / 1000.0 * 0.9) {
            rc = msg_write_meta_heartbeat(&m.writer, msg_conn_next_id(&m), &err);
            last_sent = now;
        }
        if (rc != 0 && linked) {
            log_note("connection lost (joining again)", &err);
            msg_conn_free(&m);
            linked = 0;
            atomic_store(&mj.load->linked, 0);
            next_try = now + MJ_RETRY_SECONDS;
        }
    }
    if (linked) msg_conn_free(&m);
    list_free(&routines);
    tls_context_free(tls);
    _exit(1);
}

int metajoin_start(const server_config *cfg, int listen_fd, err_t *err)
{
    if (!mj.active) return 0;
    mj.cfg = *cfg;
    mj.load = mmap(NULL, sizeof *mj.load, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mj.load == MAP_FAILED) {
        mj.load = NULL;
        return err_set(err, NUMRPC_ESERVER, "mmap: %s", strerror(errno));
    }
    mj.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (mj.efd < 0) return err_set(err, NUMRPC_ESERVER, "eventfd: %s", strerror(errno));
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) return err_set(err, NUMRPC_ESERVER, "cannot start the metaserver process: %s", strerror(errno));
    if (pid == 0) {
        /* It dies with the server and leaves signals to it; it must not
         * keep the listening socket open after the server has gone. */
        server_child_dies_with(parent);
        sigset_t all;
        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        close(listen_fd);
        metajoin_main();
    }
    mj.helper = pid;
    return 0;
}

const char *metajoin_token_file(void)
{
    return mj.token_file;
}

int metajoin_is_helper(pid_t pid)
{
    return mj.active && pid == mj.helper;
}
