/* dispatch.c -- the server's main process: its event loop, accepting
 * connections and routing each (a HELLO, STATUS or ADMIN answered here, anything
 * else queued for a worker: pool.c), signals, and the drain on SIGTERM. */
#define _GNU_SOURCE
#include "dispatch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "arrival.h"
#include "access.h"
#include "conn.h"
#include "connio.h"
#include "control.h"
#include "handles.h"
#include "handshake.h"
#include "http_port.h"
#include "live.h"
#include "log.h"
#include "metajoin.h"
#include "metrics.h"
#include "pool.h"
#include "progress.h"
#include "pull.h"
#include "slots.h"
#include "sock.h"
#include "stats.h"

/* Descriptors the dispatcher keeps for itself beyond two per worker
 * (listening, epoll, signals, admin, metaserver link, spare, lingering). */
#define DISPATCH_FD_RESERVE 32

static void route(dispatcher *d, int c);

/* A connection in the dispatcher's hands, ready for its first request (a
 * TLS one with its handshake done): what is here is routed, else it waits. */
static void take_first(dispatcher *d, int c)
{
    if (conn_readable(d, c)) route(d, c);
    else conn_make_idle(d, c, d->conns[c].since);
}

/* Out of descriptors, a pending connection would keep the listening socket
 * readable forever (a spinning loop): the spare descriptor makes room to
 * take it and close it at once; its client sees the connection end. */
static int shed_when_out_of_descriptors(dispatcher *d)
{
    if ((errno != EMFILE && errno != ENFILE) || d->spare_fd < 0) return 0;
    close(d->spare_fd);
    int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd >= 0) close(fd);
    d->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    server_log(d->cfg, LOG_LEVEL_WARN, "out of file descriptors: a new connection was closed unanswered");
    return fd >= 0;
}

/* The open-file limit raised to its hard limit, and --max-connections
 * clamped under it with room for the workers' sockets and the
 * dispatcher's own, so that accepting never runs out in the normal course. */
static void fit_descriptors(server_config *cfg)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r) != 0) return;
    if (r.rlim_cur < r.rlim_max) {
        r.rlim_cur = r.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &r) != 0) getrlimit(RLIMIT_NOFILE, &r);
    }
    if (r.rlim_cur == RLIM_INFINITY) return;
    long reserve = 2L * cfg->max_workers + DISPATCH_FD_RESERVE +
                   (cfg->http_port != CONFIG_HTTP_OFF ? HTTP_PORT_FDS : 0); /* metrics.c's port */
    long room = (long)r.rlim_cur - reserve;
    if (room < 1) room = 1;
    if (cfg->max_connections > room) {
        server_log(cfg, LOG_LEVEL_WARN, "--max-connections %d lowered to %ld: the open-file limit is %ld",
                   cfg->max_connections, room, (long)r.rlim_cur);
        cfg->max_connections = (int)room;
    }
}

