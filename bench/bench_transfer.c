/* bench_transfer.c -- numrpc-bench-transfer: round-trip and one-way throughput
 * and latency of numrpc against raw TCP, omniORB and gRPC, interleaved rounds. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <numrpc.h>

#include "rawtcp.h"
#include "fit.h"
#include "stats.h"
#ifdef HAVE_CORBA
#include "corba_client.h"
#endif
#ifdef HAVE_GRPC
#include "grpc_baseline.h"
#endif

#define MAX_SIZES 32
#define MAX_ROUNDS 1000
#define BOOTSTRAP_RESAMPLES 1000
#define CI_LEVEL 0.90

enum system_id {
    SYS_RAW_TUNED,
    SYS_RAW_NAIVE,
    SYS_NUMRPC,
    SYS_CORBA,
    SYS_GRPC,
    SYS_RAW_PING,
    SYS_NUMRPC_PING,
    SYS_CORBA_PING,
    SYS_GRPC_PING,
    SYS_RAW_COLD,    /* connect + one 8-byte ping-pong */
    SYS_NUMRPC_COLD, /* a first ping: connect, hello + interface, call */
    SYS_RAW_SINK,    /* one-way bulk (TTCP): array out, 8-byte ack back */
    SYS_NUMRPC_SINK,
    SYS_CORBA_SINK,
    SYS_GRPC_SINK,
    SYS_COUNT
};
static const char *const sys_name[SYS_COUNT] = {
    "raw-tuned",    "raw-naive",   "numrpc-dcopy", "omniorb-dcopy", "grpc-dcopy",
    "raw-pingpong", "numrpc-ping", "omniorb-ping", "grpc-ping", "raw-cold", "numrpc-cold",
    "raw-sink",     "numrpc-sink", "omniorb-sink", "grpc-sink"};
/* The peer systems reported against numrpc: bulk and ping ids, and names. */
static const struct baseline {
    int bulk, ping, sink;
    const char *name;
} baselines[] = {{SYS_CORBA, SYS_CORBA_PING, SYS_CORBA_SINK, "omniORB"},
                 {SYS_GRPC, SYS_GRPC_PING, SYS_GRPC_SINK, "gRPC"}};
#define NBASELINES (sizeof baselines / sizeof baselines[0])

/* The systems this placement measures (the baselines only if built and up). */
static int sys_on[SYS_COUNT] = {1, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0};
#define FOR_BULK(sys) for (int sys = SYS_RAW_TUNED; sys <= SYS_GRPC; sys++) if (sys_on[sys])
#define FOR_PING(sys) for (int sys = SYS_RAW_PING; sys <= SYS_GRPC_PING; sys++) if (sys_on[sys])
#define FOR_SINK(sys) for (int sys = SYS_RAW_SINK; sys <= SYS_GRPC_SINK; sys++) if (sys_on[sys])

static int is_ping(int sys)
{
    return sys >= SYS_RAW_PING && sys <= SYS_NUMRPC_COLD;
}

struct placement {
    const char *name;
    int client_cpu, server_cpu; /* -1 = not pinned */
};

/* One (placement, size, system, round) measurement: the median of reps. */
struct sample {
    int placement;
    size_t bytes;
    size_t packet; /* numrpc packet size asked for; 0 = default */
    int system;
    int round;
    int reps;
    double median_s;
    double send_s, compute_s, receive_s; /* numrpc: means over the reps */
    double jitter_all, jitter_rest;      /* std dev of the reps, without the first */
    uint64_t wire_sent, wire_received;   /* numrpc: last call's wire bytes */
    int sockbuf, nodelay;                /* buffer sweep: NUMRPC_SOCKBUF (0 = default), NODELAY */
};

static struct {
    const char *server_bin;
    const char *stubs;
    const char *corba_bin; /* omniORB baseline server, or NULL */
    const char *grpc_bin;  /* gRPC baseline server, or NULL */
    const char *proxy_bin; /* numrpc-delay-proxy */
    double delay_ms;       /* one-way latency added by proxies; 0 = none */
    size_t sizes[MAX_SIZES];
    int nsizes;
    int rounds;
    int quick;
    int packet_sweep;
    const char *csv;
    const char *markdown;
    int placement_only; /* -1 all, else index */
    int reps;           /* calls per round and size; 0 = by size */
    const char *host;   /* servers' address (NUMRPC_BENCH_HOST), default 127.0.0.1 */
    const char *server_netns; /* servers run in this network namespace (ip netns name) */
    int netns_fd, home_netns_fd;
    const char *link;   /* label of the link in CSVs and reports */
    int buffer_sweep;   /* run only the packet x socket buffer x NODELAY sweep */
    size_t sweep_bytes;
    size_t sweep_packets[16];
    int nsweep_packets;
    int sweep_bufs[8];
    int nsweep_bufs;
    const char *sweep_csv;
    char stubs_tmp[64]; /* a stubs dir: opt.stubs' modules + benchsink, removed at exit */
    const char *stubs_given; /* the stubs dir the links point into */
} opt;

static struct sample *samples;
static size_t nsamples, capsamples;
static double *xbuf, *ybuf;
static size_t maxbytes;
static int verify_failures;

static void add_sample(const struct sample *s)
{
    if (nsamples == capsamples) {
        capsamples = capsamples ? 2 * capsamples : 256;
        samples = realloc(samples, capsamples * sizeof *samples);
        if (!samples) {
            perror("realloc");
            exit(2);
        }
    }
    samples[nsamples++] = *s;
}

/* ---- processes and placement ---- */

static void pin_self(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (cpu < 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        for (long i = 0; i < n && i < CPU_SETSIZE; i++) CPU_SET((int)i, &set);
    } else {
        CPU_SET(cpu, &set);
    }
    if (sched_setaffinity(0, sizeof set, &set) != 0 && cpu >= 0)
        fprintf(stderr, "numrpc-bench-transfer: sched_setaffinity(%d): %s\n", cpu,
                strerror(errno));
}

/* Moves the calling thread into the servers' network namespace (when
 * --server-netns is set) or back; sockets opened meanwhile live there. */
static void enter_server_netns(void)
{
    if (opt.netns_fd >= 0 && setns(opt.netns_fd, CLONE_NEWNET) != 0)
        fprintf(stderr, "numrpc-bench-transfer: setns: %s\n", strerror(errno));
}

static void leave_server_netns(void)
{
    if (opt.netns_fd >= 0 && setns(opt.home_netns_fd, CLONE_NEWNET) != 0)
        fprintf(stderr, "numrpc-bench-transfer: setns back: %s\n", strerror(errno));
}

/* Forks and executes args (args[0] a path) pinned to cpu, one BLAS thread,
 * stdout to /dev/null, in the servers' namespace.  Returns the pid or -1. */
static pid_t start_pinned(int cpu, const char *const *args)
{
    pid_t pid = fork();
    if (pid != 0) return pid;
    if (opt.netns_fd >= 0 && setns(opt.netns_fd, CLONE_NEWNET) != 0) _exit(126);
    pin_self(cpu);
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, 1);
    execv(args[0], (char *const *)args);
    fprintf(stderr, "numrpc-bench-transfer: exec %s: %s\n", args[0], strerror(errno));
    _exit(127);
}

/* Runs argv (argv[0] a path; the word "@PORTFILE" is replaced by a fresh
 * file name) pinned to cpu (set in the child before exec, so a server's
 * forked workers inherit it) and waits for the port it writes there.
 * Returns the pid and *port, or -1. */
static pid_t spawn_with_port(int cpu, const char *const *argv, int *port)
{
    char dir[] = "/tmp/numrpc-bench-XXXXXX";
    if (!mkdtemp(dir)) return -1;
    char pfile[PATH_MAX];
    snprintf(pfile, sizeof pfile, "%s/port", dir);
    const char *args[32];
    int n = 0;
    for (; argv[n] && n < 31; n++) args[n] = strcmp(argv[n], "@PORTFILE") == 0 ? pfile : argv[n];
    args[n] = NULL;
    pid_t pid = start_pinned(cpu, args);
    if (pid < 0) return -1;
    *port = 0;
    for (int i = 0; i < 1000 && *port <= 0; i++) {
        FILE *f = fopen(pfile, "r");
        if (f) {
            if (fscanf(f, "%d", port) != 1) *port = 0;
            fclose(f);
        }
        if (*port > 0) break;
        if (waitpid(pid, NULL, WNOHANG) == pid) break;
        usleep(10000);
    }
    unlink(pfile);
    rmdir(dir);
    if (*port <= 0) {
        fprintf(stderr, "numrpc-bench-transfer: %s did not start\n", args[0]);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -1;
    }
    return pid;
}

