/* transfer_sweep.c -- numrpc-bench-transfer's loops over sizes, packet sizes and
 * socket buffers, in interleaved rounds, for one placement of client and servers. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <numrpc.h>

#include "rawtcp.h"
#include "sibling.h"
#include "transfer_opt.h"
#include "transfer_place.h"
#include "transfer_measure.h"
#include "transfer_sweep.h"
#ifdef HAVE_CORBA
#include "corba_client.h"
#endif
#ifdef HAVE_GRPC
#include "grpc_baseline.h"
#endif

/* ---- the buffer-size sweep (the Ninf paper's figure) ---- */

#define SWEEP_MAX_SERVERS 16

/* numrpc dcopy round trips of bench_opt.sweep_bytes for every packet size x
 * socket buffer x TCP_NODELAY, raw tuned in the same rounds.  One numrpc server per
 * (buffer, NODELAY), started with NUMRPC_SOCKBUF / NUMRPC_TCP_NODELAY in its
 * environment (common/sock.c applies them to every socket); the client sets
 * the same variables before it reconnects. */
static int sweep_buffers(int pi, const struct placement *pl, struct measure_ctx *c)
{
    pid_t srv[SWEEP_MAX_SERVERS], prox[SWEEP_MAX_SERVERS];
    int port[SWEEP_MAX_SERVERS], ncombo = 0, rc = -1;
    int combo_buf[SWEEP_MAX_SERVERS], combo_nd[SWEEP_MAX_SERVERS];
    for (int b = 0; b < bench_opt.nsweep_bufs; b++)
        for (int nd = 1; nd >= 0 && ncombo < SWEEP_MAX_SERVERS; nd--) {
            combo_buf[ncombo] = bench_opt.sweep_bufs[b];
            combo_nd[ncombo] = nd;
            char v[32];
            snprintf(v, sizeof v, "%d", bench_opt.sweep_bufs[b]);
            setenv("NUMRPC_SOCKBUF", v, 1);
            setenv("NUMRPC_TCP_NODELAY", nd ? "1" : "0", 1);
            prox[ncombo] = 0;
            srv[ncombo] = place_spawn_numrpc_server(pl->server_cpu, &port[ncombo]);
            if (srv[ncombo] > 0)
                prox[ncombo] = place_spawn_delay_proxy(pl->server_cpu, &port[ncombo]);
            ncombo++;
            if (srv[ncombo - 1] < 0 || prox[ncombo - 1] < 0) goto out;
        }
    struct sample s;
    memset(&s, 0, sizeof s);
    s.placement = pi;
    size_t bytes = bench_opt.sweep_bytes;
    int reps = bench_opt.reps > 0 ? bench_opt.reps : bytes >= (1u << 20) ? 3 : 5;
    for (int r = 0; r < bench_opt.rounds; r++) {
        unsetenv("NUMRPC_SOCKBUF");
        unsetenv("NUMRPC_TCP_NODELAY");
        s.packet = 1;
        s.sockbuf = -1;
        if (measure_one(c, SYS_RAW_TUNED, bytes, reps, &s) != 0) goto out;
        s.round = r;
        measure_add_sample(&s);
        for (int k = 0; k < ncombo; k++) {
            char v[32];
            snprintf(v, sizeof v, "%d", combo_buf[k]);
            setenv("NUMRPC_SOCKBUF", v, 1);
            setenv("NUMRPC_TCP_NODELAY", combo_nd[k] ? "1" : "0", 1);
            for (int j = 0; j < bench_opt.nsweep_packets; j++) {
                if (measure_numrpc_setup(port[k], bench_opt.sweep_packets[j]) != 0) goto out;
                /* Warm-up: connect, HELLO, the interface, on a small copy. */
                if (measure_one(c, SYS_NUMRPC, 64, 1, &s) != 0) goto out;
                if (measure_one(c, SYS_NUMRPC, bytes, reps, &s) != 0) goto out;
                s.round = r;
                s.packet = bench_opt.sweep_packets[j];
                s.sockbuf = combo_buf[k];
                s.nodelay = combo_nd[k];
                measure_add_sample(&s);
            }
        }
        printf("# buffer sweep: round %d of %d done\n", r + 1, bench_opt.rounds);
        fflush(stdout);
    }
    rc = 0;
out:
    numrpc_finalize();
    unsetenv("NUMRPC_SOCKBUF");
    unsetenv("NUMRPC_TCP_NODELAY");
    for (int k = 0; k < ncombo; k++) {
        if (prox[k] > 0) bench_stop_process(prox[k]);
        bench_stop_process(srv[k]);
    }
    return rc;
}

