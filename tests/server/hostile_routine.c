/* hostile_routine.c -- the library behind hostile.idl: a routine that has
 * been taken over, probing what worker confinement must refuse. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

void hostile_probe(int target, int k, char **paths, int port, int *result);
void hostile_scan(int k, const int *lens, int nbytes, const char *masked, int *found, double *scanned);
void hostile_keep(int n, const double *a, double *sum);
void hostile_slots(int *result);
void hostile_admin(const char *path, int *result);

#define PATTERN_MASK 0xA5

static int outcome(long rc)
{
    return rc < 0 ? (errno ? errno : EIO) : 0;
}

static int open_outcome(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    close(fd);
    return 0;
}

/* 1 no-new-privs, 2 a seccomp filter, 4 no capability (effective or
 * permitted), from /proc/self/status. */
static int confinement(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL) return -errno;
    char line[256];
    int bits = 0, caps_zero = 1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "NoNewPrivs:", 11) == 0 && atoi(line + 11) == 1) bits |= 1;
        if (strncmp(line, "Seccomp:", 8) == 0 && atoi(line + 8) == 2) bits |= 2;
        if ((strncmp(line, "CapEff:", 7) == 0 || strncmp(line, "CapPrm:", 7) == 0) &&
            strtoull(line + 8, NULL, 16) != 0)
            caps_zero = 0;
    }
    fclose(f);
    return bits | (caps_zero ? 4 : 0);
}

void hostile_probe(int target, int k, char **paths, int port, int *result)
{
    char path[64];
    /* Attaching in a child: when it is allowed, the child's exit detaches
     * (PTRACE_SEIZE never stops the target), so the dispatcher runs on. */
    pid_t tracer = fork();
    if (tracer == 0) _exit(ptrace(PTRACE_SEIZE, (pid_t)target, NULL, NULL) == 0 ? 0 : errno);
    int traced = 0;
    result[0] = tracer > 0 && waitpid(tracer, &traced, 0) == tracer && WIFEXITED(traced) ? WEXITSTATUS(traced) : ECHILD;
    /* The target forked this process's ancestor: its libc lies where ours
     * does, so the address is readable there when nothing refuses. */
    char buf[16];
    struct iovec local = {buf, sizeof buf}, remote = {(void *)&printf, sizeof buf};
    errno = 0;
    result[1] = outcome(process_vm_readv((pid_t)target, &local, 1, &remote, 1, 0));
    snprintf(path, sizeof path, "/proc/%d/mem", target);
    result[2] = open_outcome(path);
    snprintf(path, sizeof path, "/proc/%d/environ", target);
    result[3] = open_outcome(path);
    errno = 0;
    result[4] = outcome(kill((pid_t)target, 0));
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    result[5] = fd < 0 ? errno : 0;
    if (fd >= 0) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        result[6] = outcome(connect(fd, (struct sockaddr *)&a, sizeof a));
        close(fd);
    } else {
        result[6] = result[5];
    }
    char params[120] = {0};
    errno = 0;
    long ring = syscall(__NR_io_uring_setup, 4, params);
    result[7] = outcome(ring);
    if (ring >= 0) close((int)ring);
    /* In a child: a new user namespace would stay with the worker. */
    pid_t c = fork();
    if (c == 0) _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : errno);
    int status = 0;
    result[8] = c > 0 && waitpid(c, &status, 0) == c && WIFEXITED(status) ? WEXITSTATUS(status) : ECHILD;
    result[9] = confinement();
    for (int i = 0; i < k; i++) result[10 + i] = paths[i] ? open_outcome(paths[i]) : EINVAL;
}

/* ---- hostile_scan ---- */

typedef struct range {
    uintptr_t lo, hi;
} range;

/* Places of pattern p (len bytes) in buf[0..n), counting only those that
 * start before limit (the next chunk sees the rest). */
static int count_in(const unsigned char *buf, size_t n, size_t limit, const unsigned char *p, size_t len)
{
    int count = 0;
    const unsigned char *at = buf, *end = buf + n;
    while (at + len <= end) {
        const unsigned char *hit = memmem(at, (size_t)(end - at), p, len);
        if (hit == NULL || (size_t)(hit - buf) >= limit) break;
        count++;
        at = hit + 1;
    }
    return count;
}

#define CHUNK (1u << 20)
#define LARGEST_MAPPING ((uintptr_t)64 << 30) /* AddressSanitizer's shadow: skipped */

/* Reads [lo, hi) of this process through /proc/self/mem (an unreadable
 * page is an error there, not a fault) and counts each pattern. */
static void scan_range(int mem, uintptr_t lo, uintptr_t hi, int k, const int *lens, unsigned char *const *pats,
                       int maxlen, unsigned char *chunk, int *found, double *scanned)
{
    for (uintptr_t at = lo; at < hi; at += CHUNK) {
        size_t want = hi - at < CHUNK ? (size_t)(hi - at) : CHUNK;
        size_t limit = want;
        if (at + want < hi) want += (size_t)maxlen - 1; /* across the next chunk's start */
        if (at + want > hi) want = (size_t)(hi - at);
        ssize_t got = pread(mem, chunk, want, (off_t)at);
        if (got <= 0) continue;
        *scanned += (double)got;
        for (int i = 0; i < k; i++)
            if (lens[i] > 0) found[i] += count_in(chunk, (size_t)got, limit, pats[i], (size_t)lens[i]);
    }
}

