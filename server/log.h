/* log.h -- every line numrpc-server writes to stderr: "numrpc-server[pid]:
 * text", one write(2) each, filtered by --log-level (log.c). */
#ifndef NUMRPC_SERVER_LOG_H
#define NUMRPC_SERVER_LOG_H

#include <stdint.h>

#include "config.h"

/* Writes one line when level is enabled by cfg (--log-level; --quiet keeps
 * errors only).  Before the configuration exists, pass the defaults. */
void server_log(const server_config *cfg, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* This process's lines go to fd instead of stderr (a worker: spawner.c). */
void server_log_to(int fd);
int server_log_enabled(const server_config *cfg, int level);
/* The structured line of one call (level info): routine, bytes, seconds,
 * outcome and, for an error, its code and cause; for a routine of the MPI
 * job, phases holds its scatter, compute and gather seconds (else NULL). */
void server_log_call(const server_config *cfg, const char *name, uint64_t bytes_in, uint64_t bytes_out,
                     double seconds, int code, const char *cause, const double *phases);
/* How a child process ended (a waitpid status), for a log line:
 * "SIGSEGV" or "exit status 3". */
void server_describe_exit(int status, char *buf, size_t len);
/* A command-line tool's message (`numrpc-server admin`): "tool: text",
 * unfiltered. */
void server_log_tool(const char *tool, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