/* ---- one placement: latency, cold calls, sizes, packet sweep ---- */

int sweep_placement(int pi, const struct placement *pl)
{
    place_pin_self(pl->client_cpu);
    int port = 0;
    rawtcp_server raw = {0, {0, 0}};
    place_enter_server_netns(); /* the listeners are opened here, before the fork */
    int raw_rc = rawtcp_server_spawn(&raw, pl->server_cpu);
    place_leave_server_netns();
    if (raw_rc != 0) {
        perror("numrpc-bench-transfer: raw server");
        return -1;
    }
    pid_t srv = place_spawn_numrpc_server(pl->server_cpu, &port);
    if (srv < 0) {
        rawtcp_server_stop(&raw);
        return -1;
    }
    /* With --delay-ms every connection goes through a delay proxy. */
    pid_t proxies[5] = {0, 0, 0, 0, 0};
    rawtcp_server raw_via = raw;
    proxies[0] = place_spawn_delay_proxy(pl->server_cpu, &port);
    proxies[1] = place_spawn_delay_proxy(pl->server_cpu, &raw_via.port[RAWTCP_TUNED]);
    proxies[2] = place_spawn_delay_proxy(pl->server_cpu, &raw_via.port[RAWTCP_NAIVE]);
    pid_t corba = -1;
#ifdef HAVE_CORBA
    if (bench_opt.corba_bin && !bench_opt.buffer_sweep) {
        corba = place_spawn_corba_server(pl->server_cpu, &proxies[4]);
        if (corba < 0) fprintf(stderr, "numrpc-bench-transfer: omniORB baseline skipped\n");
    }
#endif
    pid_t grpc = -1;
#ifdef HAVE_GRPC
    if (bench_opt.grpc_bin && !bench_opt.buffer_sweep) {
        grpc = place_spawn_grpc_server(pl->server_cpu, &proxies[3]);
        if (grpc < 0) fprintf(stderr, "numrpc-bench-transfer: gRPC baseline skipped\n");
    }
#endif
    measure_on[SYS_CORBA] = measure_on[SYS_CORBA_PING] = measure_on[SYS_CORBA_SINK] = corba > 0;
    measure_on[SYS_GRPC] = measure_on[SYS_GRPC_PING] = measure_on[SYS_GRPC_SINK] = grpc > 0;
    struct measure_ctx c;
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
           pl->name, pl->client_cpu, pl->server_cpu, bench_opt.link, bench_opt.host, port,
           (int)srv, snd, rcv);
    fflush(stdout);
    if (bench_opt.buffer_sweep) {
        rc = sweep_buffers(pi, pl, &c);
        goto out;
    }
    if (measure_numrpc_setup(port, 0) != 0) goto out;

    struct sample s;
    memset(&s, 0, sizeof s);
    s.placement = pi;
    /* Warm-up: connections, interface cache, server worker pages. */
    FOR_BULK(sys) for (int i = 0; i < bench_opt.nsizes; i++)
        if (measure_one(&c, sys, bench_opt.sizes[i], 1, &s) != 0) goto out;
    FOR_SINK(sys) for (int i = 0; i < bench_opt.nsizes; i++)
        if (measure_one(&c, sys, bench_opt.sizes[i], 1, &s) != 0) goto out;
    FOR_PING(sys) if (measure_one(&c, sys, 8, 50, &s) != 0) goto out;

    /* Latency: rounds of raw ping-pong and numrpc ping back to back. */
    int ping_reps = bench_opt.reps > 0 ? bench_opt.reps * 5 : bench_opt.quick ? 300 : 1000;
    for (int r = 0; r < bench_opt.rounds; r++) {
        FOR_PING(sys) {
            if (measure_one(&c, sys, 8, ping_reps, &s) != 0) goto out;
            s.round = r;
            measure_add_sample(&s);
        }
    }
    /* Cold calls: what a first call costs, in the same rounds. */
    int cold_reps = bench_opt.quick || bench_opt.reps > 0 ? 5 : 20;
    for (int r = 0; r < bench_opt.rounds; r++) {
        struct sample rs = s, ns = s;
        if (measure_cold(&raw_via, port, cold_reps, &rs, &ns) != 0) goto out;
        rs.round = ns.round = r;
        measure_add_sample(&rs);
        measure_add_sample(&ns);
    }
    /* Throughput: per size, rounds of raw tuned, raw naive, numrpc dcopy. */
    for (int i = 0; i < bench_opt.nsizes; i++) {
        int reps = measure_reps_for(bench_opt.sizes[i]);
        for (int r = 0; r < bench_opt.rounds; r++) {
            FOR_BULK(sys) {
                if (measure_one(&c, sys, bench_opt.sizes[i], reps, &s) != 0) goto out;
                s.round = r;
                measure_add_sample(&s);
            }
            FOR_SINK(sys) {
                if (measure_one(&c, sys, bench_opt.sizes[i], reps, &s) != 0) goto out;
                s.round = r;
                measure_add_sample(&s);
            }
        }
        printf("# placement %s: %zu bytes done\n", pl->name, bench_opt.sizes[i]);
        fflush(stdout);
    }
    /* Packet sweep: numrpc 8 MiB round trip by packet size (the client's
     * call header asks the server for the same size), raw tuned beside. */
    if (bench_opt.packet_sweep) {
        static const size_t packets[] = {1024, 4096, 65536, 1048576};
        size_t bytes = 8u << 20;
        int reps = bench_opt.quick ? 3 : 5;
        for (int r = 0; r < bench_opt.rounds; r++) {
            s.packet = 0;
            if (measure_one(&c, SYS_RAW_TUNED, bytes, reps, &s) != 0) goto out;
            s.round = r;
            s.system = SYS_RAW_TUNED;
            s.packet = 1; /* marks a sweep sample */
            measure_add_sample(&s);
            for (size_t k = 0; k < sizeof packets / sizeof *packets; k++) {
                if (measure_numrpc_setup(port, packets[k]) != 0) goto out;
                if (measure_one(&c, SYS_NUMRPC, bytes, 1, &s) != 0) goto out; /* warm-up */
                if (measure_one(&c, SYS_NUMRPC, bytes, reps, &s) != 0) goto out;
                s.round = r;
                s.packet = packets[k];
                measure_add_sample(&s);
            }
        }
        s.packet = 0;
        measure_numrpc_setup(port, 0);
    }
    rc = 0;
out:
    numrpc_finalize();
    if (c.fd[0] >= 0) close(c.fd[0]);
    if (c.fd[1] >= 0) close(c.fd[1]);
    bench_stop_process(srv);
#ifdef HAVE_CORBA
    if (corba > 0) corba_client_close();
#endif
    bench_stop_process(corba);
#ifdef HAVE_GRPC
    if (grpc > 0) grpc_baseline_close();
#endif
    bench_stop_process(grpc);
    for (int i = 0; i < 5; i++)
        if (proxies[i] > 0) bench_stop_process(proxies[i]);
    rawtcp_server_stop(&raw);
    place_pin_self(-1);
    return rc;
}

