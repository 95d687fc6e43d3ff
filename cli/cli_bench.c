/* cli_bench.c -- `numrpc bench`: runs the benchmark suite of the build tree
 * this CLI came from (bench/run_all.sh) with a progress bar and a report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

#ifndef NUMRPC_SOURCE_DIR
#define NUMRPC_SOURCE_DIR "."
#endif
#ifndef NUMRPC_BUILD_DIR
#define NUMRPC_BUILD_DIR "."
#endif

/* The stages run_all.sh announces, in order, with their share of the run. */
static const struct stage {
    const char *marker;
    const char *label;
} stages[] = {
    {"### transfer", "transfer: numrpc vs raw TCP, omniORB, gRPC"},
    {"### seeds", "seeds: LSB and PVM, numrpc vs raw TCP"},
    {"### buffer sweep", "packet x socket buffer x NODELAY sweep"},
    {"### codec", "array codec"},
    {"### Linpack", "Linpack: local, numrpc, omniORB"},
    {"### veth LAN", "veth LAN and 3 Mbit/s WAN (needs root)"},
    {"report:", "report written"},
};
#define NSTAGES (sizeof stages / sizeof stages[0])

static void draw(size_t done, const char *label)
{
    const int width = 30;
    int filled = (int)(done * (size_t)width / NSTAGES);
    fprintf(stderr, "\r[%.*s%*s] %zu/%zu %-45.45s", filled, "##############################",
            width - filled, "", done, NSTAGES, label);
    fflush(stderr);
}

int cli_bench(int argc, char **argv)
{
    const char *out = "bench-out";
    int quick = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) out = argv[++i];
        else {
            fprintf(stderr, "usage: numrpc bench [--quick] [--out DIR]\n");
            return 2;
        }
    }
    char script[4096], log[4096];
    snprintf(script, sizeof script, "%s/bench/run_all.sh", NUMRPC_SOURCE_DIR);
    if (access(script, R_OK) != 0) {
        fprintf(stderr, "numrpc bench: %s not found: run it from the build tree numrpc was "
                        "built in\n", script);
        return 1;
    }
    int fds[2];
    if (pipe(fds) != 0) return 1;
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        if (quick)
            execl("/bin/sh", "sh", script, "--quick", "--out", out, NUMRPC_BUILD_DIR, (char *)NULL);
        else
            execl("/bin/sh", "sh", script, "--out", out, NUMRPC_BUILD_DIR, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    snprintf(log, sizeof log, "%s/run_all.log", out);
    FILE *in = fdopen(fds[0], "r");
    FILE *keep = NULL;
    char line[4096];
    size_t done = 0;
    draw(0, "starting");
    while (in && fgets(line, sizeof line, in)) {
        if (!keep) keep = fopen(log, "w");
        if (keep) fputs(line, keep);
        for (size_t s = done; s < NSTAGES; s++)
            if (strncmp(line, stages[s].marker, strlen(stages[s].marker)) == 0) {
                done = s + 1;
                draw(done - (done < NSTAGES), stages[s].label);
            }
    }
    if (in) fclose(in);
    if (keep) fclose(keep);
    int status;
    waitpid(pid, &status, 0);
    draw(NSTAGES, "done");
    fprintf(stderr, "\n");
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    printf("numrpc bench: %s; report %s/report.md, log %s\n", ok ? "done" : "FAILED", out, log);
    return ok ? 0 : 1;
}
