// sdpa_solve.cc -- runs one SDPA 7.3 solve in a child process; the
// library's fopen and exit are redirected at link time (--wrap, see docs/sdpa.md).
#include "sdpa_solve.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sdpa_call.h>

// The name readInput is given in remote-file mode; its ".dat-s" ending
// makes SDPA read the sparse format.
static const char rfile_token[] = "numrpc-rfile:problem.dat-s";
static numrpc_rfile *child_rfile;  // the remote file of this child's solve
static int in_child;               // set in the child only
static sdpa_progress_fn progress;  // sdpa_solve_set_progress

void sdpa_solve_set_progress(sdpa_progress_fn fn)
{
    progress = fn;
}

extern "C" FILE *__real_fopen(const char *path, const char *mode);
extern "C" void __real_exit(int status) __attribute__((noreturn));
extern "C" FILE *__wrap_fopen(const char *path, const char *mode);
extern "C" void __wrap_exit(int status) __attribute__((noreturn));

// Every fopen of the library (sdpa_call.o's readInput) comes here: the
// token opens a stream over the remote file, anything else the real file.
extern "C" FILE *__wrap_fopen(const char *path, const char *mode)
{
    if (child_rfile != NULL && path != NULL && strcmp(path, rfile_token) == 0)
        return (FILE *)child_rfile->open_stream(child_rfile);
    return __real_fopen(path, mode);
}

