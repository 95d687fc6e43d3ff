/* mpi_supervisor.c -- the process that keeps the server's MPI job running:
 * starts mpirun, sees it ready, dead or failing, restarts it, stops it. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "mpi_job.h"
#include "sock.h"

#define TICK_MS 100
#define MAX_ARGS 96
#define STOP_GRACE_S 2.0
#define BACKOFF_MAX_S 30.0

typedef struct supervisor {
    const server_config *cfg;
    const mpi_job_options *o;
    mpi_job_state *st;
    char sock[CONFIG_PATH_MAX + 16], serving[CONFIG_PATH_MAX + 16], log[CONFIG_PATH_MAX + 16];
    char dir[CONFIG_PATH_MAX];
    pid_t mpirun;      /* the job's mpirun, or 0            */
    double started;    /* monotonic seconds it was started  */
    double next_start; /* when to start the next one        */
    int stopping_for_abandoned; /* stop_job's reason: an abandoned call */
} supervisor;

static volatile sig_atomic_t stop_requested;

static void on_term(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void set_text(mpi_job_state *st, const char *text)
{
    atomic_fetch_add(&st->seq, 1);
    snprintf(st->text, sizeof st->text, "%s", text);
    atomic_fetch_add(&st->seq, 1);
}

/* The last meaningful lines of mpirun's output (its banners of dashes and
 * blank lines left out), joined by " / ", into out. */
static void log_tail(const char *path, char *out, size_t len)
{
    char buf[8192];
    out[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    off_t size = lseek(fd, 0, SEEK_END);
    off_t from = size > (off_t)sizeof buf - 1 ? size - (off_t)sizeof buf + 1 : 0;
    ssize_t n = pread(fd, buf, sizeof buf - 1, from);
    close(fd);
    if (n <= 0) return;
    buf[n] = '\0';
    const char *lines[8];
    int count = 0;
    for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        while (*line == ' ' || *line == '\t') line++;
        if (strspn(line, "-=* \t\r") == strlen(line)) continue;
        if (count == 8) memmove(lines, lines + 1, sizeof lines[0] * 7), count = 7;
        lines[count++] = line;
    }
    size_t used = 0;
    for (int i = 0; i < count && used + 4 < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s", i ? " / " : "", lines[i]);
}

/* mpirun's argument vector, in argv (strings in store). */
static int job_argv(const supervisor *s, char **argv, char *store, size_t store_len)
{
    const mpi_job_options *o = s->o;
    static char ranks[16], grid[32], block[16], bytes[32], keep[32];
    snprintf(ranks, sizeof ranks, "%d", o->ranks);
    snprintf(grid, sizeof grid, "%dx%d", o->nprow, o->npcol);
    snprintf(block, sizeof block, "%d", o->block);
    snprintf(bytes, sizeof bytes, "%llu", (unsigned long long)s->cfg->max_call_bytes);
    snprintf(keep, sizeof keep, "%llu", (unsigned long long)o->keep_bytes);
    int n = 0;
    argv[n++] = (char *)o->mpirun;
    if (geteuid() == 0) argv[n++] = "--allow-run-as-root";
    argv[n++] = "-np";
    argv[n++] = ranks;
    if (o->hostfile[0]) argv[n++] = "--hostfile", argv[n++] = (char *)o->hostfile;
    if (o->agent[0]) argv[n++] = "--mca", argv[n++] = "plm_rsh_agent", argv[n++] = (char *)o->agent;
    snprintf(store, store_len, "%s", o->args);
    for (char *save = NULL, *w = strtok_r(store, " \t", &save); w && n < MAX_ARGS - 16; w = strtok_r(NULL, " \t", &save))
        argv[n++] = w;
    argv[n++] = (char *)o->engine;
    argv[n++] = "--socket", argv[n++] = (char *)s->sock;
    argv[n++] = "--serving", argv[n++] = (char *)s->serving;
    argv[n++] = "--grid", argv[n++] = grid;
    argv[n++] = "--block", argv[n++] = block;
    argv[n++] = "--max-bytes", argv[n++] = bytes;
    argv[n++] = "--keep-bytes", argv[n++] = keep;
    argv[n] = NULL;
    return n;
}

static void start_job(supervisor *s)
{
    char *argv[MAX_ARGS], store[MPI_JOB_TEXT];
    job_argv(s, argv, store, sizeof store);
    unlink(s->sock);
    int out = open(s->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* mpirun ends its ranks, which die with it */
        if (out >= 0) dup2(out, 1), dup2(out, 2);
        close_range(3, ~0u, 0);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        /* MPI libraries' own allocations are not ours to report. */
        setenv("ASAN_OPTIONS", "detect_leaks=0", 0);
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    if (out >= 0) close(out);
    s->started = sock_now();
    atomic_fetch_add(&s->st->starts, 1);
    if (pid < 0) {
        char why[256];
        snprintf(why, sizeof why, "cannot fork mpirun: %s", strerror(errno));
        set_text(s->st, why);
        atomic_fetch_add(&s->st->failures, 1);
        s->next_start = sock_now() + BACKOFF_MAX_S;
        return;
    }
    s->mpirun = pid;
    atomic_store(&s->st->phase, MPI_JOB_STARTING);
    server_log(s->cfg, LOG_LEVEL_NOTICE, "MPI job starting: mpirun pid %d, %d ranks", (int)pid, s->o->ranks);
}

/* The job ended (status from waitpid), or was stopped (why != NULL). */
static void job_ended(supervisor *s, int status, const char *why)
{
    int was_ready = atomic_load(&s->st->phase) == MPI_JOB_READY;
    char how[64], tail[MPI_JOB_TEXT / 2], text[MPI_JOB_TEXT];
    server_describe_exit(status, how, sizeof how);
    log_tail(s->log, tail, sizeof tail);
    unlink(s->sock);
    /* The worker it served is no one now: a notice read later must not
     * stop the next job for it (nor a dying rank 0 write into that job's file). */
    unlink(s->serving);
    if (why)
        snprintf(text, sizeof text, "the MPI job was stopped: %s", why);
    else if (was_ready)
        snprintf(text, sizeof text, "the MPI job (mpirun pid %d) ended: %s%s%s", (int)s->mpirun, how,
                 tail[0] ? ": " : "", tail);
    else
        snprintf(text, sizeof text, "mpirun could not start the MPI job (%s)%s%s", how, tail[0] ? ": " : "", tail);
    set_text(s->st, text);
    s->mpirun = 0;
    atomic_store(&s->st->phase, MPI_JOB_DOWN);
    atomic_store(&s->st->ended_for_abandoned, why != NULL && s->stopping_for_abandoned);
    atomic_fetch_add(&s->st->ends, 1);
    server_log(s->cfg, was_ready || why ? LOG_LEVEL_NOTICE : LOG_LEVEL_ERROR, "%s", text);
    if (was_ready || why) {
        atomic_store(&s->st->failures, 0);
        s->next_start = sock_now(); /* a job that ran is restarted at once */
        return;
    }
    unsigned failures = atomic_fetch_add(&s->st->failures, 1) + 1;
    double wait = failures < 5 ? (double)(1u << failures) : BACKOFF_MAX_S;
    s->next_start = sock_now() + (wait < BACKOFF_MAX_S ? wait : BACKOFF_MAX_S);
}

/* Sends sig to parent's children (every thread's list in /proc). */
static void signal_children(pid_t parent, int sig)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)parent);
    DIR *tasks = opendir(path);
    for (struct dirent *t; tasks && (t = readdir(tasks)) != NULL;) {
        if (t->d_name[0] == '.') continue;
        char list[96];
        snprintf(list, sizeof list, "/proc/%d/task/%.16s/children", (int)parent, t->d_name);
        FILE *f = fopen(list, "re");
        for (int child; f && fscanf(f, "%d", &child) == 1;)
            if (child > 0) kill((pid_t)child, sig);
        if (f) fclose(f);
    }
    if (tasks) closedir(tasks);
}