static void accept_all(dispatcher *d)
{
    for (;;) {
        struct sockaddr_storage sa;
        socklen_t sl = sizeof sa;
        memset(&sa, 0, sizeof sa);
        int fd = accept4(d->listen_fd, (struct sockaddr *)&sa, &sl, SOCK_CLOEXEC);
        if (fd < 0) {
            if (shed_when_out_of_descriptors(d)) continue;
            return;
        }
        char detail[160];
        if (d->stopping) {
            conn_refuse_fd(d, fd, NUMRPC_EBUSY, "server shutting down");
            continue;
        }
        if (d->nconns_open >= d->cfg->max_connections) {
            snprintf(detail, sizeof detail, "server at its connection limit (%d connections)",
                     d->cfg->max_connections);
            conn_refuse_fd(d, fd, NUMRPC_EBUSY, detail);
            server_log(d->cfg, LOG_LEVEL_NOTICE, "refused a connection: %s", detail);
            continue;
        }
        /* Requests waiting whole for a worker are bounded: beyond, new
         * connections are turned away (silent ones wait in no queue). */
        if (d->cfg->max_queue > 0 && d->qlen >= d->cfg->max_queue) pool_schedule(d);
        if (d->cfg->max_queue > 0 && d->qlen >= d->cfg->max_queue) {
            snprintf(detail, sizeof detail,
                     "server busy: %d requests already wait for a worker (limit %d, %d workers)", d->qlen,
                     d->cfg->max_queue, d->cfg->max_workers);
            conn_refuse_fd(d, fd, NUMRPC_EBUSY, detail);
            server_log(d->cfg, LOG_LEVEL_NOTICE, "refused a connection: %s", detail);
            continue;
        }
        /* One address may not take every connection (a host's many
         * connections, or an attacker's). */
        peer_key peer = conn_peer_key(&sa);
        int from_peer = conn_count_peer(d, &peer), per_peer = conn_peer_limit(d->cfg);
        if (from_peer >= per_peer) {
            snprintf(detail, sizeof detail,
                     "too many connections from this address: %d open (limit %d, --max-connections-per-peer)",
                     from_peer, per_peer);
            conn_refuse_fd(d, fd, NUMRPC_EBUSY, detail);
            server_log(d->cfg, LOG_LEVEL_INFO, "refused a connection: %s", detail);
            continue;
        }
        int c = 0;
        while (d->conns[c].state != CONN_FREE) c++;
        sock_tune(fd);
        conn *k = &d->conns[c];
        k->fd = fd;
        k->tp = transport_tcp(fd); /* tls-record once a handshake is over */
        k->since = k->request_since = sock_now(); /* its first request is due */
        k->request_began = 0;
        k->calls = 0;
        k->peer = peer;
        memset(&k->ctl, 0, sizeof k->ctl);
        memset(&k->out, 0, sizeof k->out);
        d->nconns_open++;
        /* Its first message decides: HELLO, STATUS and ADMIN are answered here,
         * anything else waits for a worker once it is here whole. */
        k->state = CONN_QUEUED; /* not in epoll */
        if (d->tls == NULL || handshake_start(d, c) == HANDSHAKE_DONE) take_first(d, c);
    }
}

/* SIGTERM: calls in flight and queued finish; connections with nothing
 * to do are closed; whatever arrives later is refused. */
static void start_drain(dispatcher *d)
{
    if (d->stopping) return;
    /* Connections the kernel completed before the signal was read are
     * accepted: their clients saw connect() succeed before the signal. */
    accept_all(d);
    d->stopping = 1;
    d->drain_until = sock_now() + d->cfg->drain_timeout_ms / 1000.0;
    server_log(d->cfg, LOG_LEVEL_NOTICE, "SIGTERM: finishing calls in flight, refusing new ones");
    for (int i = 0; i < d->nworkers_cap; i++) {
        atomic_store(&d->slots[i].draining, 1);
        /* A worker holding a connection between calls gives it back now:
         * with its calls done, the connection is closed (conn_back), or
         * owed its first call (conn_call_due). */
        if (atomic_load(&d->slots[i].state) == SLOT_IDLE) pool_ask_release(d, i);
    }
    for (int c = 0; c < d->nconns_cap; c++) {
        if (d->conns[c].state != CONN_IDLE) continue;
        if (conn_readable(d, c)) {
            conn_unwatch(d, d->conns[c].fd);
            d->conns[c].state = CONN_QUEUED; /* not in epoll */
            route(d, c);
        } else if (d->conns[c].calls > 0) {
            conn_close(d, c);
        } else {
            conn_call_due(d, c);
        }
    }
    /* Connections that have made calls and wait idle in a worker come back
     * (and are closed); new ones mid-handshake keep their worker. */
    for (int i = 0; i < d->nworkers_cap; i++) {
        worker *w = &d->workers[i];
        if (w->state != WORKER_HOLDING || atomic_load(&d->slots[i].state) != SLOT_IDLE) continue;
        const conn *c = &d->conns[w->conn];
        if (c->calls + atomic_load(&d->slots[i].calls) - c->calls_base > 0) pool_ask_release(d, i);
    }
}

/* SIGHUP: the configuration file again, then the command line; what needs
 * a restart (sockets, table sizes) keeps its value. */
