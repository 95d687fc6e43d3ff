/* transfer_measure.c -- one timed measurement of numrpc-bench-transfer (raw TCP,
 * numrpc, omniORB, gRPC: round trip, ping, cold call, one-way) and its samples. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <numrpc.h>

#include "fit.h"
#include "stats.h"
#include "transfer_opt.h"
#include "transfer_measure.h"
#ifdef HAVE_CORBA
#include "corba_client.h"
#endif
#ifdef HAVE_GRPC
#include "grpc_baseline.h"
#endif

const char *const measure_sys_name[SYS_COUNT] = {
    "raw-tuned",    "raw-naive",   "numrpc-dcopy", "omniorb-dcopy", "grpc-dcopy",
    "raw-pingpong", "numrpc-ping", "omniorb-ping", "grpc-ping", "raw-cold", "numrpc-cold",
    "raw-sink",     "numrpc-sink", "omniorb-sink", "grpc-sink"};

int measure_on[SYS_COUNT] = {1, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0};

int measure_is_ping(int sys)
{
    return sys >= SYS_RAW_PING && sys <= SYS_NUMRPC_COLD;
}

static struct sample *samples;
static size_t nsamples, capsamples;
static double *xbuf, *ybuf;
static int verify_failures;

void measure_add_sample(const struct sample *s)
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

const struct sample *measure_samples(size_t *n)
{
    *n = nsamples;
    return samples;
}

int measure_verify_failures(void)
{
    return verify_failures;
}

int measure_alloc_buffers(size_t maxbytes)
{
    xbuf = malloc(maxbytes);
    if (!xbuf) goto fail;
    ybuf = malloc(maxbytes);
    if (!ybuf) goto fail;
    for (size_t i = 0; i < maxbytes / 8; i++) xbuf[i] = (double)i * 0.5 + 1.0 / (double)(i + 3);
    memset(ybuf, 0, maxbytes);
    return 0;
fail:
    free(xbuf);
    xbuf = NULL;
    return -1;
}

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

int measure_one(struct measure_ctx *c, int sys, size_t bytes, int reps, struct sample *s)
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
                        measure_sys_name[sys], n * 8, ack, want);
                verify_failures++;
            }
        } else if (measure_is_ping(sys)) {
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
                        measure_sys_name[sys], n * 8);
                verify_failures++;
            }
        }
        if (rc != 0) {
            fprintf(stderr, "numrpc-bench-transfer: %s failed: %s\n", measure_sys_name[sys],
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
    s->bytes = measure_is_ping(sys) ? 8 : n * 8;
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

/* numrpc's cold call: connect, HELLO and interface fetch pipelined, then the call. */
int measure_cold(const rawtcp_server *raw, int port, int reps, struct sample *rs,
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
        if (rc != 0 || measure_numrpc_setup(port, 0) != 0) return -1;
        t0 = bench_now();
        rc = numrpc_call("ping");
        tnum[r] = bench_now() - t0;
        if (rc != 0) {
            fprintf(stderr, "numrpc-bench-transfer: cold ping: %s\n",
                    failure_text(SYS_NUMRPC_PING, rc));
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

int measure_reps_for(size_t bytes)
{
    if (bench_opt.reps > 0) return bench_opt.reps;
    if (bytes <= 4096) return bench_opt.quick ? 100 : 300;
    if (bytes <= 1u << 20) return bench_opt.quick ? 20 : 50;
    if (bytes <= 16u << 20) return bench_opt.quick ? 4 : 8;
    return 3;
}

int measure_numrpc_setup(int port, size_t packet)
{
    char servers[64];
    snprintf(servers, sizeof servers, "%s:%d", bench_opt.host, port);
    numrpc_config cfg = {.servers = servers, .packet_size = packet};
    int rc = numrpc_init(&cfg);
    if (rc != 0)
        fprintf(stderr, "numrpc-bench-transfer: numrpc_init: %s: %s\n", numrpc_strerror(rc),
                numrpc_last_error_detail());
    return rc;
}