void hostile_scan(int k, const int *lens, int nbytes, const char *masked, int *found, double *scanned)
{
    *scanned = 0;
    for (int i = 0; i < k; i++) found[i] = 0;
    /* The patterns and the reading buffer in mappings of their own, left
     * out of the search. */
    size_t plen = (size_t)(nbytes > 0 ? nbytes : 1);
    unsigned char *plain = mmap(NULL, plen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char *chunk = mmap(NULL, CHUNK + 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char **pats = calloc((size_t)k + 1, sizeof *pats);
    int *usable = calloc((size_t)k + 1, sizeof *usable);
    int mem = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
    FILE *maps = fopen("/proc/self/maps", "r");
    if (plain == MAP_FAILED || chunk == MAP_FAILED || pats == NULL || usable == NULL || mem < 0 || maps == NULL) {
        for (int i = 0; i < k; i++) found[i] = -1;
        goto out;
    }
    int maxlen = 1, off = 0;
    for (int i = 0; i < k; i++) {
        if (lens[i] < 0 || lens[i] > 65536 || off + lens[i] > nbytes) {
            found[i] = -1;
            continue;
        }
        pats[i] = plain + off;
        for (int j = 0; j < lens[i]; j++) plain[off + j] = (unsigned char)masked[off + j] ^ PATTERN_MASK;
        off += lens[i];
        if (lens[i] > maxlen) maxlen = lens[i];
    }
    for (int i = 0; i < k; i++) usable[i] = pats[i] ? lens[i] : 0;
    range skip[2] = {{(uintptr_t)plain, (uintptr_t)plain + plen}, {(uintptr_t)chunk, (uintptr_t)chunk + CHUNK + 65536}};
    char line[4096];
    while (fgets(line, sizeof line, maps)) {
        unsigned long lo, hi;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || perms[0] != 'r') continue;
        if (strstr(line, "[vvar") || strstr(line, "[vsyscall]") || hi - lo > LARGEST_MAPPING) continue;
        /* The mapping less the two buffers (merged maps may hold them). */
        uintptr_t cur = lo;
        while (cur < hi) {
            for (int moved = 1; moved;) {
                moved = 0;
                for (int s = 0; s < 2; s++)
                    if (skip[s].lo <= cur && cur < skip[s].hi) {
                        cur = skip[s].hi;
                        moved = 1;
                    }
            }
            if (cur >= hi) break;
            uintptr_t end = hi;
            for (int s = 0; s < 2; s++)
                if (skip[s].lo > cur && skip[s].lo < end) end = skip[s].lo;
            scan_range(mem, cur, end, k, usable, pats, maxlen, chunk, found, scanned);
            cur = end;
        }
    }
out:
    if (maps) fclose(maps);
    if (mem >= 0) close(mem);
    free(pats);
    free(usable);
    /* Nothing of the patterns stays for a later call to find. */
    if (plain != MAP_FAILED) munmap(plain, plen);
    if (chunk != MAP_FAILED) munmap(chunk, CHUNK + 65536);
}

void hostile_keep(int n, const double *a, double *sum)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += a[i];
    *sum = s;
}

/* The workers' slots as this worker maps them (the memfd:numrpc-slot lines
 * of /proc/self/maps): result[0] all of them, result[1] the writable ones,
 * result[2] the read-only ones that mprotect made writable all the same. */
void hostile_slots(int *result)
{
    result[0] = result[1] = result[2] = 0;
    FILE *maps = fopen("/proc/self/maps", "r");
    if (maps == NULL) return;
    char line[512];
    while (fgets(line, sizeof line, maps)) {
        if (strstr(line, "numrpc-slot") == NULL) continue;
        unsigned long lo, hi;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3) continue;
        result[0]++;
        if (perms[1] == 'w') {
            result[1]++;
        } else if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE) == 0) {
            result[2]++;
            mprotect((void *)lo, hi - lo, PROT_READ); /* found out: leave it as it was */
        }
    }
    fclose(maps);
}

/* Asks the server's admin socket at path for its module list, as `numrpc-server
 * admin list` would: result[0] connect's errno (0: connected), result[1] 1
 * when the answer was a refusal ("error ..."), 2 any other answer, 0 none,
 * -errno when nothing could be read (the read's, or the write's). */
void hostile_admin(const char *path, int *result)
{
    result[0] = result[1] = 0;
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) {
        result[0] = errno;
        return;
    }
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        result[0] = errno;
        close(fd);
        return;
    }
    char reply[256] = {0};
    /* The server may refuse before the request is written (EPIPE then):
     * its answer waits in the socket either way. */
    ssize_t sent = write(fd, "list\n", 5);
    int write_errno = sent < 0 ? errno : 0;
    ssize_t k = read(fd, reply, sizeof reply - 1);
    if (k > 0) result[1] = strncmp(reply, "error", 5) == 0 ? 1 : 2;
    else if (k < 0) result[1] = -errno;
    else if (write_errno) result[1] = -write_errno;
    close(fd);
}