static void reload(dispatcher *d)
{
    server_config fresh;
    err_t err;
    int help;
    if (config_build(&fresh, d->argc, d->argv, &help, &err) != 0) {
        server_log(d->cfg, LOG_LEVEL_ERROR, "SIGHUP: configuration not changed: %s", err.detail);
        return;
    }
    fresh.port = d->cfg->port;
    memcpy(fresh.bind_addr, d->cfg->bind_addr, sizeof fresh.bind_addr);
    memcpy(fresh.admin_socket, d->cfg->admin_socket, sizeof fresh.admin_socket);
    memcpy(fresh.module_dir, d->cfg->module_dir, sizeof fresh.module_dir);
    memcpy(fresh.tls_cert, d->cfg->tls_cert, sizeof fresh.tls_cert); /* the context is made once */
    memcpy(fresh.tls_key, d->cfg->tls_key, sizeof fresh.tls_key);
    memcpy(fresh.tls_client_ca, d->cfg->tls_client_ca, sizeof fresh.tls_client_ca);
    fresh.max_connections = d->cfg->max_connections;
    fresh.max_workers = d->cfg->max_workers;
    fresh.http_port = d->cfg->http_port; /* its socket is made once too */
    memcpy(fresh.http_port_file, d->cfg->http_port_file, sizeof fresh.http_port_file);
    fresh.http_timeout = d->cfg->http_timeout;
    if (fresh.min_workers > fresh.max_workers) fresh.min_workers = fresh.max_workers;
    *d->cfg = fresh;
    handles_configure(server_handles, d->cfg);
    pull_broker_reload(d->cfg);
    char reply[ERR_DETAIL_MAX + 64];
    live_reload_tokens(d, reply, sizeof reply); /* logs what it did */
    server_log(d->cfg, LOG_LEVEL_NOTICE, "SIGHUP: configuration reread%s%s; workers restart as they become free",
             d->cfg->config_file[0] ? " from " : "", d->cfg->config_file);
    pool_roll(d);
}

/* The dispatcher's figures for readers in other threads (the HTTP port's
 * /metrics): cheap ones on every pass, the handles' at each tick. */
static void publish_gauges(dispatcher *d, int tick)
{
    dispatcher_gauges *g = &server_stats->gauges;
    atomic_store(&g->workers, pool_count(d));
    atomic_store(&g->busy, (int)slots_in_flight(NULL));
    atomic_store(&g->queued, d->qlen);
    atomic_store(&g->connections, d->nconns_open);
    atomic_store(&g->draining, d->stopping);
    atomic_store(&g->restarts, d->restarts);
    if (!tick) return;
    uint64_t count, bytes, pulled, lent;
    handles_totals(server_handles, &count, &bytes);
    handles_moved(server_handles, &pulled, &lent);
    atomic_store(&g->handles, count);
    atomic_store(&g->handle_bytes, bytes);
    atomic_store(&g->pulled_bytes, pulled);
    atomic_store(&g->lent_bytes, lent);
    _Static_assert(STATS_HANDLE_LIMITS == HANDLE_LIMITS, "stats.h counts every limit of handles.h");
    uint64_t refused[HANDLE_LIMITS];
    handles_refusals(server_handles, refused);
    for (int i = 0; i < HANDLE_LIMITS; i++) atomic_store(&g->handle_refusals[i], refused[i]);
}

static int handle_signals(dispatcher *d)
{
    struct signalfd_siginfo si;
    while (read(d->sig_fd, &si, sizeof si) == sizeof si) {
        if (si.ssi_signo == SIGCHLD) pool_reap(d);
        else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) start_drain(d);
        else if (si.ssi_signo == SIGHUP) reload(d);
    }
    return 0;
}

/* --port-file: the chosen port, written when the listening and admin
 * sockets both accept (the file is the readiness signal scripts wait for). */
static int write_port_file(const server_config *cfg, err_t *err)
{
    if (cfg->port_file[0] == '\0') return 0;
    FILE *f = fopen(cfg->port_file, "w");
    if (f == NULL) return err_set(err, NUMRPC_ESERVER, "cannot write %s: %s", cfg->port_file, strerror(errno));
    fprintf(f, "%d\n", cfg->port);
    if (fclose(f) != 0) return err_set(err, NUMRPC_ESERVER, "cannot write %s: %s", cfg->port_file, strerror(errno));
    return 0;
}