/* Stops the job at once: it computes for nobody, or the server stops.  The
 * job stops taking calls; mpirun gets SIGTERM and its children (the local
 * ranks, or the agents that reach the remote ones) SIGKILL -- mpirun alone
 * gives its ranks a second -- and mpirun SIGKILL too if it lingers. */
static void stop_job(supervisor *s, const char *why)
{
    if (s->mpirun <= 0) return;
    int status = 0;
    unlink(s->sock);
    atomic_store(&s->st->phase, MPI_JOB_DOWN);
    kill(s->mpirun, SIGTERM);
    signal_children(s->mpirun, SIGKILL);
    double until = sock_now() + STOP_GRACE_S;
    while (waitpid(s->mpirun, &status, WNOHANG) == 0) {
        if (sock_now() > until) {
            kill(s->mpirun, SIGKILL);
            waitpid(s->mpirun, &status, 0);
            break;
        }
        usleep(10000);
    }
    job_ended(s, status, why);
}

/* The pid of the worker rank 0 serves now (0: none). */
static pid_t serving_pid(const supervisor *s)
{
    char line[32] = "";
    int fd = open(s->serving, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, line, sizeof line - 1);
    close(fd);
    return n > 0 ? (pid_t)atoi(line) : 0;
}

/* Workers the dispatcher saw die during a call on the job. */
static void read_abandoned(supervisor *s, int cmd_fd)
{
    int32_t pid;
    while (read(cmd_fd, &pid, sizeof pid) == (ssize_t)sizeof pid) {
        if (s->mpirun <= 0 || pid <= 0 || serving_pid(s) != pid) continue;
        char why[128];
        snprintf(why, sizeof why, "its call from worker %d was abandoned (cancelled, timed out or crashed)", (int)pid);
        s->stopping_for_abandoned = 1;
        stop_job(s, why);
        s->stopping_for_abandoned = 0;
    }
}

