/* bench_admin.c -- what isolation and live registration cost: how long a
 * crashed worker takes to be replaced, and how long from `admin register`
 * until the new routine answers, beside a warm ping of the same server. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "numrpc.h"
#include "stats.h"

/* One line on the local admin socket; the reply into buf. */
static int admin(const char *sock, const char *line, char *buf, size_t len)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(sock) >= sizeof sa.sun_path) return -1;
    memcpy(sa.sun_path, sock, strlen(sock) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    size_t n = strlen(line);
    if (write(fd, line, n) != (ssize_t)n) return -1;
    size_t got = 0;
    ssize_t k;
    while (got < len - 1 && (k = read(fd, buf + got, len - 1 - got)) > 0) got += (size_t)k;
    buf[got] = '\0';
    close(fd);
    return strncmp(buf, "ok", 2) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: numrpc-bench-admin SERVER_BIN STUB_DIR TEST_MODULE_DIR [ROUNDS [WORKERS]]\n"
                        "STUB_DIR serves faults.so (crash); TEST_MODULE_DIR (absolute) holds live1.so and\n"
                        "live2.so.  With one worker (default) the call after a crash waits for the new one.\n");
        return 2;
    }
    int rounds = argc > 4 ? atoi(argv[4]) : 30;
    if (rounds < 3) rounds = 3;
    const char *workers = argc > 5 ? argv[5] : "1";
    char dir[] = "/tmp/numrpc-bench-admin-XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    char port_file[128], sock[128], mods[128];
    snprintf(port_file, sizeof port_file, "%s/port", dir);
    snprintf(sock, sizeof sock, "%s/admin.sock", dir);
    snprintf(mods, sizeof mods, "%s/modules", dir);
    /* One worker: the call after a crash waits for its replacement; with
     * more, another worker takes it while the replacement starts. */
    pid_t pid = fork();
    if (pid == 0) {
        execl(argv[1], argv[1], "--port", "0", "--bind", "127.0.0.1", "--port-file", port_file, "--stubs", argv[2],
              "--workers", workers, "--max-workers", workers, "--blas-threads", "1", "--admin-socket", sock, "--module-dir",
              mods, "--quiet", (char *)NULL);
        _exit(127);
    }
    int port = 0;
    for (int i = 0; i < 2000 && port == 0; i++) {
        FILE *f = fopen(port_file, "r");
        if (f == NULL || fscanf(f, "%d", &port) != 1) port = 0;
        if (f) fclose(f);
        if (port == 0) usleep(5000);
    }
    int status = 1;
    double *ping = calloc((size_t)rounds * 10, sizeof *ping), *after = calloc((size_t)rounds, sizeof *after),
           *reg = calloc((size_t)rounds, sizeof *reg), *reply = calloc((size_t)rounds, sizeof *reply);
    char addr[64], buf[8192], line[1200];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    numrpc_config cfg = {.servers = addr};
    if (port == 0 || numrpc_init(&cfg) != NUMRPC_OK || !ping || !after || !reg || !reply) goto done;
    for (int i = 0; i < 100; i++) numrpc_call("ping"); /* warm */
    for (int i = 0; i < rounds * 10; i++) {
        double t0 = bench_now();
        if (numrpc_call("ping") != NUMRPC_OK) goto done;
        ping[i] = bench_now() - t0;
    }
    double warm = bench_median(ping, (size_t)(rounds * 10));
    for (int i = 0; i < rounds; i++) {
        if (numrpc_call("crash", 1) != NUMRPC_ECRASHED) goto done;
        double t0 = bench_now();
        if (numrpc_call("ping") != NUMRPC_OK) goto done;
        after[i] = bench_now() - t0 - warm;
    }
    /* Register live1 and live2 in turn: each a new version of module live. */
    for (int i = 0; i < rounds; i++) {
        int want = 1 + i % 2, v = 0;
        snprintf(line, sizeof line, "register %s/live%d.so\n", argv[3], want);
        double t0 = bench_now();
        if (admin(sock, line, buf, sizeof buf) != 0) {
            fprintf(stderr, "numrpc-bench-admin: %s", buf);
            goto done;
        }
        reply[i] = bench_now() - t0;
        for (int k = 0; k < 100000; k++) { /* bounded: until the new version answers */
            int rc = numrpc_call("live_version", &v);
            if (rc == NUMRPC_OK && v == want) break;
        }
        if (v != want) goto done;
        reg[i] = bench_now() - t0;
    }
    printf("%s worker(s); warm ping through a worker (median of %d): %.1f us\n", workers, rounds * 10, warm * 1e6);
    printf("crashed worker replaced: the next call waits %.2f ms more than a warm one (median of %d; target <= 10 ms)\n",
           bench_median(after, (size_t)(rounds)) * 1e3, rounds);
    printf("admin register: reply after %.2f ms, new version callable after %.2f ms (median of %d; target <= 100 ms)\n",
           bench_median(reply, (size_t)(rounds)) * 1e3, bench_median(reg, (size_t)(rounds)) * 1e3, rounds);
    status = 0;
done:
    if (status) fprintf(stderr, "numrpc-bench-admin: failed: %s\n", numrpc_last_error_detail());
    numrpc_finalize();
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    snprintf(buf, sizeof buf, "rm -rf '%s'", dir);
    if (system(buf) != 0) status = 1;
    free(ping);
    free(after);
    free(reg);
    free(reply);
    return status;
}
