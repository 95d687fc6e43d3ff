/* cli_watch.c -- `numrpc watch [--metaserver HOST:PORT] [--types a,b]
 * [--count N] [--seconds S]`: a metaserver's events, one line each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "numrpc.h"

#define WATCH_USAGE "usage: numrpc watch [--metaserver HOST:PORT] [--types join,leave,...] [--count N] [--seconds S]\n"

typedef struct watch_state {
    long left; /* events still to print (-1: no limit) */
} watch_state;

/* One line: the type, host:port, then the rest (the server's name, the
 * module, the detail); stdout flushed at each line. */
static int print_event(const numrpc_event *e, void *arg)
{
    watch_state *w = arg;
    time_t t = (time_t)e->time;
    struct tm tm;
    char when[32] = "";
    if (gmtime_r(&t, &tm)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    printf("%s %s %s.%03dZ name=\"%s\"", e->type, e->server[0] ? e->server : "-", when,
           (int)((e->time - (double)t) * 1000) % 1000, e->name);
    if (e->routine[0]) printf(" module=%s", e->routine);
    printf(" %s\n", e->detail);
    fflush(stdout);
    return w->left > 0 && --w->left == 0;
}

int cli_watch(int argc, char **argv)
{
    const char *where = NULL, *types = NULL;
    double seconds = 0;
    watch_state w = {.left = -1};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (v == NULL) {
            fprintf(stderr, "numrpc watch: %s needs a value (or is unknown)\n" WATCH_USAGE, a);
            return 2;
        }
        i++;
        if (strcmp(a, "--metaserver") == 0) where = v;
        else if (strcmp(a, "--types") == 0) types = v;
        else if (strcmp(a, "--count") == 0 && (w.left = strtol(v, &end, 10)) > 0 && *end == '\0') continue;
        else if (strcmp(a, "--seconds") == 0 && (seconds = strtod(v, &end)) > 0 && *end == '\0' && seconds < 1e9)
            continue;
        else {
            fprintf(stderr, "numrpc watch: unexpected argument \"%s %s\"\n" WATCH_USAGE, a, v);
            return 2;
        }
    }
    int rc = numrpc_watch(where, types, print_event, &w, seconds);
    if (rc != NUMRPC_OK) {
        fprintf(stderr, "numrpc watch: %s: %s (%s)\n", numrpc_strerror(rc), numrpc_last_error_detail(),
                numrpc_errname(rc));
        return 1;
    }
    return 0;
}