static void watch_job(supervisor *s)
{
    int status;
    if (s->mpirun > 0 && waitpid(s->mpirun, &status, WNOHANG) == s->mpirun) {
        job_ended(s, status, NULL);
        return;
    }
    struct stat st;
    if (atomic_load(&s->st->phase) != MPI_JOB_STARTING) return;
    if (stat(s->sock, &st) == 0) {
        atomic_store(&s->st->phase, MPI_JOB_READY);
        atomic_store(&s->st->failures, 0);
        server_log(s->cfg, LOG_LEVEL_NOTICE, "MPI job ready (%.2f s after mpirun started)", sock_now() - s->started);
    } else if (sock_now() - s->started > s->o->start_seconds) {
        char why[96];
        snprintf(why, sizeof why, "it did not start within %d s (--mpi-start-timeout)", s->o->start_seconds);
        stop_job(s, why);
        atomic_fetch_add(&s->st->failures, 1); /* a start that failed: wait before the next */
        s->next_start = sock_now() + BACKOFF_MAX_S;
    }
}

void mpi_supervisor_main(const server_config *cfg, const mpi_job_options *o, const char *dir, mpi_job_state *st,
                         int cmd_fd)
{
    supervisor s = {.cfg = cfg, .o = o, .st = st};
    snprintf(s.dir, sizeof s.dir, "%s", dir);
    snprintf(s.sock, sizeof s.sock, "%s/engine.sock", dir);
    snprintf(s.serving, sizeof s.serving, "%s/serving", dir);
    snprintf(s.log, sizeof s.log, "%s/mpirun.log", dir);
    signal(SIGTERM, on_term);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    while (!stop_requested) {
        if (s.mpirun <= 0 && sock_now() >= s.next_start) start_job(&s);
        struct pollfd p = {cmd_fd, POLLIN, 0};
        if (poll(&p, 1, TICK_MS) > 0) read_abandoned(&s, cmd_fd);
        if (p.revents & POLLHUP) stop_requested = 1; /* the dispatcher is gone */
        watch_job(&s);
    }
    stop_job(&s, "the server is stopping");
    unlink(s.sock);
    unlink(s.serving);
    unlink(s.log);
    rmdir(s.dir);
    _exit(0);
}
