/* cli.c -- the `numrpc` command for people: list routines, describe one,
 * ping a server, built only on the public API of libnumrpc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_meta.h"
#include "numrpc.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: numrpc COMMAND [args]\n"
            "  list [HOST:PORT]          routines a server offers\n"
            "  describe NAME             a routine's interface in IDL (NAME may be\n"
            "                            numrpc://host:port/name)\n"
            "  describe --c-header MODULE [HOST:PORT]  a typed C header of wrappers\n"
            "  describe --pin NAME...    pin lines of routines, for NUMRPC_PIN_FILE\n"
            "  ping [HOST:PORT] [COUNT]  round trips through a server's worker\n"
            "  bench [--quick] [--out DIR]  the benchmark suite of this build tree\n"
            "  status [--json] HOST:PORT  a server's routines, counters, workers, load\n"
            "  status --metaserver HOST:PORT [--json]  servers, load, throughput and\n"
            "                            prediction errors a metaserver knows\n"
            "  watch [--metaserver HOST:PORT] [--types join,leave,...] [--count N] [--seconds S]\n"
            "                            a metaserver's events, one line each, the type first\n"
            "  status --all [--metaserver HOST:PORT]  every server of the group, a block\n"
            "                            each (the metaserver's, else NUMRPC_SERVER's)\n"
            "  admin --server HOST:PORT [--secret-file F] register MODULE.so | unregister NAME | list\n"
            "                            remote administration (challenge-response)\n"
            "  admin --all [--metaserver HOST:PORT] [--secret-file F] COMMAND...  the same\n"
            "                            on every server of the group, one line each\n"
            "The server is HOST:PORT, else the first one in NUMRPC_SERVER.\n");
}

static int fail(const char *what, int rc)
{
    fprintf(stderr, "numrpc %s: %s: %s (%s)\n", what, numrpc_strerror(rc), numrpc_last_error_detail(),
            numrpc_errname(rc));
    return 1;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int ping(const char *server, int count)
{
    char url[300];
    if (server) snprintf(url, sizeof url, "numrpc://%s/ping", server);
    else snprintf(url, sizeof url, "ping");
    double *t = malloc((size_t)count * sizeof *t);
    if (t == NULL) return 1;
    for (int i = 0; i < count; i++) {
        double t0 = now();
        int rc = numrpc_call(url);
        t[i] = now() - t0;
        if (rc != NUMRPC_OK) {
            free(t);
            return fail("ping", rc);
        }
    }
    qsort(t, (size_t)count, sizeof *t, by_value);
    numrpc_call_info info;
    numrpc_last_call_info(&info);
    printf("%d calls to %s: median %.1f us, min %.1f us, max %.1f us\n", count, info.server,
           t[count / 2] * 1e6, t[0] * 1e6, t[count - 1] * 1e6);
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "list") == 0) {
        char *names = NULL;
        int rc = numrpc_list(argc > 2 ? argv[2] : NULL, &names);
        if (rc != NUMRPC_OK) return fail("list", rc);
        fputs(names, stdout);
        free(names);
        return 0;
    }
    if (strcmp(cmd, "describe") == 0 && argc >= 4 && strcmp(argv[2], "--pin") == 0)
        return cli_pins(argc - 3, argv + 3);
    if (strcmp(cmd, "describe") == 0 && argc >= 4 && strcmp(argv[2], "--c-header") == 0)
        return cli_c_header(argv[3], argc > 4 ? argv[4] : NULL);
    if (strcmp(cmd, "describe") == 0 && argc == 3) {
        char *idl = NULL;
        int rc = numrpc_describe(argv[2], &idl);
        if (rc != NUMRPC_OK) return fail("describe", rc);
        fputs(idl, stdout);
        free(idl);
        return 0;
    }
    if (strcmp(cmd, "ping") == 0) {
        const char *server = NULL;
        int count = 10;
        for (int i = 2; i < argc; i++) {
            if (strchr(argv[i], ':')) server = argv[i];
            else count = atoi(argv[i]);
        }
        return ping(server, count > 0 ? count : 1);
    }
    if (strcmp(cmd, "bench") == 0) return cli_bench(argc - 2, argv + 2);
    if (strcmp(cmd, "status") == 0 && cli_all_wanted(argc - 2, argv + 2)) return cli_status_all(argc - 2, argv + 2);
    if (strcmp(cmd, "status") == 0 && cli_meta_wanted(argc - 2, argv + 2))
        return cli_meta_status(argc - 2, argv + 2); /* cli_meta.c */
    if (strcmp(cmd, "status") == 0) return cli_status(argc - 2, argv + 2);
    if (strcmp(cmd, "admin") == 0 && cli_all_wanted(argc - 2, argv + 2)) return cli_admin_all(argc - 2, argv + 2);
    if (strcmp(cmd, "admin") == 0) return cli_admin(argc - 2, argv + 2);
    if (strcmp(cmd, "watch") == 0) return cli_watch(argc - 2, argv + 2); /* cli_watch.c */
    usage(stderr);
    return 2;
}