static pid_t spawn_numrpc_server(int cpu, int *port)
{
    const char *argv[] = {opt.server_bin, "--port", "0", "--bind", opt.host, "--stubs",
                          opt.stubs, "--port-file", "@PORTFILE", "--blas-threads", "1",
                          "--quiet", NULL};
    return spawn_with_port(cpu, argv, port);
}

/* A delay proxy in front of host:*port (which it replaces with its own
 * port) when --delay-ms is set; returns its pid, 0 when not needed, or -1. */
static pid_t spawn_delay_proxy(int cpu, int *port)
{
    if (opt.delay_ms <= 0) return 0;
    char to[16], delay[32];
    snprintf(to, sizeof to, "%d", *port);
    snprintf(delay, sizeof delay, "%g", opt.delay_ms);
    const char *argv[] = {opt.proxy_bin, "--port-file", "@PORTFILE", "--to", to, "--delay-ms",
                          delay, NULL};
    return spawn_with_port(cpu, argv, port);
}

#ifdef HAVE_CORBA
/* Starts the omniORB baseline server pinned like the numrpc one and opens the
 * client on it.  Returns its pid or -1. */
/* A port free on the servers' host right now (bound, read, closed), or 0. */
static int pick_free_port(void)
{
    enter_server_netns();
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = 0;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    inet_pton(AF_INET, opt.host, &sa.sin_addr);
    socklen_t len = sizeof sa;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    if (fd >= 0) close(fd);
    leave_server_netns();
    return port;
}

/* With --delay-ms the ORB listens on a port chosen here, a delay proxy
 * forwards to it, and the IOR names the proxy (endPointPublish). */
static pid_t spawn_corba_server(int cpu, pid_t *proxy)
{
    char dir[] = "/tmp/numrpc-bench-XXXXXX";
    if (!mkdtemp(dir)) return -1;
    char ior[PATH_MAX], err[256];
    snprintf(ior, sizeof ior, "%s/ior", dir);
    const char *args[] = {opt.corba_bin, "--ior-file", ior, NULL};
    *proxy = 0;
    if (opt.delay_ms > 0) {
        int port = pick_free_port(), via = port;
        *proxy = port > 0 ? spawn_delay_proxy(cpu, &via) : -1;
        if (*proxy < 0) {
            rmdir(dir);
            return -1;
        }
        char p[16], pub[96];
        snprintf(p, sizeof p, "%d", port);
        snprintf(pub, sizeof pub, "%s:%d", opt.host, via);
        setenv("NUMRPC_BENCH_CORBA_PORT", p, 1);
        setenv("NUMRPC_BENCH_PUBLISH", pub, 1);
    }
    pid_t pid = start_pinned(cpu, args);
    unsetenv("NUMRPC_BENCH_CORBA_PORT");
    unsetenv("NUMRPC_BENCH_PUBLISH");
    if (pid < 0) return -1;
    int ok = 0;
    for (int i = 0; i < 1000 && !ok; i++) {
        ok = access(ior, R_OK) == 0;
        if (!ok && waitpid(pid, NULL, WNOHANG) == pid) break;
        if (!ok) usleep(10000);
    }
    if (ok && corba_client_open(ior, err, sizeof err) != 0) {
        fprintf(stderr, "numrpc-bench-transfer: omniORB client: %s\n", err);
        ok = 0;
    }
    unlink(ior);
    rmdir(dir);
    if (!ok) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -1;
    }
    return pid;
}
#endif

#ifdef HAVE_GRPC
/* Starts the gRPC baseline server pinned like the others (behind a delay
 * proxy if asked) and connects the client.  Returns its pid or -1. */
static pid_t spawn_grpc_server(int cpu, pid_t *proxy)
{
    int port = 0;
    const char *argv[] = {opt.grpc_bin, "--port-file", "@PORTFILE", NULL};
    pid_t pid = spawn_with_port(cpu, argv, &port);
    if (pid < 0) return -1;
    *proxy = spawn_delay_proxy(cpu, &port);
    if (*proxy < 0 || grpc_baseline_open(port) != 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -1;
    }
    return pid;
}
#endif

static void stop_process(pid_t pid)
{
    if (pid <= 0) return;
    kill(pid, SIGTERM);
    for (int i = 0; i < 300; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid) return;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* ---- one measurement ---- */

struct ctx {
    int fd[2]; /* raw connections, by rawtcp_mode */
};

/* Marks the array so that a stale destination cannot pass verification. */
static void tag_arrays(size_t n, unsigned long long tag)
{
    double t = (double)(tag % 1000003) + 0.25;
    xbuf[0] = t;
    xbuf[n / 2] = -t;
    xbuf[n - 1] = t * 3.0;
    ybuf[0] = ybuf[n / 2] = ybuf[n - 1] = -1.0e300;
}

static unsigned long long tag_counter;

/* Why a call of system sys failed, from that system's own error report. */
static const char *failure_text(int sys, int rc)
{
    static char text[600];
#ifdef HAVE_CORBA
    if (sys == SYS_CORBA || sys == SYS_CORBA_PING || sys == SYS_CORBA_SINK)
        return corba_last_error();
#endif
#ifdef HAVE_GRPC
    if (sys == SYS_GRPC || sys == SYS_GRPC_PING || sys == SYS_GRPC_SINK)
        return grpc_baseline_error();
#endif
    if (sys == SYS_NUMRPC || sys == SYS_NUMRPC_PING || sys == SYS_NUMRPC_SINK) {
        snprintf(text, sizeof text, "%s: %s", numrpc_strerror(rc), numrpc_last_error_detail());
        return text;
    }
    return strerror(errno);
}

/* Runs reps calls of system sys moving bytes each way; fills s. */
static int measure(struct ctx *c, int sys, size_t bytes, int reps, struct sample *s)
{
    double *t = malloc((size_t)reps * sizeof *t);
    if (!t) return -1;
    size_t n = bytes / 8 ? bytes / 8 : 1;
    double send = 0, comp = 0, recv = 0;
    numrpc_call_info info;
    memset(&info, 0, sizeof info);
    for (int r = 0; r < reps; r++) {
        int rc = 0;
        if (sys >= SYS_RAW_SINK) {
            tag_arrays(n, ++tag_counter);
            double ack = 0, want = rawtcp_sink_ack(xbuf, n * 8);
            double t0 = bench_now();
            if (sys == SYS_NUMRPC_SINK)
                rc = numrpc_call("sink", (int)n, xbuf, &ack);
#ifdef HAVE_CORBA
            else if (sys == SYS_CORBA_SINK)
                rc = corba_sink(xbuf, n, &ack);
#endif
#ifdef HAVE_GRPC
            else if (sys == SYS_GRPC_SINK)
                rc = grpc_baseline_sink(xbuf, n, &ack);
#endif
            else
                rc = rawtcp_sink(c->fd[RAWTCP_TUNED], RAWTCP_TUNED, xbuf, n * 8, &ack);
            t[r] = bench_now() - t0;
            if (rc == 0 && ack != want) {
                fprintf(stderr, "numrpc-bench-transfer: %s %zu bytes: acknowledged %.17g, "
                                "want %.17g\n",
                        sys_name[sys], n * 8, ack, want);
                verify_failures++;
            }
        } else if (is_ping(sys)) {
            unsigned long long w = ++tag_counter;
            double t0 = bench_now();
            if (sys == SYS_RAW_PING)
                rc = rawtcp_ping(c->fd[RAWTCP_TUNED], w);
#ifdef HAVE_CORBA
            else if (sys == SYS_CORBA_PING)
                rc = corba_ping();
#endif
#ifdef HAVE_GRPC
            else if (sys == SYS_GRPC_PING)
                rc = grpc_baseline_ping();
#endif
            else
                rc = numrpc_call("ping");
            t[r] = bench_now() - t0;
        } else {
            tag_arrays(n, ++tag_counter);
            double t0 = bench_now();
            if (sys == SYS_NUMRPC) {
                rc = numrpc_call("dcopy", (int)n, xbuf, 1, ybuf, 1);
#ifdef HAVE_CORBA
            } else if (sys == SYS_CORBA) {
                rc = corba_dcopy(xbuf, ybuf, n);
#endif
#ifdef HAVE_GRPC
            } else if (sys == SYS_GRPC) {
                rc = grpc_baseline_dcopy(xbuf, ybuf, n);
#endif
            } else {
                enum rawtcp_mode m = sys == SYS_RAW_TUNED ? RAWTCP_TUNED : RAWTCP_NAIVE;
                rc = rawtcp_echo(c->fd[m], m, xbuf, ybuf, n * 8);
            }
            t[r] = bench_now() - t0;
            if (rc == 0 && memcmp(xbuf, ybuf, n * 8) != 0) {
                fprintf(stderr, "numrpc-bench-transfer: %s %zu bytes: data differ\n",
                        sys_name[sys], n * 8);
                verify_failures++;
            }
        }
        if (rc != 0) {
            fprintf(stderr, "numrpc-bench-transfer: %s failed: %s\n", sys_name[sys],
                    failure_text(sys, rc));
            free(t);
            return -1;
        }
        if (sys == SYS_NUMRPC || sys == SYS_NUMRPC_PING || sys == SYS_NUMRPC_SINK) {
            numrpc_last_call_info(&info);
            send += info.send_seconds;
            comp += info.compute_seconds;
            recv += info.receive_seconds;
        }
    }
    s->system = sys;
    s->bytes = is_ping(sys) ? 8 : n * 8;
    s->reps = reps;
    s->jitter_all = fit_stddev(t, (size_t)reps, 0);
    s->jitter_rest = fit_stddev(t, (size_t)reps, 1);
    s->median_s = bench_median(t, (size_t)reps);
    s->send_s = send / reps;
    s->compute_s = comp / reps;
    s->receive_s = recv / reps;
    s->wire_sent = info.bytes_sent;
    s->wire_received = info.bytes_received;
    free(t);
    return 0;
}

static int numrpc_setup(int port, size_t packet);

/* Cold calls, reps of each: a fresh TCP connection and one 8-byte
 * ping-pong, against numrpc's first call on a fresh library state
 * (connect, HELLO and interface fetch pipelined, then the call). */
static int measure_cold(const rawtcp_server *raw, int port, int reps, struct sample *rs,
                        struct sample *ns)
{
    double traw[64], tnum[64];
    if (reps > 64) reps = 64;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        int fd = rawtcp_connect(raw, RAWTCP_TUNED);
        int rc = fd < 0 ? -1 : rawtcp_ping(fd, (unsigned long long)r + 1);
        traw[r] = bench_now() - t0;
        if (fd >= 0) close(fd);
        numrpc_finalize();
        if (rc != 0 || numrpc_setup(port, 0) != 0) return -1;
        t0 = bench_now();
        rc = numrpc_call("ping");
        tnum[r] = bench_now() - t0;
        if (rc != 0) {
            fprintf(stderr, "numrpc-bench-transfer: cold ping: %s\n", failure_text(SYS_NUMRPC_PING, rc));
            return -1;
        }
    }
    rs->system = SYS_RAW_COLD;
    ns->system = SYS_NUMRPC_COLD;
    rs->bytes = ns->bytes = 8;
    rs->reps = ns->reps = reps;
    rs->median_s = bench_median(traw, (size_t)reps);
    ns->median_s = bench_median(tnum, (size_t)reps);
    return 0;
}

