/* rfile_routines.c -- the library behind rfilemod.idl: sums a remote file's bytes in the
 * worker or in a forked child (as stubs/sdpa_solve.cc), or kills a child mid-read. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "numrpc.h"
#include "stubmod.h"

/* Set by the server when it loads the module (stubmod.h). */
__attribute__((visibility("default"))) const stub_services *numrpc_stub_services;

void rfilemod_sum(numrpc_rfile *data, long *bytes, long *sum);
void rfilemod_sum_forked(numrpc_rfile *data, long *bytes, long *sum);
void rfilemod_child_dies(numrpc_rfile *data, int wait_ms);
void rfilemod_sum_threads(numrpc_rfile *data, int nthreads, long *bytes, long *sum);

/* Reads the whole file in 64 KiB pieces; -1 when a read fails (the server
 * has then set the call's error). */
static int sum_file(numrpc_rfile *data, long out[2])
{
    static unsigned char buf[1 << 16];
    out[0] = out[1] = 0;
    for (uint64_t at = 0; at < data->size;) {
        long k = data->pread(data, buf, sizeof buf, at);
        if (k <= 0) return -1;
        for (long i = 0; i < k; i++) out[1] += buf[i];
        out[0] += k;
        at += (uint64_t)k;
    }
    return 0;
}

void rfilemod_sum(numrpc_rfile *data, long *bytes, long *sum)
{
    long r[2];
    if (sum_file(data, r) != 0) return;
    *bytes = r[0];
    *sum = r[1];
}

void rfilemod_sum_forked(numrpc_rfile *data, long *bytes, long *sum)
{
    int fds[2];
    if (pipe(fds) != 0) {
        numrpc_stub_services->fail(NUMRPC_ESERVER, "rfile_sum_forked: no pipe");
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        long r[2];
        close(fds[0]);
        if (sum_file(data, r) == 0 && write(fds[1], r, sizeof r) != (ssize_t)sizeof r) _exit(2);
        _exit(0);
    }
    close(fds[1]);
    long r[2];
    ssize_t got = -1;
    if (pid > 0) {
        do got = read(fds[0], r, sizeof r);
        while (got < 0 && errno == EINTR);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
        }
    }
    close(fds[0]);
    if (got != (ssize_t)sizeof r) {
        numrpc_stub_services->fail(NUMRPC_EINVAL, "rfile_sum_forked: the child reported no sum");
        return;
    }
    *bytes = r[0];
    *sum = r[1];
}

/* The child asks for the file's last byte (the client is to leave that
 * FILE_READ unanswered) and is killed wait_ms later, waiting for the data. */
void rfilemod_child_dies(numrpc_rfile *data, int wait_ms)
{
    if (data->size == 0 || wait_ms < 0) {
        numrpc_stub_services->fail(NUMRPC_EINVAL, "rfile_child_dies: an empty file or a negative wait");
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        unsigned char last;
        _exit(data->pread(data, &last, 1, data->size - 1) == 1 ? 0 : 2);
    }
    if (pid < 0) {
        numrpc_stub_services->fail(NUMRPC_ESERVER, "rfile_child_dies: no child");
        return;
    }
    struct timespec left = {wait_ms / 1000, (long)(wait_ms % 1000) * 1000000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    numrpc_stub_services->fail(NUMRPC_ESERVER, "rfile_child_dies: the child was killed");
}

/* ---- rfile_sum_threads: readers at once ---- */
#define THREADS_MAX 16
#define THREAD_BLOCK (1u << 20) /* the server's cache block: one exchange each */

typedef struct reader {
    numrpc_rfile *data;
    int index, count;
    long bytes, sum;
    int failed;
} reader;

/* Sums blocks index, index + count, ... of the file, each read in small
 * pieces so that the readers' exchanges overlap. */
static void *read_blocks(void *arg)
{
    reader *r = arg;
    unsigned char buf[4096];
    for (uint64_t block = (uint64_t)r->index * THREAD_BLOCK; block < r->data->size;
         block += (uint64_t)r->count * THREAD_BLOCK) {
        uint64_t end = block + THREAD_BLOCK < r->data->size ? block + THREAD_BLOCK : r->data->size;
        for (uint64_t at = block; at < end;) {
            size_t want = end - at < sizeof buf ? (size_t)(end - at) : sizeof buf;
            long k = r->data->pread(r->data, buf, want, at);
            if (k <= 0) {
                r->failed = 1;
                return NULL;
            }
            for (long i = 0; i < k; i++) r->sum += buf[i];
            r->bytes += k;
            at += (uint64_t)k;
        }
    }
    return NULL;
}

void rfilemod_sum_threads(numrpc_rfile *data, int nthreads, long *bytes, long *sum)
{
    if (nthreads < 1 || nthreads > THREADS_MAX) {
        numrpc_stub_services->fail(NUMRPC_EINVAL, "rfile_sum_threads: nthreads must be 1..16");
        return;
    }
    reader readers[THREADS_MAX] = {{0}};
    pthread_t tids[THREADS_MAX];
    int started = 0;
    for (int t = 0; t < nthreads; t++) {
        readers[t] = (reader){.data = data, .index = t, .count = nthreads};
        if (pthread_create(&tids[t], NULL, read_blocks, &readers[t]) != 0) break;
        started++;
    }
    *bytes = *sum = 0;
    int failed = started < nthreads;
    for (int t = 0; t < started; t++) {
        pthread_join(tids[t], NULL);
        failed |= readers[t].failed;
        *bytes += readers[t].bytes;
        *sum += readers[t].sum;
    }
    if (failed && started < nthreads) numrpc_stub_services->fail(NUMRPC_ESERVER, "rfile_sum_threads: no thread");
}