// SDPA (and MUMPS) stop with exit() on bad input, with status 0: in the
// child that becomes a status the parent recognises.
#define SDPA_STOPPED 87
extern "C" void __wrap_exit(int status)
{
    if (!in_child) __real_exit(status);
    fflush(stdout);
    fflush(stderr);
    _exit(SDPA_STOPPED);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void write_all(int fd, const void *p, size_t n)
{
    const char *c = (const char *)p;
    while (n > 0) {
        ssize_t k = write(fd, c, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return;
        c += k;
        n -= (size_t)k;
    }
}

static void write_solution(SDPA &problem, const sdpa_result *r, const char *path)
{
    FILE *fp = __real_fopen(path, "w");
    if (fp == NULL) return;
    fprintf(fp, "phase.value  = %s\n", r->phase_name);
    fprintf(fp, "objValPrimal = %+.16e\nobjValDual   = %+.16e\n", r->primal, r->dual);
    fprintf(fp, "iteration    = %d\n", r->iterations);
    fprintf(fp, "xVec = \n");
    problem.printResultXVec(fp);
    fprintf(fp, "xMat = \n");
    problem.printResultXMat(fp);
    fprintf(fp, "yMat = \n");
    problem.printResultYMat(fp);
    fclose(fp);
}

// ---- The iterations, as SDPA prints them ----
// SDPA writes a line per iteration on its display stream: "it mu thetaP
// thetaD objP objD alphaP alphaD beta".  The child's display is a stream
// that copies every byte to stdout (the caller reads SDPA's last words
// there) and hands each iteration line to the progress function.

struct display_lines {
    char line[512];
    size_t len;
};

static void iteration_line(const char *line)
{
    int it;
    double mu, theta_p, theta_d, obj_p, obj_d;
    char tail;
    if (sscanf(line, "%d %lf %lf %lf %lf %lf %c", &it, &mu, &theta_p, &theta_d, &obj_p, &obj_d, &tail) != 7)
        return;
    // SDPA's relative gap: |objP - objD| / max(1, (|objP| + |objD|) / 2).
    double scale = (fabs(obj_p) + fabs(obj_d)) / 2;
    double gap = fabs(obj_p - obj_d) / (scale > 1 ? scale : 1);
    char words[160];
    snprintf(words, sizeof words, "iteration %d: primal %+.6e dual %+.6e gap %.2e mu %.2e", it, obj_p, obj_d, gap,
             mu);
    progress(-1, words);
}

static ssize_t display_write(void *cookie, const char *buf, size_t n)
{
    display_lines *d = (display_lines *)cookie;
    write_all(STDOUT_FILENO, buf, n);
    for (size_t i = 0; i < n; i++) {
        if (buf[i] != '\n') {
            if (d->len < sizeof d->line - 1) d->line[d->len++] = buf[i];
            continue;
        }
        d->line[d->len] = '\0';
        iteration_line(d->line);
        d->len = 0;
    }
    return (ssize_t)n;
}

// SDPA's display: stdout, or the line-reading stream when someone listens.
static FILE *open_display(display_lines *d)
{
    if (progress == NULL) return stdout;
    cookie_io_functions_t io = {NULL, display_write, NULL, NULL};
    d->len = 0;
    FILE *fp = fopencookie(d, "w", io);
    if (fp == NULL) return stdout;
    setvbuf(fp, NULL, _IOLBF, 0); // a line as soon as it is printed
    return fp;
}

// The child: solve, report the result on fd, exit.
static void run_child(const char *problem_path, const char *param_path, const char *solution_path,
                      int fd) __attribute__((noreturn));
static void run_child(const char *problem_path, const char *param_path, const char *solution_path,
                      int fd)
{
    double t0 = now_seconds();
    sdpa_result r;
    memset(&r, 0, sizeof r);
    SDPA problem;
    static display_lines lines;
    FILE *display = open_display(&lines);
    problem.setDisplay(display);
    problem.setParameterType(SDPA::PARAMETER_DEFAULT);
    if (param_path != NULL && access(param_path, R_OK) == 0)
        problem.readParameter((char *)param_path, stdout);
    // The sparse format (.dat-s) always: staged files have no extension.
    problem.readInput((char *)(problem_path ? problem_path : rfile_token), stdout, SDPA::SPARSE);
    problem.initializeSolve();
    problem.solve();
    r.primal = problem.getPrimalObj();
    r.dual = problem.getDualObj();
    r.phase = (int)problem.getPhaseValue();
    char phase[64] = "";
    problem.getPhaseString(phase);
    snprintf(r.phase_name, sizeof r.phase_name, "%s", phase);
    r.iterations = problem.getIteration();
    r.solve_seconds = problem.getSolveTime();
    if (solution_path != NULL) write_solution(problem, &r, solution_path);
    problem.terminate();
    r.total_seconds = now_seconds() - t0;
    if (display != stdout) fclose(display);
    fflush(stdout);
    write_all(fd, &r, sizeof r);
    _exit(0);
}

// The last line of what SDPA printed before it stopped.
static void last_words(int out_fd, char *msg, size_t size)
{
    char buf[4096];
    off_t end = lseek(out_fd, 0, SEEK_END);
    off_t from = end > (off_t)sizeof buf - 1 ? end - (off_t)sizeof buf + 1 : 0;
    ssize_t n = pread(out_fd, buf, sizeof buf - 1, from);
    if (n <= 0) {
        snprintf(msg, size, "SDPA stopped without a message");
        return;
    }
    buf[n] = '\0';
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) buf[--n] = '\0';
    char *line = strrchr(buf, '\n');
    snprintf(msg, size, "SDPA stopped: %.400s", line ? line + 1 : buf);
}

int sdpa_solve_isolated(const char *problem_path, numrpc_rfile *rf, const char *param_path,
                        const char *solution_path, sdpa_result *out)
{
    memset(out, 0, sizeof *out);
    int pipefd[2] = {-1, -1};
    int out_fd = memfd_create("sdpa-output", MFD_CLOEXEC);
    if (out_fd < 0 || pipe2(pipefd, O_CLOEXEC) != 0) {
        snprintf(out->message, sizeof out->message, "cannot start SDPA: %s", strerror(errno));
        if (out_fd >= 0) close(out_fd);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(SDPA_STOPPED);
        in_child = 1;
        child_rfile = rf;
        close(pipefd[0]);
        dup2(out_fd, STDOUT_FILENO);
        dup2(out_fd, STDERR_FILENO);
        run_child(problem_path, param_path, solution_path, pipefd[1]);
    }
    close(pipefd[1]);
    int rc = -1;
    if (pid < 0) {
        snprintf(out->message, sizeof out->message, "cannot start SDPA: %s", strerror(errno));
    } else {
        sdpa_result r;
        size_t got = 0;
        while (got < sizeof r) {
            ssize_t k = read(pipefd[0], (char *)&r + got, sizeof r - got);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) break;
            got += (size_t)k;
        }
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        if (got == sizeof r && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            *out = r;
            rc = 0;
        } else if (WIFSIGNALED(status)) {
            snprintf(out->message, sizeof out->message, "SDPA was killed by signal %d (%s)",
                     WTERMSIG(status), strsignal(WTERMSIG(status)));
        } else {
            last_words(out_fd, out->message, sizeof out->message);
        }
    }
    close(pipefd[0]);
    close(out_fd);
    return rc;
}
