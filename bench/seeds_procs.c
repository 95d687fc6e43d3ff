/* seeds_procs.c -- starts and stops numrpc-bench-seeds' numrpc-servers (ports
 * chosen ahead for a ring whose members pull from each other), its stubs dir. */
#define _GNU_SOURCE
#include "seeds_procs.h"
#include "sibling.h"

#include <dirent.h>
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

void seeds_stubs_dir_remove(const char *dir)
{
    if (!dir || !dir[0]) return;
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[PATH_MAX];
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.') continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

int seeds_stubs_dir(const char *stubs, const char *benchsink_so, char *dir, size_t cap)
{
    char from[PATH_MAX], to[PATH_MAX], real[PATH_MAX];
    if (!benchsink_so || !realpath(benchsink_so, real)) {
        fprintf(stderr, "numrpc-bench-seeds: no benchsink module at %s (build bench/ first)\n",
                benchsink_so ? benchsink_so : "?");
        return -1;
    }
    snprintf(dir, cap, "/tmp/numrpc-seeds-stubs-XXXXXX");
    DIR *d = mkdtemp(dir) ? opendir(stubs) : NULL;
    if (!d) {
        fprintf(stderr, "numrpc-bench-seeds: stubs dir %s: %s\n", stubs, strerror(errno));
        if (dir[0]) rmdir(dir);
        dir[0] = '\0';
        return -1;
    }
    snprintf(to, sizeof to, "%s/benchsink.so", dir);
    int rc = symlink(real, to);
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l < 4 || strcmp(e->d_name + l - 3, ".so") != 0 || strcmp(e->d_name, "benchsink.so") == 0)
            continue;
        snprintf(from, sizeof from, "%s/%s", stubs, e->d_name);
        snprintf(to, sizeof to, "%s/%s", dir, e->d_name);
        if (realpath(from, real) && symlink(real, to) != 0) rc = -1;
    }
    closedir(d);
    if (rc != 0) {
        fprintf(stderr, "numrpc-bench-seeds: linking modules into %s: %s\n", dir, strerror(errno));
        seeds_stubs_dir_remove(dir);
        dir[0] = '\0';
    }
    return rc;
}

int seeds_free_ports(int *ports, int k)
{
    int fds[16], rc = 0;
    if (k > 16) return -1;
    for (int i = 0; i < k; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof sa;
        if (fds[i] < 0 || bind(fds[i], (struct sockaddr *)&sa, sizeof sa) != 0 ||
            getsockname(fds[i], (struct sockaddr *)&sa, &len) != 0)
            rc = -1;
        ports[i] = ntohs(sa.sin_port);
    }
    for (int i = 0; i < k; i++)
        if (fds[i] >= 0) close(fds[i]);
    return rc;
}

void seeds_pin(int cpu)
{
    if (cpu < 0) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        fprintf(stderr, "numrpc-bench-seeds: sched_setaffinity(%d): %s\n", cpu, strerror(errno));
}

pid_t seeds_spawn_server(const char *bin, const char *stubs, int *port, const char *pull_from, int cpu)
{
    char dir[] = "/tmp/numrpc-seeds-XXXXXX", pfile[PATH_MAX], pstr[16];
    if (!mkdtemp(dir)) return -1;
    snprintf(pfile, sizeof pfile, "%s/port", dir);
    snprintf(pstr, sizeof pstr, "%d", *port);
    const char *argv[] = {bin, "--port", pstr, "--bind", "127.0.0.1", "--stubs", stubs,
                          "--port-file", pfile, "--blas-threads", "1",
                          "--quiet", pull_from ? "--pull-from" : NULL, pull_from, NULL};
    pid_t pid = fork();
    if (pid == 0) {
        seeds_pin(cpu);
        setenv("OPENBLAS_NUM_THREADS", "1", 1);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, 1);
        execv(bin, (char *const *)argv);
        fprintf(stderr, "numrpc-bench-seeds: exec %s: %s\n", bin, strerror(errno));
        _exit(127);
    }
    int got = 0;
    for (int i = 0; pid > 0 && i < 1000 && got <= 0; i++) {
        FILE *f = fopen(pfile, "r");
        if (f) {
            if (fscanf(f, "%d", &got) != 1) got = 0;
            fclose(f);
        }
        if (got > 0 || waitpid(pid, NULL, WNOHANG) == pid) break;
        usleep(10000);
    }
    unlink(pfile);
    rmdir(dir);
    if (got <= 0) {
        fprintf(stderr, "numrpc-bench-seeds: %s did not start on port %d\n", bin, *port);
        bench_stop_process(pid);
        return -1;
    }
    *port = got;
    return pid;
}