static int reps_for(size_t bytes)
{
    if (opt.reps > 0) return opt.reps;
    if (bytes <= 4096) return opt.quick ? 100 : 300;
    if (bytes <= 1u << 20) return opt.quick ? 20 : 50;
    if (bytes <= 16u << 20) return opt.quick ? 4 : 8;
    return 3;
}

static int numrpc_setup(int port, size_t packet)
{
    char servers[64];
    snprintf(servers, sizeof servers, "%s:%d", opt.host, port);
    numrpc_config cfg = {servers, packet};
    int rc = numrpc_init(&cfg);
    if (rc != 0)
        fprintf(stderr, "numrpc-bench-transfer: numrpc_init: %s: %s\n", numrpc_strerror(rc),
                numrpc_last_error_detail());
    return rc;
}

static int buffer_sweep(int pi, const struct placement *pl, struct ctx *c);

static int run_placement(int pi, const struct placement *pl)
{
    pin_self(pl->client_cpu);
    int port = 0;
    rawtcp_server raw = {0, {0, 0}};
    enter_server_netns(); /* the listeners are opened here, before the fork */
    int raw_rc = rawtcp_server_spawn(&raw, pl->server_cpu);
    leave_server_netns();
    if (raw_rc != 0) {
        perror("numrpc-bench-transfer: raw server");
        return -1;
    }
    pid_t srv = spawn_numrpc_server(pl->server_cpu, &port);
    if (srv < 0) {
        rawtcp_server_stop(&raw);
        return -1;
    }
    /* With --delay-ms every connection goes through a delay proxy. */
    pid_t proxies[5] = {0, 0, 0, 0, 0};
    rawtcp_server raw_via = raw;
    proxies[0] = spawn_delay_proxy(pl->server_cpu, &port);
    proxies[1] = spawn_delay_proxy(pl->server_cpu, &raw_via.port[RAWTCP_TUNED]);
    proxies[2] = spawn_delay_proxy(pl->server_cpu, &raw_via.port[RAWTCP_NAIVE]);
    pid_t corba = -1;
#ifdef HAVE_CORBA
    if (opt.corba_bin && !opt.buffer_sweep) {
        corba = spawn_corba_server(pl->server_cpu, &proxies[4]);
        if (corba < 0) fprintf(stderr, "numrpc-bench-transfer: omniORB baseline skipped\n");
    }
#endif
    pid_t grpc = -1;
#ifdef HAVE_GRPC
    if (opt.grpc_bin && !opt.buffer_sweep) {
        grpc = spawn_grpc_server(pl->server_cpu, &proxies[3]);
        if (grpc < 0) fprintf(stderr, "numrpc-bench-transfer: gRPC baseline skipped\n");
    }
#endif
    sys_on[SYS_CORBA] = sys_on[SYS_CORBA_PING] = sys_on[SYS_CORBA_SINK] = corba > 0;
    sys_on[SYS_GRPC] = sys_on[SYS_GRPC_PING] = sys_on[SYS_GRPC_SINK] = grpc > 0;
    struct ctx c;
    c.fd[RAWTCP_TUNED] = rawtcp_connect(&raw_via, RAWTCP_TUNED);
    c.fd[RAWTCP_NAIVE] = rawtcp_connect(&raw_via, RAWTCP_NAIVE);
    int rc = -1;
    for (int i = 0; i < 3; i++)
        if (proxies[i] < 0) goto out;
    if (c.fd[0] < 0 || c.fd[1] < 0) {
        perror("numrpc-bench-transfer: connect to raw server");
        goto out;
    }
    int snd, rcv;
    rawtcp_bufsizes(c.fd[RAWTCP_TUNED], &snd, &rcv);
    printf("# placement %s: client cpu %d, servers cpu %d; link %s; numrpc-server %s:%d "
           "(pid %d); raw tuned SO_SNDBUF/SO_RCVBUF as reported %d/%d\n",
           pl->name, pl->client_cpu, pl->server_cpu, opt.link, opt.host, port, (int)srv, snd,
           rcv);
    fflush(stdout);
    if (opt.buffer_sweep) {
        rc = buffer_sweep(pi, pl, &c);
        goto out;
    }
    if (numrpc_setup(port, 0) != 0) goto out;

    struct sample s;
    memset(&s, 0, sizeof s);
    s.placement = pi;
    /* Warm-up: connections, interface cache, server worker pages. */
    FOR_BULK(sys) for (int i = 0; i < opt.nsizes; i++)
        if (measure(&c, sys, opt.sizes[i], 1, &s) != 0) goto out;
    FOR_SINK(sys) for (int i = 0; i < opt.nsizes; i++)
        if (measure(&c, sys, opt.sizes[i], 1, &s) != 0) goto out;
    FOR_PING(sys) if (measure(&c, sys, 8, 50, &s) != 0) goto out;

    /* Latency: rounds of raw ping-pong and numrpc ping back to back. */
    int ping_reps = opt.reps > 0 ? opt.reps * 5 : opt.quick ? 300 : 1000;
    for (int r = 0; r < opt.rounds; r++) {
        FOR_PING(sys) {
            if (measure(&c, sys, 8, ping_reps, &s) != 0) goto out;
            s.round = r;
            add_sample(&s);
        }
    }
    /* Cold calls: what a first call costs, in the same rounds. */
    int cold_reps = opt.quick || opt.reps > 0 ? 5 : 20;
    for (int r = 0; r < opt.rounds; r++) {
        struct sample rs = s, ns = s;
        if (measure_cold(&raw_via, port, cold_reps, &rs, &ns) != 0) goto out;
        rs.round = ns.round = r;
        add_sample(&rs);
        add_sample(&ns);
    }
    /* Throughput: per size, rounds of raw tuned, raw naive, numrpc dcopy. */
    for (int i = 0; i < opt.nsizes; i++) {
        int reps = reps_for(opt.sizes[i]);
        for (int r = 0; r < opt.rounds; r++) {
            FOR_BULK(sys) {
                if (measure(&c, sys, opt.sizes[i], reps, &s) != 0) goto out;
                s.round = r;
                add_sample(&s);
            }
            FOR_SINK(sys) {
                if (measure(&c, sys, opt.sizes[i], reps, &s) != 0) goto out;
                s.round = r;
                add_sample(&s);
            }
        }
        printf("# placement %s: %zu bytes done\n", pl->name, opt.sizes[i]);
        fflush(stdout);
    }
    /* Packet sweep: numrpc 8 MiB round trip by packet size (the client's
     * call header asks the server for the same size), raw tuned beside. */
    if (opt.packet_sweep) {
        static const size_t packets[] = {1024, 4096, 65536, 1048576};
        size_t bytes = 8u << 20;
        int reps = opt.quick ? 3 : 5;
        for (int r = 0; r < opt.rounds; r++) {
            s.packet = 0;
            if (measure(&c, SYS_RAW_TUNED, bytes, reps, &s) != 0) goto out;
            s.round = r;
            s.system = SYS_RAW_TUNED;
            s.packet = 1; /* marks a sweep sample */
            add_sample(&s);
            for (size_t k = 0; k < sizeof packets / sizeof *packets; k++) {
                if (numrpc_setup(port, packets[k]) != 0) goto out;
                if (measure(&c, SYS_NUMRPC, bytes, 1, &s) != 0) goto out; /* warm-up */
                if (measure(&c, SYS_NUMRPC, bytes, reps, &s) != 0) goto out;
                s.round = r;
                s.packet = packets[k];
                add_sample(&s);
            }
        }
        s.packet = 0;
        numrpc_setup(port, 0);
    }
    rc = 0;
out:
    numrpc_finalize();
    if (c.fd[0] >= 0) close(c.fd[0]);
    if (c.fd[1] >= 0) close(c.fd[1]);
    stop_process(srv);
#ifdef HAVE_CORBA
    if (corba > 0) corba_client_close();
#endif
    stop_process(corba);
#ifdef HAVE_GRPC
    if (grpc > 0) grpc_baseline_close();
#endif
    stop_process(grpc);
    for (int i = 0; i < 5; i++)
        if (proxies[i] > 0) stop_process(proxies[i]);
    rawtcp_server_stop(&raw);
    pin_self(-1);
    return rc;
}

