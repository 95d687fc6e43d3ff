/* sibling.h -- what every benchmark program does with the processes beside
 * it: finds their programs next to its own, and stops them by pid. */
#ifndef NUMRPC_BENCH_SIBLING_H
#define NUMRPC_BENCH_SIBLING_H

#include <sys/types.h>

/* rel resolved against this program's directory (libtool's .libs left out):
 * a malloc'd path the caller frees, or a copy of rel when it cannot tell. */
char *bench_sibling_path(const char *rel);
/* SIGTERM, up to 3 s for it to end, then SIGKILL; reaps it.  pid <= 0: nothing. */
void bench_stop_process(pid_t pid);

#endif
