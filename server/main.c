/* main.c -- numrpc-server's entry: options (config.c), the listening socket,
 * then the dispatcher; or `numrpc-server admin ...` (admin.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin.h"
#include "dispatch.h"
#include "exposure.h"
#include "log.h"
#include "metajoin.h"
#include "mpi_job.h"
#include "pull.h"
#include "sock.h"
#include "spawner.h"
#include "tls.h"
#include "worker_sandbox.h"

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "admin") == 0) return admin_client_main(argc - 1, argv + 1);
    server_config cfg;
    err_t err;
    int help = 0;
    config_defaults(&cfg); /* the log's settings until the options are read */
    if (metajoin_take_options(&argc, argv, &err) != 0) { /* --metaserver: metajoin.c */
        server_log(&cfg, LOG_LEVEL_ERROR, "%s", err.detail);
        return 2;
    }
    if (mpi_job_take_options(&argc, argv, &err) != 0) { /* --mpi-*: mpi_job.c */
        server_log(&cfg, LOG_LEVEL_ERROR, "%s", err.detail);
        return 2;
    }
    if (config_build(&cfg, argc, argv, &help, &err) != 0) {
        config_defaults(&cfg);
        server_log(&cfg, LOG_LEVEL_ERROR, "%s", err.detail);
        config_usage(stderr);
        return 2;
    }
    if (help) {
        config_usage(stdout);
        return 0;
    }
    int port = 0;
    int fd = sock_listen(cfg.bind_addr, cfg.port, &port, &err);
    if (fd < 0) {
        server_log(&cfg, LOG_LEVEL_ERROR, "%s", err.detail);
        return 1;
    }
    cfg.port = port; /* rereading the configuration keeps the socket; the
                      * dispatcher writes --port-file once it is ready */
    /* Everything that runs routines starts before any secret is read: the
     * MPI job, and the spawner that forks every worker (with the tables
     * they share with the dispatcher).  Neither ever holds the TLS key,
     * the tokens' secrets or the admin secret (docs/security.md). */
    worker_slot *slots = NULL;
    sandbox_add_secret(metajoin_token_file(), "--metaserver-token-file");
    if (mpi_job_start(&cfg, fd, &err) != 0 || dispatcher_tables_open(&cfg, &slots, &err) != 0) {
        server_log(&cfg, LOG_LEVEL_ERROR, "%s", err.detail);
        return 1;
    }
    /* The workers' confinement is checked before any starts: a secret file
     * beneath a path they may read stops the server (worker_sandbox.h). */
    if (sandbox_prepare(&cfg, &err) != 0) {
        server_log(&cfg, LOG_LEVEL_ERROR, "%s", err.detail);
        return 2;
    }
    atexit(sandbox_cleanup);
    /* The pull broker reads the credentials a pull needs when it pulls
     * (pull.h), so it too starts before the secrets are read; the spawner,
     * forked after it, closes its control socket. */
    if (pull_broker_start(&cfg, &err) != 0 || spawner_start(slots, cfg.max_workers, &err) != 0) {
        server_log(&cfg, LOG_LEVEL_ERROR, "%s", err.detail);
        return 1;
    }
    sandbox_harden_dispatcher(); /* not dumpable, from now on */
    /* The secrets, read once the spawner is out of reach; before anything
     * is served. */
    token_table tokens = {0};
    if (cfg.token_file[0] && tokens_load(cfg.token_file, &tokens, &err) != 0) {
        server_log(&cfg, LOG_LEVEL_ERROR, "%s", err.detail);
        return 2;
    }
    /* So are the certificates: a bad file stops the server at once. */
    tls_context *tls = NULL;
    if (cfg.tls_cert[0] &&
        (tls = tls_server_context_new(cfg.tls_cert, cfg.tls_key, cfg.tls_client_ca[0] ? cfg.tls_client_ca : NULL,
                                      &err)) == NULL) {
        server_log(&cfg, LOG_LEVEL_ERROR, "%s", err.detail);
        tokens_free(&tokens);
        return 2;
    }
    exposure_guard guard = {.tokens_on = tokens.count > 0, .tls_on = tls != NULL, .allow_insecure = cfg.allow_insecure};
    if (exposure_check(fd, cfg.bind_addr, &guard, &err) != 0) {
        server_log(&cfg, LOG_LEVEL_ERROR, "%s", err.detail);
        tokens_free(&tokens);
        tls_context_free(tls);
        return 2;
    }
    printf("numrpc-server listening on %s:%d (%d workers, stubs %s, %s, %s)\n", cfg.bind_addr, port,
           cfg.min_workers, cfg.stubs_dir, tls == NULL ? "plain TCP" : cfg.tls_client_ca[0] ? "mutual TLS" : "TLS",
           tokens.count ? "tokens required" : "no tokens");
    fflush(stdout);
    if (metajoin_start(&cfg, fd, &err) != 0) {
        server_log(&cfg, LOG_LEVEL_ERROR, "%s", err.detail);
        return 1;
    }
    int rc = dispatcher_run(&cfg, argc, argv, fd, &tokens, tls, &err);
    if (rc != 0) server_log(&cfg, LOG_LEVEL_ERROR, "%s", err.detail);
    tls_context_free(tls);
    return rc != 0 ? 1 : 0;
}