/* ---- the buffer-size sweep (the Ninf paper's figure) ---- */

static const char *size_label(size_t b, char *buf, size_t len);
static double mbps(size_t bytes, double s);

#define SWEEP_MAX_SERVERS 16

/* numrpc dcopy round trips of opt.sweep_bytes for every packet size x socket
 * buffer x TCP_NODELAY, raw tuned in the same rounds.  One numrpc server per
 * (buffer, NODELAY), started with NUMRPC_SOCKBUF / NUMRPC_TCP_NODELAY in its
 * environment (common/sock.c applies them to every socket); the client sets
 * the same variables before it reconnects. */
static int buffer_sweep(int pi, const struct placement *pl, struct ctx *c)
{
    pid_t srv[SWEEP_MAX_SERVERS], prox[SWEEP_MAX_SERVERS];
    int port[SWEEP_MAX_SERVERS], ncombo = 0, rc = -1;
    int combo_buf[SWEEP_MAX_SERVERS], combo_nd[SWEEP_MAX_SERVERS];
    for (int b = 0; b < opt.nsweep_bufs; b++)
        for (int nd = 1; nd >= 0 && ncombo < SWEEP_MAX_SERVERS; nd--) {
            combo_buf[ncombo] = opt.sweep_bufs[b];
            combo_nd[ncombo] = nd;
            char v[32];
            snprintf(v, sizeof v, "%d", opt.sweep_bufs[b]);
            setenv("NUMRPC_SOCKBUF", v, 1);
            setenv("NUMRPC_TCP_NODELAY", nd ? "1" : "0", 1);
            prox[ncombo] = 0;
            srv[ncombo] = spawn_numrpc_server(pl->server_cpu, &port[ncombo]);
            if (srv[ncombo] > 0) prox[ncombo] = spawn_delay_proxy(pl->server_cpu, &port[ncombo]);
            ncombo++;
            if (srv[ncombo - 1] < 0 || prox[ncombo - 1] < 0) goto out;
        }
    struct sample s;
    memset(&s, 0, sizeof s);
    s.placement = pi;
    size_t bytes = opt.sweep_bytes;
    int reps = opt.reps > 0 ? opt.reps : bytes >= (1u << 20) ? 3 : 5;
    for (int r = 0; r < opt.rounds; r++) {
        unsetenv("NUMRPC_SOCKBUF");
        unsetenv("NUMRPC_TCP_NODELAY");
        s.packet = 1;
        s.sockbuf = -1;
        if (measure(c, SYS_RAW_TUNED, bytes, reps, &s) != 0) goto out;
        s.round = r;
        add_sample(&s);
        for (int k = 0; k < ncombo; k++) {
            char v[32];
            snprintf(v, sizeof v, "%d", combo_buf[k]);
            setenv("NUMRPC_SOCKBUF", v, 1);
            setenv("NUMRPC_TCP_NODELAY", combo_nd[k] ? "1" : "0", 1);
            for (int j = 0; j < opt.nsweep_packets; j++) {
                if (numrpc_setup(port[k], opt.sweep_packets[j]) != 0) goto out;
                /* Warm-up: connect, HELLO, the interface, on a small copy. */
                if (measure(c, SYS_NUMRPC, 64, 1, &s) != 0) goto out;
                if (measure(c, SYS_NUMRPC, bytes, reps, &s) != 0) goto out;
                s.round = r;
                s.packet = opt.sweep_packets[j];
                s.sockbuf = combo_buf[k];
                s.nodelay = combo_nd[k];
                add_sample(&s);
            }
        }
        printf("# buffer sweep: round %d of %d done\n", r + 1, opt.rounds);
        fflush(stdout);
    }
    rc = 0;
out:
    numrpc_finalize();
    unsetenv("NUMRPC_SOCKBUF");
    unsetenv("NUMRPC_TCP_NODELAY");
    for (int k = 0; k < ncombo; k++) {
        if (prox[k] > 0) stop_process(prox[k]);
        stop_process(srv[k]);
    }
    return rc;
}

static void sweep_report(FILE *md)
{
    size_t bytes = opt.sweep_bytes;
    char lab[32], blab[32];
    double v[MAX_ROUNDS];
    size_t k = 0;
    for (size_t i = 0; i < nsamples; i++)
        if (samples[i].system == SYS_RAW_TUNED && samples[i].packet == 1) v[k++] = samples[i].median_s;
    double raw = bench_median(v, k);
    printf("\n== buffer sweep on %s: numrpc dcopy %s each way, MB/s (median over %d rounds); raw "
           "tuned %.1f MB/s ==\n",
           opt.link, size_label(bytes, lab, sizeof lab), opt.rounds, mbps(bytes, raw));
    printf("%-18s", "sockbuf/nodelay");
    for (int j = 0; j < opt.nsweep_packets; j++)
        printf(" %10s", size_label(opt.sweep_packets[j], lab, sizeof lab));
    printf("\n");
    if (md) {
        fprintf(md, "Buffer sweep on %s: numrpc dcopy round trips of %s each way, MB/s (median of "
                    "%d interleaved rounds); raw tuned TCP in the same rounds: %.2f MB/s.\n\n"
                    "| socket buffer | TCP_NODELAY |",
                opt.link, size_label(bytes, lab, sizeof lab), opt.rounds, mbps(bytes, raw));
        for (int j = 0; j < opt.nsweep_packets; j++)
            fprintf(md, " packet %s |", size_label(opt.sweep_packets[j], lab, sizeof lab));
        fprintf(md, "\n|---|---|");
        for (int j = 0; j < opt.nsweep_packets; j++) fprintf(md, "---|");
        fprintf(md, "\n");
    }
    for (int b = 0; b < opt.nsweep_bufs; b++)
        for (int nd = 1; nd >= 0; nd--) {
            if (opt.sweep_bufs[b] > 0)
                size_label((size_t)opt.sweep_bufs[b], blab, sizeof blab);
            else
                snprintf(blab, sizeof blab, "default");
            printf("%-10s %-7s", blab, nd ? "on" : "off");
            if (md) fprintf(md, "| %s | %s |", blab, nd ? "on" : "off");
            for (int j = 0; j < opt.nsweep_packets; j++) {
                k = 0;
                for (size_t i = 0; i < nsamples; i++) {
                    const struct sample *x = &samples[i];
                    if (x->system == SYS_NUMRPC && x->packet == opt.sweep_packets[j] &&
                        x->sockbuf == opt.sweep_bufs[b] && x->nodelay == nd)
                        v[k++] = x->median_s;
                }
                double m = bench_median(v, k);
                printf(" %10.2f", mbps(bytes, m));
                if (md) fprintf(md, " %.2f |", mbps(bytes, m));
            }
            printf("\n");
            if (md) fprintf(md, "\n");
        }
}

