/* spawner.c -- forks the workers from a process that never read a secret:
 * the dispatcher asks over a socket, a worker is born and handed over. */
#define _GNU_SOURCE
#include "spawner.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "pull.h"
#include "sock.h"
#include "worker.h"

/* A request on the spawner's socket: this header (with the worker's
 * descriptors attached), then the configuration, the module list and the
 * rights, as plain bytes: both ends are the same program. */
#define SPAWN_MAGIC 0x6e727370u /* "nrsp" */
#define SPAWN_LIST_MAX 65536u   /* modules or tokens in one request, at most */
#define SPAWN_REPLY_MS 10000    /* the dispatcher waits this long for a pid  */

typedef struct spawn_header {
    uint32_t magic;
    int32_t index;
    int32_t dispatcher; /* pid the worker must end up the child of */
    uint32_t nmods, ntokens;
    int32_t has_pull;
    int32_t has_words; /* a pipe for its stdout and stderr comes last */
} spawn_header;

typedef struct spawn_reply {
    int32_t pid; /* -1: fork failed */
    int32_t errnum;
} spawn_reply;

/* The dispatcher's end (-1: none, or out of step after a failure). */
static int spawner_fd = -1;
static pid_t spawner_pid = -1;

static int write_full(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t k = write(fd, p, len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        len -= (size_t)k;
    }
    return 0;
}

static int read_full(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t k = read(fd, p, len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        len -= (size_t)k;
    }
    return 0;
}

/* The header and its descriptors (fds[] -1 where none came): 1, 0 at the
 * end of the stream, -1 on a malformed request. */
static int recv_header(int sock, spawn_header *h, int fds[3])
{
    ssize_t k = sock_recv_fds(sock, fds, 3, h, sizeof *h);
    if (k == 0) return 0;
    return k == (ssize_t)sizeof *h ? 1 : -1;
}

/* ---- The worker's first steps ---- */

/* In the grandchild: once the middle process has left, the dispatcher (a
 * subreaper) is its parent; then it is the worker of slot index. */
static void become_worker(const spawn_header *h, int ctl_fd, int pull_fd, int words_fd, const server_config *cfg,
                          const module_list *mods, const token_table *rights, worker_slot *slots)
{
    for (int i = 0; getppid() != h->dispatcher; i++) {
        if (i > 100000) _exit(1); /* 5 s: the dispatcher is gone */
        usleep(50);
    }
    server_child_dies_with(h->dispatcher);
    prctl(PR_SET_NAME, "numrpc-server");
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    signal(SIGPIPE, SIG_IGN);
    /* The other workers' slots become read-only for it (slots.h), while
     * their memory files are still open here. */
    if (slots_confine(h->index) != 0) _exit(1);
    /* Only stdio, the control socket (3), the pull channel (4) and the
     * server's stderr for its own log (5): moved out of the way first,
     * since any may arrive as 3, 4 or 5.  Its stdout and stderr become the
     * pipe the dispatcher reads (last_words.h). */
    int ctl = fcntl(ctl_fd, F_DUPFD, 10), pull = pull_fd >= 0 ? fcntl(pull_fd, F_DUPFD, 10) : -1;
    int words = words_fd >= 0 ? fcntl(words_fd, F_DUPFD, 10) : -1, log = words >= 0 ? fcntl(2, F_DUPFD, 10) : -1;
    if (ctl < 0 || (pull_fd >= 0 && pull < 0) || (words_fd >= 0 && (words < 0 || log < 0)) || dup2(ctl, 3) != 3 ||
        (pull >= 0 && dup2(pull, 4) != 4) || (words >= 0 && (dup2(log, 5) != 5 || dup2(words, 1) != 1 || dup2(words, 2) != 2)))
        _exit(1);
    if (pull < 0) close(4);
    close_range(words >= 0 ? 6 : 5, ~0u, 0);
    pull_set_channel(pull_fd >= 0 ? 4 : -1); /* its way to the pull broker */
    if (words >= 0) {
        server_log_to(5);
        /* Unbuffered: a line a routine printed reaches the pipe before a
         * crash, and never waits for a later caller's call to go out. */
        setvbuf(stdout, NULL, _IONBF, 0);
        setenv("GFORTRAN_UNBUFFERED_PRECONNECTED", "y", 1); /* a Fortran runtime loaded from now on */
        worker_words_captured();
    }
    worker_main(cfg, mods, rights, 3, &slots[h->index]);
}

/* Reads the rest of a request into malloc'd buffers (freed by the caller,
 * also on failure). */
static int read_order(int sock, const spawn_header *h, server_config *cfg, module_list *mods, token_table *rights)
{
    if (read_full(sock, cfg, sizeof *cfg) != 0) return -1;
    cfg->bind_addr[sizeof cfg->bind_addr - 1] = '\0';
    mods->count = h->nmods;
    mods->items = h->nmods ? calloc(h->nmods, sizeof *mods->items) : NULL;
    rights->count = h->ntokens;
    rights->items = h->ntokens ? calloc(h->ntokens, sizeof *rights->items) : NULL;
    if ((h->nmods && !mods->items) || (h->ntokens && !rights->items)) return -1;
    if (h->nmods && read_full(sock, mods->items, h->nmods * sizeof *mods->items) != 0) return -1;
    if (h->ntokens && read_full(sock, rights->items, h->ntokens * sizeof *rights->items) != 0) return -1;
    return 0;
}

/* Closes every descriptor from 3 on but sock and the slots' memory files,
 * which each new worker needs to map the others' slots read-only. */