static void serve_control(dispatcher *d, int c)
{
    control_ctx ctx = {.cfg = d->cfg, .tokens = &d->tokens, .reader = &d->control_in, .admin_exec = live_exec,
                       .owner = d, .tls = conn_tls(d, c)};
    status_view *v = &ctx.view;
    v->uptime = sock_now() - d->started;
    v->workers = pool_count(d);
    v->max_workers = d->cfg->max_workers;
    v->restarts = d->restarts;
    v->queued = d->qlen;
    v->connections = d->nconns_open;
    v->draining = d->stopping;
    v->generation = d->generation;
    v->in_flight = (int)slots_in_flight(NULL);
    v->tls = d->tls != NULL;
    v->tokens = access_on(&d->tokens);
    handles_totals(server_handles, &v->handles, &v->handle_bytes);
    handles_moved(server_handles, &v->pulled_bytes, &v->lent_bytes);
    /* HELLO and AUTH are the handshake: the connection's first call is
     * still due (a drain serves it); STATUS and ADMIN count as its calls. */
    int type = (int)d->conns[c].ctl.type;
    if (type != PROTO_HELLO && type != (int)PROTO_AUTH) d->conns[c].calls++;
    d->conns[c].request_since = 0;
    ctx.writer = conn_writer(d, c);
    int rc = control_serve(&ctx, d->conns[c].fd, &d->conns[c].ctl);
    if (rc == 0) conn_send(d, c);
    else if (rc == CONTROL_CLOSE_AFTER) conn_send_last(d, c);
    else conn_close(d, c);
}

/* A connection in the dispatcher's hands (not in epoll) with something to
 * read: a control message is answered here; anything else waits for a
 * worker once its first packet is here whole (a worker's time is not lent
 * to a slow sender), or is refused if it comes before a token's proof (a
 * server with tokens) or after SIGTERM on a connection that already had
 * its calls. */
static void route(dispatcher *d, int c)
{
    conn *k = &d->conns[c];
    int waiting; /* requests of its address already in the queue */
    switch (control_next(&k->tp, &k->ctl)) {
    case CONTROL_READY: serve_control(d, c); return;
    case CONTROL_PARTIAL: /* read in part (it left the socket) */
        if (k->request_since == 0) k->request_since = sock_now();
        conn_make_idle(d, c, k->since);
        return;
    case CONTROL_BROKEN: conn_close(d, c); return;
    case CONTROL_BAD:
        conn_refuse(d, c, NUMRPC_EPROTO, "malformed control message (HELLO, STATUS and ADMIN fit one packet of 4 KiB)");
        return;
    default: break;
    }
    /* A TLS client on a plain server hears it in plain framing (its
     * library then names the mismatch). */
    uint8_t first;
    if (d->tls == NULL && recv(k->fd, &first, 1, MSG_PEEK | MSG_DONTWAIT) == 1 && first == TLS_HANDSHAKE_BYTE) {
        conn_refuse(d, c, NUMRPC_EPROTO, "this server does not use TLS (unset NUMRPC_TLS_CA for it)");
        return;
    }
    int arrival = arrival_check(&k->tp);
    if ((arrival == ARRIVAL_PARTIAL || arrival == ARRIVAL_READY) && k->request_began == 0)
        k->request_began = sock_now();
    switch (arrival) {
    case ARRIVAL_CLOSED: conn_close(d, c); return;
    case ARRIVAL_NOTHING: conn_make_idle(d, c, k->since); return;
    case ARRIVAL_PARTIAL: conn_wait_arrival(d, c); return;
    default: break;
    }
    /* With tokens, nothing reaches a worker before a good AUTH. */
    if (access_on(&d->tokens) && k->ctl.access.state != AUTH_PEER_GRANTED) {
        server_log(d->cfg, LOG_LEVEL_NOTICE, "connection %d refused: a request before a token's proof", c);
        conn_refuse(d, c, NUMRPC_EAUTH, ACCESS_NEED_TOKEN);
    } else if (d->stopping && k->calls > 0) {
        conn_refuse(d, c, NUMRPC_EBUSY, "server shutting down");
    } else if (d->cfg->max_queue > 0 && (waiting = pool_queued_from(d, &k->peer)) >= (d->cfg->max_queue + 3) / 4) {
        /* Requests held back by --max-receiving-per-peer wait, a quarter
         * of the queue at most: one address cannot fill it for all. */
        char detail[160];
        snprintf(detail, sizeof detail, "server busy: %d requests from this address already wait for a worker",
                 waiting);
        conn_refuse(d, c, NUMRPC_EBUSY, detail);
    } else {
        conn_enqueue(d, c);
    }
}

