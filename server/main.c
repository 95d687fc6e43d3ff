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
#include "sock.h"

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
    /* The tokens are read before anything listens (and before workers
     * fork: they inherit them). */
    token_table tokens = {0};
    if (cfg.token_file[0] && tokens_load(cfg.token_file, &tokens, &err) != 0) {
        server_log(&cfg, LOG_LEVEL_ERROR, "%s", err.detail);
        return 2;
    }
    int port = 0;
    int fd = sock_listen(cfg.bind_addr, cfg.port, &port, &err);
    exposure_guard guard = {.tokens_on = tokens.count > 0, .tls_on = 0, .allow_insecure = cfg.allow_insecure};
    if (fd < 0 || exposure_check(fd, cfg.bind_addr, &guard, &err) != 0) {
        server_log(&cfg, LOG_LEVEL_ERROR, "%s", err.detail);
        tokens_free(&tokens);
        return fd < 0 ? 1 : 2;
    }
    cfg.port = port; /* rereading the configuration keeps the socket; the
                      * dispatcher writes --port-file once it is ready */
    printf("numrpc-server listening on %s:%d (%d workers, stubs %s, %s)\n", cfg.bind_addr, port,
           cfg.min_workers, cfg.stubs_dir, tokens.count ? "tokens required" : "no tokens");
    fflush(stdout);
    if (metajoin_start(&cfg, fd, &err) != 0) {
        server_log(&cfg, LOG_LEVEL_ERROR, "%s", err.detail);
        return 1;
    }
    if (dispatcher_run(&cfg, argc, argv, fd, &tokens, &err) != 0) {
        server_log(&cfg, LOG_LEVEL_ERROR, "%s", err.detail);
        return 1;
    }
    return 0;
}