static int write_sweep_csv(const char *path, const struct placement *pls)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    fprintf(f, "link,placement,bytes_each_way,packet,sockbuf,nodelay,system,round,reps,median_s,"
               "mb_per_s\n");
    for (size_t i = 0; i < nsamples; i++) {
        const struct sample *x = &samples[i];
        int raw = x->system == SYS_RAW_TUNED;
        fprintf(f, "%s,%s,%zu,%zu,%d,%d,%s,%d,%d,%.9g,%.6g\n", opt.link,
                pls[x->placement].name, x->bytes, raw ? 0 : x->packet, raw ? -1 : x->sockbuf,
                raw ? 1 : x->nodelay, sys_name[x->system], x->round, x->reps, x->median_s,
                mbps(x->bytes, x->median_s));
    }
    fclose(f);
    return 0;
}

/* ---- reporting ---- */

/* Per-round medians of (placement, bytes, packet, system), in round order. */
static size_t collect(int pi, size_t bytes, size_t packet, int sys, double *out)
{
    size_t k = 0;
    for (size_t i = 0; i < nsamples; i++) {
        const struct sample *s = &samples[i];
        if (s->placement == pi && s->bytes == bytes && s->packet == packet && s->system == sys)
            out[k++] = s->median_s;
    }
    return k;
}

struct ratio_stats {
    double median, min, max, lo, hi;
    size_t n;
};

/* Ratio sys / base from rounds that ran both; median, range, bootstrap CI. */
static struct ratio_stats ratio_of(int pi, size_t bytes, size_t packet_sys, size_t packet_base,
                                   int sys, int base)
{
    double a[MAX_ROUNDS], b[MAX_ROUNDS], r[MAX_ROUNDS];
    size_t na = collect(pi, bytes, packet_sys, sys, a);
    size_t nb = collect(pi, bytes, packet_base, base, b);
    size_t n = na < nb ? na : nb;
    struct ratio_stats st = {0, 0, 0, 0, 0, n};
    for (size_t i = 0; i < n; i++) r[i] = a[i] / b[i];
    if (n == 0) return st;
    st.min = bench_min(r, n);
    st.max = bench_max(r, n);
    bench_bootstrap_median_ci(r, n, BOOTSTRAP_RESAMPLES, CI_LEVEL, &st.lo, &st.hi);
    st.median = bench_median(r, n);
    return st;
}

static double median_of(int pi, size_t bytes, size_t packet, int sys)
{
    double v[MAX_ROUNDS];
    size_t n = collect(pi, bytes, packet, sys, v);
    return bench_median(v, n);
}

static const char *size_label(size_t b, char *buf, size_t len)
{
    if (b >= (1u << 20) && b % (1u << 20) == 0)
        snprintf(buf, len, "%zu MiB", b >> 20);
    else if (b >= 1024 && b % 1024 == 0)
        snprintf(buf, len, "%zu KiB", b >> 10);
    else
        snprintf(buf, len, "%zu B", b);
    return buf;
}

static double mbps(size_t bytes, double s)
{
    return s > 0 ? (double)bytes / s / 1e6 : 0.0;
}

static void verdict(char *buf, size_t len, double value, double target)
{
    if (target <= 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "<= %.2f %s", target, value <= target ? "met" : "MISSED");
}

static double ping_target(const struct placement *pl, int ncpu)
{
    if (ncpu < 2 || (pl->client_cpu >= 0 && pl->client_cpu == pl->server_cpu)) return 2.0;
    return 1.3;
}

/* One-way bulk (TTCP style): every system's MB/s per size, ratios to raw. */
static void report_oneway(int pi, FILE *md)
{
    char lab[32];
    double tmp[MAX_ROUNDS];
    if (collect(pi, opt.sizes[0] / 8 ? opt.sizes[0] / 8 * 8 : 8, 0, SYS_RAW_SINK, tmp) == 0) return;
    printf("-- one-way bulk (array out, 8-byte ack back): MB/s; ratio = time / raw-sink time, "
           "same round (90%% CI)\n");
    printf("%-9s %-13s %12s %10s %8s %15s\n", "size", "system", "median_s", "MB/s", "ratio",
           "90% CI median");
    if (md) {
        fprintf(md, "\nOne-way bulk (TTCP style: the array out, an 8-byte acknowledgement back), "
                    "MB/s of payload; in brackets time / raw time in the same round (90 %% CI):\n\n"
                    "| size | raw TCP | numrpc | omniORB | gRPC | numrpc / omniORB |\n"
                    "|---|---|---|---|---|---|\n");
    }
    for (int i = 0; i < opt.nsizes; i++) {
        size_t b = opt.sizes[i] / 8 ? opt.sizes[i] / 8 * 8 : 8;
        size_label(b, lab, sizeof lab);
        double raw = median_of(pi, b, 0, SYS_RAW_SINK);
        if (md) fprintf(md, "| %s | %.2f |", lab, mbps(b, raw));
        for (int sys = SYS_RAW_SINK; sys <= SYS_GRPC_SINK; sys++) {
            int have = collect(pi, b, 0, sys, tmp) > 0;
            if (sys == SYS_RAW_SINK) {
                printf("%-9s %-13s %12.3e %10.2f %8s\n", lab, sys_name[sys], raw, mbps(b, raw), "1");
                continue;
            }
            if (!have) {
                if (md) fprintf(md, " – |");
                continue;
            }
            double m = median_of(pi, b, 0, sys);
            struct ratio_stats r = ratio_of(pi, b, 0, 0, sys, SYS_RAW_SINK);
            printf("%-9s %-13s %12.3e %10.2f %8.3f %7.3f..%-7.3f\n", lab, sys_name[sys], m,
                   mbps(b, m), r.median, r.lo, r.hi);
            if (md) fprintf(md, " %.2f (%.3f; %.3f..%.3f) |", mbps(b, m), r.median, r.lo, r.hi);
        }
        if (md) {
            if (collect(pi, b, 0, SYS_CORBA_SINK, tmp) > 0) {
                struct ratio_stats r = ratio_of(pi, b, 0, 0, SYS_NUMRPC_SINK, SYS_CORBA_SINK);
                fprintf(md, " **%.3f** (%.3f..%.3f) |\n", r.median, r.lo, r.hi);
            } else {
                fprintf(md, " – |\n");
            }
        }
    }
}

/* The linear model T = b0 + b1*m of each system over every (size, round)
 * median of one placement, and the jitter of its largest size. */
static void report_fits(int pi, FILE *md)
{
    static double x[MAX_ROUNDS * MAX_SIZES], y[MAX_ROUNDS * MAX_SIZES];
    printf("-- linear model T = b0 + b1*m (m = bytes each way), 90%% CIs; jitter = std dev "
           "of one round's calls at the largest size, all / without the first\n");
    printf("%-14s %22s %26s %12s %12s %22s\n", "system", "t0 = b0 (us)", "b1 (ns/byte)",
           "r_max MB/s", "n_half B", "jitter all/rest (us)");
    if (md)
        fprintf(md, "\nLinear model T = b0 + b1·m over all sizes and rounds (90 %% CI); jitter "
                    "at the largest size, all calls / without the first:\n\n| system | t0 = b0 "
                    "| b1 | r_max | n½ | jitter all / rest |\n|---|---|---|---|---|---|\n");
    static const int fitted[] = {SYS_RAW_TUNED, SYS_RAW_NAIVE, SYS_NUMRPC, SYS_CORBA, SYS_GRPC,
                                 SYS_RAW_SINK, SYS_NUMRPC_SINK, SYS_CORBA_SINK, SYS_GRPC_SINK};
    for (size_t fi = 0; fi < sizeof fitted / sizeof *fitted; fi++) {
        int sys = fitted[fi];
        size_t n = 0;
        double jit_all = 0, jit_rest = 0;
        size_t largest = 0;
        for (size_t i = 0; i < nsamples; i++) {
            const struct sample *s = &samples[i];
            if (s->placement != pi || s->system != sys || s->packet != 0) continue;
            x[n] = (double)s->bytes;
            y[n] = s->median_s;
            n++;
            if (s->bytes >= largest) {
                largest = s->bytes;
                jit_all = s->jitter_all;
                jit_rest = s->jitter_rest;
            }
        }
        fit_result f;
        if (n < 3 || fit_linear(x, y, n, CI_LEVEL, &f) != 0) continue;
        printf("%-14s %10.1f +- %-9.1f %12.4f +- %-9.4f %12.3f %12.0f %10.1f / %-9.1f\n",
               sys_name[sys], f.b0 * 1e6, f.b0_half * 1e6, f.b1 * 1e9, f.b1_half * 1e9,
               f.r_max / 1e6, f.n_half, jit_all * 1e6, jit_rest * 1e6);
        if (md)
            fprintf(md, "| %s | %.1f ± %.1f µs | %.4f ± %.4f ns/B | %.3f MB/s | %.0f B | %.1f / "
                        "%.1f µs |\n",
                    sys_name[sys], f.b0 * 1e6, f.b0_half * 1e6, f.b1 * 1e9, f.b1_half * 1e9,
                    f.r_max / 1e6, f.n_half, jit_all * 1e6, jit_rest * 1e6);
    }
}

