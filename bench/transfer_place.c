/* transfer_place.c -- where numrpc-bench-transfer's peers run: pins processes to
 * CPUs, enters the servers' network namespace, starts and stops the servers. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transfer_opt.h"
#include "transfer_place.h"
#ifdef HAVE_CORBA
#include "corba_client.h"
#endif
#ifdef HAVE_GRPC
#include "grpc_baseline.h"
#endif

void place_pin_self(int cpu)
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

void place_enter_server_netns(void)
{
    if (bench_opt.netns_fd >= 0 && setns(bench_opt.netns_fd, CLONE_NEWNET) != 0)
        fprintf(stderr, "numrpc-bench-transfer: setns: %s\n", strerror(errno));
}

void place_leave_server_netns(void)
{
    if (bench_opt.netns_fd >= 0 && setns(bench_opt.home_netns_fd, CLONE_NEWNET) != 0)
        fprintf(stderr, "numrpc-bench-transfer: setns back: %s\n", strerror(errno));
}

/* Forks and executes args (args[0] a path) pinned to cpu, one BLAS thread,
 * stdout to /dev/null, in the servers' namespace.  Returns the pid or -1. */
static pid_t start_pinned(int cpu, const char *const *args)
{
    pid_t pid = fork();
    if (pid != 0) return pid;
    if (bench_opt.netns_fd >= 0 && setns(bench_opt.netns_fd, CLONE_NEWNET) != 0) _exit(126);
    place_pin_self(cpu);
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

pid_t place_spawn_numrpc_server(int cpu, int *port)
{
    const char *argv[] = {bench_opt.server_bin, "--port", "0", "--bind", bench_opt.host, "--allow-insecure", "--stubs",
                          bench_opt.stubs, "--port-file", "@PORTFILE", "--blas-threads", "1",
                          "--quiet", NULL};
    return spawn_with_port(cpu, argv, port);
}

pid_t place_spawn_delay_proxy(int cpu, int *port)
{
    if (bench_opt.delay_ms <= 0) return 0;
    char to[16], delay[32];
    snprintf(to, sizeof to, "%d", *port);
    snprintf(delay, sizeof delay, "%g", bench_opt.delay_ms);
    const char *argv[] = {bench_opt.proxy_bin, "--port-file", "@PORTFILE", "--to", to,
                          "--delay-ms", delay, NULL};
    return spawn_with_port(cpu, argv, port);
}

#ifdef HAVE_CORBA
/* A port free on the servers' host right now (bound, read, closed), or 0. */
static int pick_free_port(void)
{
    place_enter_server_netns();
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = 0;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    inet_pton(AF_INET, bench_opt.host, &sa.sin_addr);
    socklen_t len = sizeof sa;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    if (fd >= 0) close(fd);
    place_leave_server_netns();
    return port;
}

/* With --delay-ms the ORB listens on a port chosen here, a delay proxy
 * forwards to it, and the IOR names the proxy (endPointPublish). */
pid_t place_spawn_corba_server(int cpu, pid_t *proxy)
{
    char dir[] = "/tmp/numrpc-bench-XXXXXX";
    if (!mkdtemp(dir)) return -1;
    char ior[PATH_MAX], err[256];
    snprintf(ior, sizeof ior, "%s/ior", dir);
    const char *args[] = {bench_opt.corba_bin, "--ior-file", ior, NULL};
    *proxy = 0;
    if (bench_opt.delay_ms > 0) {
        int port = pick_free_port(), via = port;
        *proxy = port > 0 ? place_spawn_delay_proxy(cpu, &via) : -1;
        if (*proxy < 0) {
            rmdir(dir);
            return -1;
        }
        char p[16], pub[96];
        snprintf(p, sizeof p, "%d", port);
        snprintf(pub, sizeof pub, "%s:%d", bench_opt.host, via);
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
pid_t place_spawn_grpc_server(int cpu, pid_t *proxy)
{
    int port = 0;
    const char *argv[] = {bench_opt.grpc_bin, "--port-file", "@PORTFILE", NULL};
    pid_t pid = spawn_with_port(cpu, argv, &port);
    if (pid < 0) return -1;
    *proxy = place_spawn_delay_proxy(cpu, &port);
    if (*proxy < 0 || grpc_baseline_open(port) != 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -1;
    }
    return pid;
}
#endif


