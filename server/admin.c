/* admin.c -- local administration of a running server: the Unix socket
 * (mode 0600, same user or root), module copies, and `numrpc-server admin`. */
#define _GNU_SOURCE
#include "admin.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "sock.h"

void admin_default_socket(int port, char *buf, size_t len)
{
    const char *run = getenv("XDG_RUNTIME_DIR");
    struct stat st;
    if (geteuid() == 0 && (stat("/run", &st) == 0)) {
        mkdir("/run/numrpc", 0700);
        snprintf(buf, len, "/run/numrpc/server-%d.sock", port);
    } else if (run && run[0] == '/' && stat(run, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(buf, len, "%s/numrpc-server-%d.sock", run, port);
    } else {
        char dir[64];
        snprintf(dir, sizeof dir, "/tmp/numrpc-%u", (unsigned)geteuid());
        mkdir(dir, 0700);
        snprintf(buf, len, "%s/server-%d.sock", dir, port);
    }
}

static int unix_address(const char *path, struct sockaddr_un *sa, err_t *err)
{
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof sa->sun_path)
        return err_set(err, NUMRPC_EINVAL, "admin socket path too long: %s", path);
    memcpy(sa->sun_path, path, strlen(path) + 1);
    return 0;
}

int admin_listen(const char *path, err_t *err)
{
    struct sockaddr_un sa;
    if (unix_address(path, &sa, err) != 0) return -1;
    /* A directory we do not own could let others swap the socket. */
    char dir[sizeof sa.sun_path];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        struct stat st;
        if (stat(dir, &st) != 0) {
            err_set(err, NUMRPC_ESERVER, "admin socket directory %s: %s", dir, strerror(errno));
            return -1;
        }
        if (st.st_uid != geteuid() && st.st_uid != 0 && !(st.st_mode & S_ISVTX)) {
            err_set(err, NUMRPC_ESERVER, "admin socket directory %s belongs to someone else", dir);
            return -1;
        }
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        err_set(err, NUMRPC_ESERVER, "socket: %s", strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_uid == geteuid()) unlink(path);
    mode_t old = umask(0177);
    int rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
    umask(old);
    if (rc != 0 || chmod(path, 0600) != 0 || listen(fd, 8) != 0) {
        err_set(err, NUMRPC_ESERVER, "admin socket %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

/* True when pid is this process or descends from it: a worker, or what a
 * routine started (a process a routine orphaned comes back to this one,
 * the workers' subreaper).  An administrator's command never does. */
static int descends_from_me(pid_t pid)
{
    pid_t me = getpid();
    for (int depth = 0; pid > 1 && depth < 64; depth++) {
        if (pid == me) return 1;
        char path[64], line[512];
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "r");
        if (f == NULL) return 0;
        char *got = fgets(line, sizeof line, f);
        fclose(f);
        char *close_paren = got ? strrchr(line, ')') : NULL;
        int ppid = 0;
        char state;
        if (close_paren == NULL || sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2) return 0;
        pid = ppid;
    }
    return 0;
}

int admin_read_request(int fd, char *line, size_t len, err_t *err)
{
    struct ucred cred;
    socklen_t cl = sizeof cred;
    line[0] = '\0';
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0)
        return err_set(err, NUMRPC_EAUTH, "cannot learn who is asking");
    if (cred.uid != geteuid() && cred.uid != 0)
        return err_set(err, NUMRPC_EAUTH, "uid %u (pid %d) may not administer a server of uid %u",
                       (unsigned)cred.uid, (int)cred.pid, (unsigned)geteuid());
    /* A worker runs as the server's user (without --user): a routine that
     * reached this socket would pass the uid check. */
    if (descends_from_me(cred.pid))
        return err_set(err, NUMRPC_EAUTH, "pid %d is a worker of this server or was started by one: "
                       "routines may not administer the server", (int)cred.pid);
    sock_set_timeouts(fd, 1000, 1000);
    size_t got = 0;
    while (got < len - 1) {
        ssize_t k = recv(fd, line + got, len - 1 - got, 0);
        if (k <= 0) break;
        got += (size_t)k;
        if (memchr(line, '\n', got)) break;
    }
    line[got] = '\0';
    char *nl = strchr(line, '\n');
    if (nl == NULL) return err_set(err, NUMRPC_EINVAL, "incomplete admin request");
    *nl = '\0';
    return 0;
}

int admin_store_module(const char *src, const char *dir, module_entry *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    if (dir[0] == '\0') return err_set(err, NUMRPC_ESERVER, "no module directory (--module-dir)");
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) return err_set(err, NUMRPC_EINVAL, "cannot open %s: %s", src, strerror(errno));
    struct stat st;
    if (fstat(in, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > (1LL << 30)) {
        close(in);
        return err_set(err, NUMRPC_EINVAL, "%s is not a regular file of a module's size", src);
    }
    uint8_t *bytes = malloc((size_t)st.st_size);
    if (bytes == NULL) {
        close(in);
        return err_set(err, NUMRPC_ENOMEM, "%lld bytes for %s", (long long)st.st_size, src);
    }
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t k = read(in, bytes + got, (size_t)st.st_size - got);
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(in);
    if (got != (size_t)st.st_size) {
        free(bytes);
        return err_set(err, NUMRPC_EINVAL, "cannot read %s", src);
    }
    /* FNV-1a 64 of the bytes names the copy: dlopen of a path already
     * loaded returns the old code, a new name never does. */
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < got; i++) h = (h ^ bytes[i]) * 0x100000001b3ULL;
    mkdir(dir, 0700);
    char tmp[CONFIG_PATH_MAX + 32];
    int n = snprintf(out->path, sizeof out->path, "%s/%016llx.so", dir, (unsigned long long)h);
    snprintf(tmp, sizeof tmp, "%s/.%016llx.%d.tmp", dir, (unsigned long long)h, (int)getpid());
    if (n < 0 || (size_t)n >= sizeof out->path) {
        free(bytes);
        return err_set(err, NUMRPC_EINVAL, "module directory path too long");
    }
    out->hash = h;
    if (access(out->path, R_OK) == 0) { /* the same bytes are there already */
        free(bytes);
        return 0;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int rc = fd < 0 ? -1 : 0;
    for (size_t off = 0; rc == 0 && off < got;) {
        ssize_t k = write(fd, bytes + off, got - off);
        if (k <= 0) rc = -1;
        else off += (size_t)k;
    }
    free(bytes);
    /* Durable before its name appears (and before the journal names it):
     * a crash leaves a whole copy or a temp file removed at start. */
    if (rc == 0 && fsync(fd) != 0) rc = -1;
    if (fd >= 0 && close(fd) != 0) rc = -1;
    if (rc == 0 && rename(tmp, out->path) != 0) rc = -1;
    if (rc != 0) {
        int e = errno;
        unlink(tmp);
        return err_set(err, NUMRPC_ESERVER, "cannot copy %s into %s: %s", src, dir, strerror(e));
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || fsync(dfd) != 0) rc = -1;
    if (dfd >= 0) close(dfd);
    if (rc != 0) return err_set(err, NUMRPC_ESERVER, "fsync of %s: %s", dir, strerror(errno));
    return 0;
}

#define ADMIN_TOOL "numrpc-server admin" /* its messages' prefix */

static void admin_usage(FILE *out)
{
    fprintf(out, "usage: numrpc-server admin [--socket PATH | --port P] register MODULE.so\n"
                 "       numrpc-server admin [--socket PATH | --port P] unregister MODULE\n"
                 "       numrpc-server admin [--socket PATH | --port P] list\n"
                 "       numrpc-server admin [--socket PATH | --port P] reload   (the token file)\n"
                 "The socket defaults to the one of the server on port P (default 7800).\n");
}

int admin_client_main(int argc, char **argv)
{
    char path[CONFIG_PATH_MAX] = "";
    int port = 7800, i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        if (i + 1 >= argc) break;
        if (strcmp(argv[i], "--socket") == 0) snprintf(path, sizeof path, "%s", argv[i + 1]);
        else if (strcmp(argv[i], "--port") == 0) port = atoi(argv[i + 1]);
        else break;
    }
    if (i >= argc) {
        admin_usage(stderr);
        return 2;
    }
    const char *cmd = argv[i];
    char line[CONFIG_PATH_MAX + 64];
    if ((strcmp(cmd, "list") == 0 || strcmp(cmd, "reload") == 0) && i + 1 == argc) {
        snprintf(line, sizeof line, "%s\n", cmd);
    } else if (strcmp(cmd, "register") == 0 && i + 2 == argc) {
        char *abs = realpath(argv[i + 1], NULL);
        if (abs == NULL) {
            server_log_tool(ADMIN_TOOL, "%s: %s\n", argv[i + 1], strerror(errno));
            return 1;
        }
        snprintf(line, sizeof line, "register %s\n", abs);
        free(abs);
    } else if (strcmp(cmd, "unregister") == 0 && i + 2 == argc) {
        snprintf(line, sizeof line, "unregister %s\n", argv[i + 1]);
    } else {
        admin_usage(stderr);
        return 2;
    }
    if (path[0] == '\0') admin_default_socket(port, path, sizeof path);
    err_t err;
    struct sockaddr_un sa;
    if (unix_address(path, &sa, &err) != 0) {
        server_log_tool(ADMIN_TOOL, "%s\n", err.detail);
        return 1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        server_log_tool(ADMIN_TOOL, "cannot reach %s: %s\n", path, strerror(errno));
        if (fd >= 0) close(fd);
        return 1;
    }
    size_t n = strlen(line);
    if (write(fd, line, n) != (ssize_t)n) {
        server_log_tool(ADMIN_TOOL, "cannot send to %s\n", path);
        close(fd);
        return 1;
    }
    char reply[8192];
    size_t got = 0;
    ssize_t k;
    while (got < sizeof reply - 1 && (k = read(fd, reply + got, sizeof reply - 1 - got)) > 0) got += (size_t)k;
    close(fd);
    reply[got] = '\0';
    if (strncmp(reply, "ok", 2) == 0) {
        fputs(reply[2] == ' ' ? reply + 3 : reply + 2, stdout);
        return 0;
    }
    if (got == 0) server_log_tool(ADMIN_TOOL, "no reply from %s\n", path);
    else server_log_tool(ADMIN_TOOL, "%s", strncmp(reply, "error ", 6) == 0 ? reply + 6 : reply);
    return 1;
}