static void report(const struct placement *pls, int npl, int ncpu, FILE *md)
{
    char lab[32], vd[48];
    for (int pi = 0; pi < npl; pi++) {
        if (opt.placement_only >= 0 && pi != opt.placement_only) continue;
        const struct placement *pl = &pls[pi];
        printf("\n== placement: %s (client cpu %d, server cpu %d; -1 = unpinned) ==\n",
               pl->name, pl->client_cpu, pl->server_cpu);
        printf("%-9s %-13s %12s %10s %8s %15s %15s  %s\n", "size", "system", "median_s",
               "MB/s", "ratio", "round min..max", "90% CI median", "target (numrpc/tuned)");
        if (md) {
            fprintf(md, "\n### Placement: %s (client cpu %d, server cpu %d)\n\n", pl->name,
                    pl->client_cpu, pl->server_cpu);
            fprintf(md, "| size (each way) | raw tuned | raw naive | numrpc | numrpc / tuned "
                        "(round min..max; 90%% CI) | target |\n");
            fprintf(md, "|---|---|---|---|---|---|\n");
        }
        /* Latency. */
        double praw = median_of(pi, 8, 0, SYS_RAW_PING);
        double pnum = median_of(pi, 8, 0, SYS_NUMRPC_PING);
        struct ratio_stats pr = ratio_of(pi, 8, 0, 0, SYS_NUMRPC_PING, SYS_RAW_PING);
        double pt = ping_target(pl, ncpu);
        verdict(vd, sizeof vd, pr.median, pt);
        printf("%-9s %-13s %12.3e %10s %8s %15s %15s\n", "ping", sys_name[SYS_RAW_PING], praw,
               "-", "1", "", "");
        printf("%-9s %-13s %12.3e %10s %8.3f %7.3f..%-7.3f %7.3f..%-7.3f %s\n", "ping",
               sys_name[SYS_NUMRPC_PING], pnum, "-", pr.median, pr.min, pr.max, pr.lo, pr.hi,
               vd);
        if (md)
            fprintf(md, "| ping (8 B round trip) | %.1f µs | – | %.1f µs | **%.2f** (%.2f..%.2f; "
                        "%.2f..%.2f) | %s |\n",
                    praw * 1e6, pnum * 1e6, pr.median, pr.min, pr.max, pr.lo, pr.hi, vd);
        {
            double rc = median_of(pi, 8, 0, SYS_RAW_COLD), nc = median_of(pi, 8, 0, SYS_NUMRPC_COLD);
            struct ratio_stats cr = ratio_of(pi, 8, 0, 0, SYS_NUMRPC_COLD, SYS_RAW_COLD);
            double rtts = praw > 0 ? nc / praw : 0;
            printf("%-9s %-13s %12.3e\n%-9s %-13s %12.3e %10s %8.3f %7.3f..%-7.3f %7.3f..%-7.3f "
                   "= %.2f warm round trips\n",
                   "cold", sys_name[SYS_RAW_COLD], rc, "cold", sys_name[SYS_NUMRPC_COLD], nc, "-",
                   cr.median, cr.min, cr.max, cr.lo, cr.hi, rtts);
            if (md)
                fprintf(md, "| cold call (connect + first call) | %.1f µs | – | %.1f µs (%.2f warm "
                            "round trips) | **%.2f** (%.2f..%.2f; %.2f..%.2f) | – |\n",
                        rc * 1e6, nc * 1e6, rtts, cr.median, cr.min, cr.max, cr.lo, cr.hi);
        }
        int have[NBASELINES];
        for (size_t k = 0; k < NBASELINES; k++) {
            double tmp[MAX_ROUNDS];
            have[k] = collect(pi, 8, 0, baselines[k].ping, tmp) > 0;
            if (!have[k]) continue;
            double pc = median_of(pi, 8, 0, baselines[k].ping);
            struct ratio_stats cr = ratio_of(pi, 8, 0, 0, baselines[k].ping, SYS_RAW_PING);
            printf("%-9s %-13s %12.3e %10s %8.3f %7.3f..%-7.3f %7.3f..%-7.3f\n", "ping",
                   sys_name[baselines[k].ping], pc, "-", cr.median, cr.min, cr.max, cr.lo, cr.hi);
        }
        for (int i = 0; i < opt.nsizes; i++) {
            size_t b = opt.sizes[i] / 8 ? opt.sizes[i] / 8 * 8 : 8;
            size_label(b, lab, sizeof lab);
            double mt = median_of(pi, b, 0, SYS_RAW_TUNED);
            double mn = median_of(pi, b, 0, SYS_RAW_NAIVE);
            double mr = median_of(pi, b, 0, SYS_NUMRPC);
            struct ratio_stats rn = ratio_of(pi, b, 0, 0, SYS_RAW_NAIVE, SYS_RAW_TUNED);
            struct ratio_stats rr = ratio_of(pi, b, 0, 0, SYS_NUMRPC, SYS_RAW_TUNED);
            double target = b >= (8u << 20) ? 1.15 : 0;
            printf("%-9s %-13s %12.3e %10.1f %8s\n", lab, sys_name[SYS_RAW_TUNED], mt,
                   mbps(b, mt), "1");
            printf("%-9s %-13s %12.3e %10.1f %8.3f %7.3f..%-7.3f %7.3f..%-7.3f\n", lab,
                   sys_name[SYS_RAW_NAIVE], mn, mbps(b, mn), rn.median, rn.min, rn.max, rn.lo,
                   rn.hi);
            verdict(vd, sizeof vd, rr.median, target);
            printf("%-9s %-13s %12.3e %10.1f %8.3f %7.3f..%-7.3f %7.3f..%-7.3f %s\n", lab,
                   sys_name[SYS_NUMRPC], mr, mbps(b, mr), rr.median, rr.min, rr.max, rr.lo,
                   rr.hi, vd);
            for (size_t k = 0; k < NBASELINES; k++) {
                if (!have[k]) continue;
                int sys = baselines[k].bulk;
                double mc = median_of(pi, b, 0, sys);
                struct ratio_stats rc = ratio_of(pi, b, 0, 0, sys, SYS_RAW_TUNED);
                struct ratio_stats nc = ratio_of(pi, b, 0, 0, SYS_NUMRPC, sys);
                printf("%-9s %-13s %12.3e %10.1f %8.3f %7.3f..%-7.3f %7.3f..%-7.3f "
                       "numrpc/%s %.3f (%.3f..%.3f)\n",
                       lab, sys_name[sys], mc, mbps(b, mc), rc.median, rc.min, rc.max, rc.lo,
                       rc.hi, baselines[k].name, nc.median, nc.lo, nc.hi);
            }
            if (md) {
                if (b < 1u << 20)
                    fprintf(md, "| %s | %.1f µs (%.0f MB/s) | %.1f µs (%.0f MB/s) | %.1f µs "
                                "(%.0f MB/s) |",
                            lab, mt * 1e6, mbps(b, mt), mn * 1e6, mbps(b, mn), mr * 1e6,
                            mbps(b, mr));
                else
                    fprintf(md, "| %s | %.0f MB/s | %.0f MB/s | %.0f MB/s |", lab,
                            mbps(b, mt), mbps(b, mn), mbps(b, mr));
                fprintf(md, " **%.3f** (%.3f..%.3f; %.3f..%.3f) | %s |\n", rr.median, rr.min,
                        rr.max, rr.lo, rr.hi, vd);
            }
        }
        for (size_t k = 0; md && k < NBASELINES; k++) {
            if (!have[k]) continue;
            const struct baseline *bl = &baselines[k];
            fprintf(md, "\nThe %s baseline, same rounds%s:\n\n"
                        "| size (each way) | %s | %s / tuned | numrpc / %s (90%% CI) "
                        "|\n|---|---|---|---|\n",
                    bl->name,
                    bl->bulk == SYS_CORBA ? " (target for numrpc: <= 1.25x omniORB at every "
                                            "size, and faster at 64 MiB)"
                                          : "",
                    bl->name, bl->name, bl->name);
            double pc = median_of(pi, 8, 0, bl->ping);
            struct ratio_stats cr = ratio_of(pi, 8, 0, 0, bl->ping, SYS_RAW_PING);
            struct ratio_stats nc = ratio_of(pi, 8, 0, 0, SYS_NUMRPC_PING, bl->ping);
            fprintf(md, "| ping | %.1f µs | %.3f | **%.3f** (%.3f..%.3f) |\n", pc * 1e6, cr.median,
                    nc.median, nc.lo, nc.hi);
            for (int i = 0; i < opt.nsizes; i++) {
                size_t b = opt.sizes[i] / 8 ? opt.sizes[i] / 8 * 8 : 8;
                double mc = median_of(pi, b, 0, bl->bulk);
                struct ratio_stats rc = ratio_of(pi, b, 0, 0, bl->bulk, SYS_RAW_TUNED);
                struct ratio_stats ncb = ratio_of(pi, b, 0, 0, SYS_NUMRPC, bl->bulk);
                fprintf(md, "| %s | %.0f MB/s | %.3f | **%.3f** (%.3f..%.3f) |\n",
                        size_label(b, lab, sizeof lab), mbps(b, mc), rc.median, ncb.median,
                        ncb.lo, ncb.hi);
            }
        }
        report_oneway(pi, md);
        report_fits(pi, md);
        if (opt.packet_sweep) {
            size_t b = 8u << 20;
            static const size_t packets[] = {1024, 4096, 65536, 1048576};
            double base = median_of(pi, b, 1, SYS_RAW_TUNED);
            printf("-- packet sweep, numrpc dcopy 8 MiB each way (raw tuned %.1f MB/s in the "
                   "same rounds)\n",
                   mbps(b, base));
            printf("%-9s %12s %10s %8s %15s %15s %14s\n", "packet", "median_s", "MB/s",
                   "ratio", "round min..max", "90% CI median", "wire bytes out");
            if (md) {
                fprintf(md, "\nPacket sweep, numrpc dcopy 8 MiB each way (raw tuned %.0f MB/s "
                            "in the same rounds):\n\n",
                        mbps(b, base));
                fprintf(md, "| packet | numrpc MB/s | numrpc / tuned (min..max; 90%% CI) | "
                            "request bytes on the wire |\n|---|---|---|---|\n");
            }
            for (size_t k = 0; k < sizeof packets / sizeof *packets; k++) {
                double m = median_of(pi, b, packets[k], SYS_NUMRPC);
                struct ratio_stats rr = ratio_of(pi, b, packets[k], 1, SYS_NUMRPC, SYS_RAW_TUNED);
                uint64_t wire = 0;
                for (size_t i = 0; i < nsamples; i++)
                    if (samples[i].placement == pi && samples[i].packet == packets[k] &&
                        samples[i].bytes == b)
                        wire = samples[i].wire_sent;
                size_label(packets[k], lab, sizeof lab);
                printf("%-9s %12.3e %10.1f %8.3f %7.3f..%-7.3f %7.3f..%-7.3f %14llu\n", lab, m,
                       mbps(b, m), rr.median, rr.min, rr.max, rr.lo, rr.hi,
                       (unsigned long long)wire);
                if (md)
                    fprintf(md, "| %s | %.0f | %.3f (%.3f..%.3f; %.3f..%.3f) | %llu |\n", lab,
                            mbps(b, m), rr.median, rr.min, rr.max, rr.lo, rr.hi,
                            (unsigned long long)wire);
            }
        }
    }
}