/* An epoll event of a connection: room for its reply (WRITING), or bytes
 * (IDLE); a request still arriving stays watched until it is whole, or
 * closed if the peer ended it half sent. */
static void conn_event(dispatcher *d, int c, uint32_t events)
{
    conn *k = &d->conns[c];
    if (k->state == CONN_WRITING) {
        conn_send(d, c);
        return;
    }
    if (k->state == CONN_HANDSHAKE) {
        if (handshake_step(d, c) == HANDSHAKE_DONE) take_first(d, c);
        return;
    }
    if (k->state != CONN_IDLE) return;
    if (k->edge && arrival_check(&k->tp) == ARRIVAL_PARTIAL) {
        if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) conn_close(d, c);
        return;
    }
    conn_unwatch(d, k->fd);
    k->state = CONN_QUEUED; /* not in epoll */
    route(d, c);
}

/* Connections idle with TLS bytes already in their state (conn_make_idle):
 * looked at as if epoll had seen input. */
static void look_at_buffered(dispatcher *d)
{
    d->tls_looks = 0;
    for (int c = 0; c < d->nconns_cap; c++) {
        if (!d->conns[c].tls_look) continue;
        d->conns[c].tls_look = 0;
        if (d->conns[c].state == CONN_IDLE) conn_event(d, c, EPOLLIN);
    }
}

/* The shared tables, made by dispatcher_tables_open before the spawner
 * forks (the spawner and its workers map them too). */
static worker_slot *shared_slots = MAP_FAILED;
static int shared_nslots;

int dispatcher_tables_open(server_config *cfg, worker_slot **slots, err_t *err)
{
    fit_descriptors(cfg);
    if (handles_open(cfg, &server_handles, err) != 0) return -1;
    shared_nslots = cfg->max_workers;
    if (slots_create(shared_nslots, &shared_slots, err) != 0) {
        dispatcher_tables_close();
        return -1;
    }
    server_stats = stats_create();
    if (server_stats == NULL) {
        dispatcher_tables_close();
        return err_set(err, NUMRPC_ENOMEM, "the tables shared with the workers");
    }
    *slots = shared_slots;
    return 0;
}

void dispatcher_tables_close(void)
{
    slots_destroy();
    shared_slots = MAP_FAILED;
    stats_destroy(server_stats);
    server_stats = NULL;
    handles_close(server_handles);
    server_handles = NULL;
}

