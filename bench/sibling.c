/* sibling.c -- what every benchmark program does with the processes beside
 * it: finds their programs next to its own, and stops them by pid. */
#include "sibling.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

char *bench_sibling_path(const char *rel)
{
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) return strdup(rel);
    exe[k] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    size_t l = strlen(exe);
    if (l >= 6 && strcmp(exe + l - 6, "/.libs") == 0) exe[l - 6] = '\0';
    char *out = malloc(strlen(exe) + strlen(rel) + 2);
    if (out) sprintf(out, "%s/%s", exe, rel);
    return out;
}

void bench_stop_process(pid_t pid)
{
    if (pid <= 0) return;
    kill(pid, SIGTERM);
    for (int i = 0; i < 300; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid) return;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}