static int write_csv(const char *path, const struct placement *pls)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    fprintf(f, "placement,client_cpu,server_cpu,bytes_each_way,packet,system,round,reps,"
               "median_s,mb_per_s,send_s,compute_s,receive_s,wire_bytes_sent,"
               "wire_bytes_received\n");
    for (size_t i = 0; i < nsamples; i++) {
        const struct sample *s = &samples[i];
        const struct placement *pl = &pls[s->placement];
        int num = s->system == SYS_NUMRPC || s->system == SYS_NUMRPC_PING ||
                  s->system == SYS_NUMRPC_SINK;
        fprintf(f, "%s,%d,%d,%zu,%zu,%s,%d,%d,%.9g,%.6g,", pl->name, pl->client_cpu,
                pl->server_cpu, s->bytes, s->packet == 1 ? 0 : s->packet,
                s->system == SYS_RAW_TUNED && s->packet == 1 ? "raw-tuned-sweep"
                                                             : sys_name[s->system],
                s->round, s->reps, s->median_s,
                is_ping(s->system) ? 0.0 : mbps(s->bytes, s->median_s));
        if (num)
            fprintf(f, "%.9g,%.9g,%.9g,%llu,%llu\n", s->send_s, s->compute_s, s->receive_s,
                    (unsigned long long)s->wire_sent, (unsigned long long)s->wire_received);
        else
            fprintf(f, ",,,,\n");
    }
    fclose(f);
    return 0;
}

/* ---- options ---- */

static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    while (*end == ' ') end++;
    if (*end == 'k' || *end == 'K') v *= 1024;
    else if (*end == 'm' || *end == 'M') v *= 1024 * 1024;
    else if (*end == 'g' || *end == 'G') v *= 1024.0 * 1024 * 1024;
    return v > 0 ? (size_t)v : 0;
}

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

static char *default_path(const char *rel);

