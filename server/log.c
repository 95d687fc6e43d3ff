/* log.c -- every line numrpc-server writes to stderr, one write(2) each:
 * "numrpc-server[pid]: text" filtered by --log-level, and the call line. */
#define _GNU_SOURCE /* sigabbrev_np */
#include "log.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int server_log_enabled(const server_config *cfg, int level)
{
    int max = cfg->quiet ? LOG_LEVEL_ERROR : cfg->log_level;
    return level <= max;
}

/* Where the lines go: stderr, or in a worker the server's stderr kept
 * aside (its own stderr is the pipe its routines' words go to). */
static int log_fd = 2;

void server_log_to(int fd)
{
    log_fd = fd;
}

static void write_line(const char *text)
{
    char line[2048];
    int n = snprintf(line, sizeof line, "numrpc-server[%d]: %s\n", (int)getpid(), text);
    if (n < 0) return;
    if ((size_t)n >= sizeof line) {
        n = sizeof line - 1;
        line[n - 1] = '\n';
    }
    ssize_t k = write(log_fd, line, (size_t)n); /* one write: lines of processes do not mix */
    (void)k;
}

void server_log(const server_config *cfg, int level, const char *fmt, ...)
{
    if (!server_log_enabled(cfg, level)) return;
    char text[1900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    write_line(text);
}

void server_log_call(const server_config *cfg, const char *name, uint64_t bytes_in, uint64_t bytes_out,
                     double seconds, int code, const char *cause, const double *phases)
{
    if (!server_log_enabled(cfg, LOG_LEVEL_INFO)) return;
    char quoted[1100];
    size_t q = 0;
    /* The cause is quoted; its quotes and backslashes escaped, control
     * characters dropped: one line per call, whatever a detail holds. */
    for (const char *c = cause ? cause : ""; *c && q + 3 < sizeof quoted; c++) {
        if (*c == '"' || *c == '\\') quoted[q++] = '\\';
        if ((unsigned char)*c >= 0x20) quoted[q++] = *c;
    }
    quoted[q] = '\0';
    char mpi[96] = "";
    if (phases)
        snprintf(mpi, sizeof mpi, " mpi_scatter=%.6f mpi_compute=%.6f mpi_gather=%.6f", phases[0], phases[1],
                 phases[2]);
    if (code == NUMRPC_OK)
        server_log(cfg, LOG_LEVEL_INFO, "call routine=%s outcome=ok bytes_in=%llu bytes_out=%llu seconds=%.6f%s",
                   name, (unsigned long long)bytes_in, (unsigned long long)bytes_out, seconds, mpi);
    else
        server_log(cfg, LOG_LEVEL_INFO,
                   "call routine=%s outcome=error code=%s bytes_in=%llu bytes_out=%llu seconds=%.6f cause=\"%s\"",
                   name, numrpc_errname(code) + 7, (unsigned long long)bytes_in, (unsigned long long)bytes_out,
                   seconds, quoted);
}

void server_log_tool(const char *tool, const char *fmt, ...)
{
    char line[2048];
    int n = snprintf(line, sizeof line, "%s: ", tool);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof line) vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    ssize_t k = write(2, line, strlen(line));
    (void)k;
}

void server_describe_exit(int status, char *buf, size_t len)
{
    if (WIFSIGNALED(status)) {
        const char *abbrev = sigabbrev_np(WTERMSIG(status));
        snprintf(buf, len, "SIG%s", abbrev ? abbrev : "?");
    } else {
        snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
    }
}