static void close_all_but(int sock)
{
    int n;
    const int *keep = slots_fds(&n);
    for (int fd = 3; fd < 65536;) {
        int next = sock >= fd ? sock : 65536; /* the lowest kept descriptor at or after fd */
        for (int i = 0; i < n; i++)
            if (keep[i] >= fd && keep[i] < next) next = keep[i];
        if (next > fd) close_range((unsigned)fd, next == 65536 ? ~0u : (unsigned)next - 1, 0);
        if (next == 65536) break;
        fd = next + 1;
    }
}

/* The spawner's life: one worker per request, until the dispatcher's end
 * closes.  A worker is forked by a middle process that leaves at once, so
 * the worker is handed to the dispatcher (the nearest subreaper). */
static void spawner_main(int sock, worker_slot *slots, int n) __attribute__((noreturn));
static void spawner_main(int sock, worker_slot *slots, int n)
{
    close_all_but(sock); /* the listening socket and the rest are the dispatcher's */
    prctl(PR_SET_NAME, "numrpc-spawner"); /* in ps and top; its workers take the server's name back */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGCHLD, SIG_DFL);
    for (;;) {
        spawn_header h;
        int fds[3];
        int got = recv_header(sock, &h, fds);
        if (got == 0) _exit(0);
        server_config cfg;
        module_list mods = {0};
        token_table rights = {0};
        int ok = got > 0 && h.magic == SPAWN_MAGIC && h.index >= 0 && h.index < n && h.nmods <= SPAWN_LIST_MAX &&
                 h.ntokens <= SPAWN_LIST_MAX && fds[0] >= 0 && (h.has_pull == 0 || fds[1] >= 0) &&
                 (h.has_words == 0 || fds[h.has_pull ? 2 : 1] >= 0);
        if (!ok || read_order(sock, &h, &cfg, &mods, &rights) != 0) _exit(1); /* out of step: the dispatcher says so */
        spawn_reply r = {-1, 0};
        pid_t middle = fork();
        if (middle == 0) {
            pid_t w = fork();
            if (w == 0) {
                close(sock);
                become_worker(&h, fds[0], h.has_pull ? fds[1] : -1, h.has_words ? fds[h.has_pull ? 2 : 1] : -1, &cfg,
                              &mods, &rights, slots);
            }
            r.pid = w;
            r.errnum = w < 0 ? errno : 0;
            _exit(write_full(sock, &r, sizeof r) == 0 ? 0 : 1);
        }
        if (middle < 0) {
            r.errnum = errno;
            if (write_full(sock, &r, sizeof r) != 0) _exit(1);
        } else {
            while (waitpid(middle, NULL, 0) < 0 && errno == EINTR) {
            }
        }
        for (int i = 0; i < 3; i++)
            if (fds[i] >= 0) close(fds[i]);
        free(mods.items);
        free(rights.items);
    }
}

int spawner_start(worker_slot *slots, int n, err_t *err)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return err_set(err, NUMRPC_ESERVER, "the spawner's socket: %s", strerror(errno));
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return err_set(err, NUMRPC_ESERVER, "fork (the spawner): %s", strerror(errno));
    }
    if (pid == 0) {
        server_child_dies_with(parent);
        close(sv[0]);
        spawner_main(sv[1], slots, n);
    }
    close(sv[1]);
    struct timeval tv = {SPAWN_REPLY_MS / 1000, 0};
    setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    spawner_fd = sv[0];
    spawner_pid = pid;
    return 0;
}

int spawner_is(pid_t pid)
{
    return spawner_pid > 0 && pid == spawner_pid;
}

/* The rights: each token with its secret left out. */
static int send_rights(int sock, const token_table *rights)
{
    for (size_t i = 0; rights && i < rights->count; i++) {
        token t = rights->items[i];
        memset(t.secret, 0, sizeof t.secret);
        t.secret_len = 0;
        if (write_full(sock, &t, sizeof t) != 0) return -1;
    }
    return 0;
}

pid_t spawner_spawn(const spawn_order *o, int ctl_fd, int pull_fd, int words_fd, err_t *err)
{
    if (spawner_fd < 0) return err_set(err, NUMRPC_ESERVER, "no spawner: workers cannot be started"), -1;
    spawn_header h = {.magic = SPAWN_MAGIC,
                      .index = o->index,
                      .dispatcher = (int32_t)getpid(),
                      .nmods = (uint32_t)o->mods->count,
                      .ntokens = o->rights ? (uint32_t)o->rights->count : 0,
                      .has_pull = pull_fd >= 0,
                      .has_words = words_fd >= 0};
    int fds[3] = {ctl_fd}, nfds = 1;
    if (pull_fd >= 0) fds[nfds++] = pull_fd;
    if (words_fd >= 0) fds[nfds++] = words_fd;
    spawn_reply r;
    if (h.nmods > SPAWN_LIST_MAX || h.ntokens > SPAWN_LIST_MAX)
        return err_set(err, NUMRPC_ESERVER, "too many modules or tokens to start a worker with"), -1;
    if (sock_send_fds(spawner_fd, fds, nfds, &h, sizeof h) != 0 ||
        write_full(spawner_fd, o->cfg, sizeof *o->cfg) != 0 ||
        (h.nmods && write_full(spawner_fd, o->mods->items, h.nmods * sizeof *o->mods->items) != 0) ||
        send_rights(spawner_fd, o->rights) != 0 || read_full(spawner_fd, &r, sizeof r) != 0) {
        err_set(err, NUMRPC_ESERVER, "the spawner did not answer (%s): no more workers can be started",
                strerror(errno));
        close(spawner_fd); /* out of step */
        spawner_fd = -1;
        return -1;
    }
    if (r.pid < 0) return err_set(err, NUMRPC_ESERVER, "fork (a worker): %s", strerror(r.errnum)), -1;
    return (pid_t)r.pid;
}