int dispatcher_run(server_config *cfg, int argc, char **argv, int listen_fd, token_table *tokens, tls_context *tls,
                   err_t *err)
{
    dispatcher d = {0};
    d.cfg = cfg;
    d.tls = tls;
    d.tokens = *tokens; /* the dispatcher's from now on */
    memset(tokens, 0, sizeof *tokens);
    d.argc = argc;
    d.argv = argv;
    d.listen_fd = listen_fd;
    /* Workers come from the spawner through a middle process that leaves:
     * they are handed to the nearest subreaper, this process, which reaps
     * them and hears how they ended. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    d.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    d.nconns_cap = cfg->max_connections + 1;
    d.nworkers_cap = shared_nslots;
    d.conns = calloc((size_t)d.nconns_cap, sizeof *d.conns);
    d.queue = calloc((size_t)d.nconns_cap, sizeof *d.queue);
    d.workers = calloc((size_t)d.nworkers_cap, sizeof *d.workers);
    d.slots = shared_slots;
    d.started = sock_now();
    if (!d.conns || !d.queue || !d.workers || d.slots == MAP_FAILED || server_stats == NULL ||
        wire_writer_init(&d.notice, -1, 0, err) != 0 ||
        wire_reader_init(&d.control_in, -1, PROTO_HEADER_SIZE + CONTROL_MAX_PAYLOAD, err) != 0) {
        wire_writer_free(&d.notice);
        free(d.conns);
        free(d.queue);
        free(d.workers);
        tokens_free(&d.tokens);
        dispatcher_tables_close();
        return err_set(err, NUMRPC_ENOMEM, "dispatcher tables");
    }
    for (int i = 0; i < d.nworkers_cap; i++) d.workers[i].conn = -1;
    for (int c = 0; c < d.nconns_cap; c++) d.conns[c].tls_fd = -1;
    for (int i = 0; i < LINGER_MAX; i++) d.linger_fd[i] = -1;

    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    d.sig_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    d.epfd = epoll_create1(EPOLL_CLOEXEC);
    fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
    conn_watch(&d, listen_fd, EV_LISTEN, 0);
    conn_watch(&d, d.sig_fd, EV_SIGNAL, 0);
    live_setup(&d);
    for (int i = 0; i < cfg->min_workers && i < d.nworkers_cap; i++) pool_spawn(&d, i);
    publish_gauges(&d, 1);
    /* The HTTP port's thread starts with the signals above blocked (the
     * signalfd takes them) and before the port file says "ready". */
    if (metrics_start(cfg, &d.tokens, err) != 0 || write_port_file(cfg, err) != 0) {
        metrics_stop();
        return -1;
    }

    if (progress_init(d.nworkers_cap) != 0) server_log(cfg, LOG_LEVEL_ERROR, "no memory for progress frames");
    /* Keepalives and deadlines are checked at least this often. */
    int tick_ms = cfg->keepalive_ms / 2 < 200 ? cfg->keepalive_ms / 2 : 200;
    double next_tick = 0;
    for (;;) {
        struct epoll_event evs[64];
        /* A routine's deadline before the next tick wakes the loop for it. */
        double due = pool_next_deadline(&d), frame = pool_next_progress(&d, sock_now());
        if (frame > 0 && (due == 0 || frame < due)) due = frame; /* PROGRESS frames too (progress.c) */
        double left_ms = due > 0 ? (due - sock_now()) * 1000 : tick_ms;
        int wait_ms = left_ms <= 0 ? 0 : left_ms < tick_ms ? (int)left_ms + 1 : tick_ms;
        if (d.tls_looks > 0) wait_ms = 0; /* requests already opened in TLS states wait for no event */
        int n = epoll_wait(d.epfd, evs, 64, wait_ms);
        for (int i = 0; i < n; i++) {
            int kind = (int)(evs[i].data.u64 >> 32), index = (int)(uint32_t)evs[i].data.u64;
            if (kind == EV_LISTEN) accept_all(&d);
            else if (kind == EV_SIGNAL) handle_signals(&d);
            else if (kind == EV_WORKER) pool_message(&d, index);
            else if (kind == EV_WORDS) pool_words(&d, index);
            else if (kind == EV_ADMIN) live_request(&d);
            else if (kind == EV_LINGER) conn_linger(&d, index, 0);
            else if (kind == EV_CONN) conn_event(&d, index, evs[i].events);
        }
        if (d.tls_looks > 0) look_at_buffered(&d);
        pool_schedule(&d);
        atomic_store(&server_stats->load_queued, d.qlen); /* for replies (session.c) */
        if (metajoin_active()) /* load changes reach the metaserver (metajoin.c) */
            metajoin_note_load((int)slots_in_flight(NULL), d.qlen, d.stopping);
        double now = sock_now();
        int tick = now >= next_tick;
        if (tick) {
            pool_tick(&d, now);
            conn_tick(&d, now);
            handles_sweep(server_handles, now); /* leases, dead writers, stray files */
            next_tick = sock_now() + tick_ms / 1000.0;
        } else if (due > 0 && now >= due) {
            pool_tick(&d, now);
        }
        publish_gauges(&d, tick);
        if (d.stopping && (d.nconns_open == 0 || sock_now() > d.drain_until)) break;
    }
    metrics_stop(); /* before the counters it reads are unmapped */
    pool_shutdown(&d);
    pull_broker_stop();
    for (int c = 0; c < d.nconns_cap; c++) {
        if (d.conns[c].state != CONN_FREE) close(d.conns[c].fd);
        connio_state_free(d.conns[c].tls, d.conns[c].tls_fd);
        control_forget(&d.conns[c].ctl);
        transport_bytes_free(&d.conns[c].out);
    }
    for (int i = 0; i < LINGER_MAX; i++)
        if (d.linger_fd[i] >= 0) close(d.linger_fd[i]);
    if (d.admin_fd >= 0) {
        close(d.admin_fd);
        unlink(cfg->admin_socket);
    }
    wire_writer_free(&d.notice);
    wire_reader_free(&d.control_in);
    free(d.mods.items);
    tokens_free(&d.tokens);
    dispatcher_tables_close();
    free(d.conns);
    free(d.queue);
    free(d.workers);
    close(d.epfd);
    close(d.sig_fd);
    return 0;
}