static void remove_stubs_dir(void)
{
    if (!opt.stubs_tmp[0]) return;
    DIR *d = opendir(opt.stubs_tmp);
    if (d) {
        struct dirent *e;
        char path[PATH_MAX];
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.') continue;
            snprintf(path, sizeof path, "%s/%s", opt.stubs_tmp, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(opt.stubs_tmp);
}

/* The servers' stubs dir: links to every module of opt.stubs and to this
 * folder's benchsink module (numrpc's one-way sink).  Without benchsink the
 * numrpc one-way run is off. */
static void make_stubs_dir(void)
{
    char *sink = default_path(".libs/benchsink.so");
    snprintf(opt.stubs_tmp, sizeof opt.stubs_tmp, "/tmp/numrpc-bench-stubs-XXXXXX");
    DIR *d = NULL;
    if (!sink || access(sink, R_OK) != 0 || !mkdtemp(opt.stubs_tmp) ||
        !(d = opendir(opt.stubs))) {
        opt.stubs_tmp[0] = '\0';
        sys_on[SYS_NUMRPC_SINK] = 0;
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
        snprintf(from, sizeof from, "%s/%s", opt.stubs, e->d_name);
        snprintf(to, sizeof to, "%s/%s", opt.stubs_tmp, e->d_name);
        if (realpath(from, real) && symlink(real, to) != 0) perror(to);
    }
    closedir(d);
    snprintf(to, sizeof to, "%s/benchsink.so", opt.stubs_tmp);
    if (!realpath(sink, real) || symlink(real, to) != 0) sys_on[SYS_NUMRPC_SINK] = 0;
    free(sink);
    opt.stubs_given = opt.stubs; /* still reachable: default_path's copy is not a leak */
    opt.stubs = opt.stubs_tmp;
}

static char *default_path(const char *rel)
{
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) return strdup(rel);
    exe[k] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    size_t l = strlen(exe);
    if (l >= 6 && strcmp(exe + l - 6, "/.libs") == 0) exe[l - 6] = '\0';
    char *out = malloc(strlen(exe) + strlen(rel) + 2);
    if (out) sprintf(out, "%s/%s", exe, rel);
    return out;
}

int main(int argc, char **argv)
{
    const char *sizes_arg = NULL;
    const char *place_arg = NULL;
    int no_corba = 0, no_grpc = 0;
    opt.rounds = 0;
    opt.placement_only = -1;
    opt.server_bin = getenv("NUMRPC_SERVER_BIN");
    opt.stubs = getenv("NUMRPC_STUBS_DIR");
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
        case 'b': opt.server_bin = optarg; break;
        case 's': opt.stubs = optarg; break;
        case 'z': sizes_arg = optarg; break;
        case 'r': opt.rounds = atoi(optarg); break;
        case 'q': opt.quick = 1; break;
        case 'p': opt.packet_sweep = 1; break;
        case 'c': opt.csv = optarg; break;
        case 'm': opt.markdown = optarg; break;
        case 'P': place_arg = optarg; break;
        case 'C': opt.corba_bin = optarg; break;
        case 'R': opt.reps = atoi(optarg); break;
        case 'G': opt.grpc_bin = optarg; break;
        case 'g': no_grpc = 1; break;
        case 'D': opt.delay_ms = atof(optarg); break;
        case 'N': no_corba = 1; break;
        case 'H': opt.host = optarg; break;
        case 'S': opt.server_netns = optarg; break;
        case 'L': opt.link = optarg; break;
        case 'B': opt.buffer_sweep = 1; break;
        case 'y': opt.sweep_bytes = parse_size(optarg); break;
        case 'k': sweep_packets_arg = optarg; break;
        case 'u': sweep_bufs_arg = optarg; break;
        case 'v': opt.sweep_csv = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return 2;
    }
    if (!opt.server_bin) opt.server_bin = default_path("../server/numrpc-server");
    if (!opt.stubs) opt.stubs = default_path("../stubs/.libs");
    if (!opt.host) opt.host = "127.0.0.1";
    if (!opt.link) opt.link = strcmp(opt.host, "127.0.0.1") == 0 ? "loopback" : opt.host;
    {
        struct in_addr a;
        if (inet_pton(AF_INET, opt.host, &a) != 1) {
            fprintf(stderr, "numrpc-bench-transfer: --host wants an IPv4 address\n");
            return 2;
        }
    }
    setenv("NUMRPC_BENCH_HOST", opt.host, 1); /* rawtcp, proxies, baselines */
    opt.netns_fd = opt.home_netns_fd = -1;
    if (opt.server_netns) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "/var/run/netns/%s", opt.server_netns);
        opt.netns_fd = open(path, O_RDONLY | O_CLOEXEC);
        opt.home_netns_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        if (opt.netns_fd < 0 || opt.home_netns_fd < 0) {
            fprintf(stderr, "numrpc-bench-transfer: network namespace %s: %s\n", path,
                    strerror(errno));
            return 2;
        }
        printf("# servers in network namespace %s at %s; this client in its own\n",
               opt.server_netns, opt.host);
    }
    if (!opt.sweep_bytes) opt.sweep_bytes = opt.delay_ms > 0 ? 256u << 10 : 8u << 20;
    {
        char *copy = strdup(sweep_packets_arg), *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t && opt.nsweep_packets < 16;
             t = strtok_r(NULL, ",", &save))
            opt.sweep_packets[opt.nsweep_packets++] = parse_size(t);
        free(copy);
        copy = strdup(sweep_bufs_arg);
        for (char *t = strtok_r(copy, ",", &save); t && opt.nsweep_bufs < 8;
             t = strtok_r(NULL, ",", &save))
            opt.sweep_bufs[opt.nsweep_bufs++] = strcmp(t, "0") == 0 ? 0 : (int)parse_size(t);
        free(copy);
    }
    make_stubs_dir();
    opt.proxy_bin = default_path("numrpc-delay-proxy");
#ifdef HAVE_CORBA
    if (opt.delay_ms > 0 && access(opt.proxy_bin, X_OK) != 0) {
        fprintf(stderr, "numrpc-bench-transfer: --delay-ms needs %s\n", opt.proxy_bin);
        return 2;
    }
    if (opt.delay_ms > 0) printf("# every connection through a delay proxy: +%g ms each way\n", opt.delay_ms);
    if (!opt.corba_bin) opt.corba_bin = default_path("../apps/corba/numrpc-corba-server");
    if (no_corba || (opt.corba_bin && access(opt.corba_bin, X_OK) != 0)) opt.corba_bin = NULL;
#else
    (void)no_corba;
    opt.corba_bin = NULL;
#endif
    if (!opt.corba_bin) printf("# omniORB baseline: not built or disabled; skipped\n");
#ifdef HAVE_GRPC
    if (!opt.grpc_bin) opt.grpc_bin = default_path("numrpc-grpc-server");
    if (no_grpc || (opt.grpc_bin && access(opt.grpc_bin, X_OK) != 0)) opt.grpc_bin = NULL;
#else
    (void)no_grpc;
    opt.grpc_bin = NULL;
#endif
    if (!opt.grpc_bin) printf("# gRPC baseline: not built or disabled; skipped\n");
    if (access(opt.server_bin, X_OK) != 0) {
        fprintf(stderr, "numrpc-bench-transfer: no server at %s (use --server-bin)\n",
                opt.server_bin);
        return 2;
    }
    if (opt.rounds <= 0) opt.rounds = opt.quick ? 5 : 7;
    if (opt.rounds < 5) fprintf(stderr, "numrpc-bench-transfer: note: fewer than 5 rounds\n");
    if (opt.rounds > MAX_ROUNDS) opt.rounds = MAX_ROUNDS;
    if (sizes_arg) {
        char *copy = strdup(sizes_arg), *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t && opt.nsizes < MAX_SIZES;
             t = strtok_r(NULL, ",", &save)) {
            size_t v = parse_size(t);
            if (v == 0) {
                fprintf(stderr, "numrpc-bench-transfer: bad size '%s'\n", t);
                return 2;
            }
            opt.sizes[opt.nsizes++] = v;
        }
        free(copy);
    } else {
        opt.sizes[opt.nsizes++] = 8;
        opt.sizes[opt.nsizes++] = 64u << 10;
        opt.sizes[opt.nsizes++] = 8u << 20;
        if (!opt.quick) opt.sizes[opt.nsizes++] = 64u << 20;
    }
    for (int i = 0; i < opt.nsizes; i++) {
        if (opt.sizes[i] / 8 > INT_MAX) {
            fprintf(stderr, "numrpc-bench-transfer: size too large for dcopy\n");
            return 2;
        }
        size_t b = opt.sizes[i] < 8 ? 8 : opt.sizes[i] / 8 * 8;
        if (b > maxbytes) maxbytes = b;
    }
    if (opt.packet_sweep && maxbytes < (8u << 20)) maxbytes = 8u << 20;
    if (opt.buffer_sweep && maxbytes < opt.sweep_bytes) maxbytes = opt.sweep_bytes;
    xbuf = malloc(maxbytes);
    ybuf = malloc(maxbytes);
    if (!xbuf || !ybuf) {
        fprintf(stderr, "numrpc-bench-transfer: out of memory\n");
        return 2;
    }
    for (size_t i = 0; i < maxbytes / 8; i++) xbuf[i] = (double)i * 0.5 + 1.0 / (double)(i + 3);
    memset(ybuf, 0, maxbytes);

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
            if (strncmp(pls[i].name, place_arg, strlen(place_arg)) == 0) opt.placement_only = i;
        if (opt.placement_only < 0 && npl == 1) {
            printf("# placement '%s': one CPU here, running unpinned\n", place_arg);
            opt.placement_only = 0;
        }
        if (opt.placement_only < 0) {
            fprintf(stderr, "numrpc-bench-transfer: placement '%s' not available here\n",
                    place_arg);
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    printf("# numrpc-bench-transfer: %d online CPUs, %d rounds, server %s, stubs %s\n", ncpu,
           opt.rounds, opt.server_bin, opt.stubs);
    fflush(stdout);
    int failed = 0;
    for (int pi = 0; pi < npl; pi++) {
        if (opt.placement_only >= 0 && pi != opt.placement_only) continue;
        if (run_placement(pi, &pls[pi]) != 0) failed = 1;
    }
    FILE *md = NULL;
    if (opt.markdown) {
        md = fopen(opt.markdown, "w");
        if (!md) perror(opt.markdown);
    }
    if (md && !opt.buffer_sweep)
        fprintf(md, "Round trip: N bytes each way (dcopy: x out, y back; raw: echo). "
                    "Cells: median of per-round medians. Ratio: numrpc time / raw tuned "
                    "time (lower is better), median over %d rounds (round min..max; "
                    "bootstrap 90%% CI of the median).\n",
                opt.rounds);
    if (opt.buffer_sweep) {
        sweep_report(md);
        if (opt.sweep_csv && write_sweep_csv(opt.sweep_csv, pls) != 0) failed = 1;
    } else {
        report(pls, npl, ncpu, md);
        if (opt.csv && write_csv(opt.csv, pls) != 0) failed = 1;
    }
    if (md) fclose(md);
    if (verify_failures) {
        fprintf(stderr, "numrpc-bench-transfer: %d transfers returned wrong data\n",
                verify_failures);
        return 1;
    }
    return failed ? 1 : 0;
}
