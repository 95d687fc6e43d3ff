/* worker_sandbox.c -- the workers' confinement as this server's options
 * shape it: which paths they may read or write, secrets kept out, --user. */
#define _GNU_SOURCE
#include "worker_sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpi_job.h"
#include "handle_store.h"
#include "handles.h"
#include "log.h"
#include "sandbox.h"

#define TMP_PREFIX "numrpc-work-"
#define MAX_EXTRA_SECRETS 8

static struct {
    char tmpdir[CONFIG_PATH_MAX + 64];
    pid_t owner; /* the process that made tmpdir (and removes it) */
    int prepared;
    int set_user;
    uid_t uid;
    gid_t gid;
    struct {
        char path[CONFIG_PATH_MAX];
        const char *what;
    } extra[MAX_EXTRA_SECRETS];
    int nextra;
} sb;

void sandbox_add_secret(const char *path, const char *what)
{
    if (path == NULL || path[0] == '\0' || sb.nextra >= MAX_EXTRA_SECRETS) return;
    snprintf(sb.extra[sb.nextra].path, sizeof sb.extra[sb.nextra].path, "%s", path);
    sb.extra[sb.nextra].what = what;
    sb.nextra++;
}

const char *sandbox_worker_tmpdir(void)
{
    return sb.tmpdir;
}

/* --worker-dir's directories, read-write (a secret beneath one stops the
 * server as any other readable path: check_secrets). */
static int add_worker_dirs(const char *list, sandbox_policy *p, err_t *err)
{
    char dir[CONFIG_PATH_MAX];
    for (const char *at = list; *at;) {
        size_t len = strcspn(at, ",");
        if (len > 0 && len < sizeof dir) {
            memcpy(dir, at, len);
            dir[len] = '\0';
            if (sandbox_policy_add(p, dir, SANDBOX_WRITE, "a directory of --worker-dir", err) != 0) return err->code;
        } else if (len >= sizeof dir) {
            return err_set(err, NUMRPC_EINVAL, "--worker-dir: a directory name longer than %zu bytes", sizeof dir - 1);
        }
        at += len;
        if (*at == ',') at++;
    }
    return 0;
}

/* What a worker may reach, from the options. */
static int worker_policy(const server_config *cfg, sandbox_policy *p, err_t *err)
{
    sandbox_policy_init(p);
    p->deny_inet = 1;
    /* A worker connects to nothing but the MPI job's socket (the pull
     * broker's channel comes connected): a routine cannot reach a unix
     * socket by its path, which Landlock does not guard (the admin socket
     * also refuses the server's descendants: admin.c). */
    p->deny_connect = !mpi_job_configured();
    p->scope_signals = 1;
    p->scope_abstract_unix = 1;
    p->set_user = sb.set_user;
    p->uid = sb.uid;
    p->gid = sb.gid;
    if (sandbox_policy_add_system(p, err) != 0) return err->code;
    if (sandbox_policy_add(p, cfg->stubs_dir, SANDBOX_READ, "the stub modules' directory (--stubs)", err) != 0 ||
        sandbox_policy_add(p, cfg->module_dir, SANDBOX_READ, "the registered modules' directory (--module-dir)",
                           err) != 0)
        return err->code;
    /* The handle directory's private part only: never the whole of
     * --handle-dir (/dev/shm by default). */
    if (server_handles != NULL &&
        sandbox_policy_add(p, server_handles->dir, SANDBOX_WRITE, "the handle directory", err) != 0)
        return err->code;
    if (sandbox_policy_add(p, sb.tmpdir, SANDBOX_WRITE, "the workers' temporary directory", err) != 0)
        return err->code;
    return add_worker_dirs(cfg->worker_dirs, p, err);
}

/* The first secret file a worker could reach: 0 (none) or NUMRPC_EINVAL
 * with the file and the path that exposes it. */
static int check_secrets(const server_config *cfg, const sandbox_policy *p, err_t *err)
{
    struct {
        const char *path, *what;
    } secrets[5 + MAX_EXTRA_SECRETS] = {
        {cfg->tls_key, "--tls-key"},
        {cfg->token_file, "--token-file"},
        {cfg->admin_secret_file, "--admin-secret-file"},
        {cfg->peer_token_file, "--peer-token-file"},
        {cfg->config_file, "--config"},
    };
    int n = 5;
    for (int i = 0; i < sb.nextra; i++, n++) {
        secrets[n].path = sb.extra[i].path;
        secrets[n].what = sb.extra[i].what;
    }
    for (int i = 0; i < n; i++) {
        const sandbox_rule *r;
        if (!sandbox_policy_reaches(p, secrets[i].path, &r)) continue;
        return err_set(err, NUMRPC_EINVAL,
                       "%s %s lies beneath %s (%s), which workers may read: a routine could read the secret; "
                       "keep it elsewhere",
                       secrets[i].what, secrets[i].path, r->path, r->why);
    }
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP) rmdir(path);
    else unlink(path);
    return 0;
}

static void remove_tree(const char *dir)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The directories numrpc-work-<pid>-XXXXXX in parent whose server is gone
 * (ours only: the same owner). */
static void remove_stale(const server_config *cfg, const char *parent)
{
    DIR *d = opendir(parent);
    if (d == NULL) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        if (strncmp(e->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) != 0) continue;
        long pid = strtol(e->d_name + strlen(TMP_PREFIX), &end, 10);
        if (pid <= 0 || *end != '-' || strlen(end) != 7) continue;
        char path[CONFIG_PATH_MAX + 320];
        snprintf(path, sizeof path, "%s/%s", parent, e->d_name);
        struct stat st;
        if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
        if (st.st_uid != getuid() && !(sb.set_user && st.st_uid == sb.uid)) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        server_log(cfg, LOG_LEVEL_NOTICE, "removing %s, the workers' files of server process %ld that is gone", path,
                   pid);
        remove_tree(path);
    }
    closedir(d);
}

int sandbox_prepare(const server_config *cfg, err_t *err)
{
    if (sb.prepared) return 0;
    sb.set_user = 0;
    if (cfg->user[0]) {
        if (sandbox_lookup_user(cfg->user, &sb.uid, &sb.gid, err) != 0) return err->code;
        sb.set_user = 1;
    }
    const char *tmp = getenv("TMPDIR");
    if (tmp == NULL || tmp[0] == '\0') tmp = "/tmp";
    remove_stale(cfg, tmp);
    int n = snprintf(sb.tmpdir, sizeof sb.tmpdir, "%s/" TMP_PREFIX "%ld-XXXXXX", tmp, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof sb.tmpdir) return err_set(err, NUMRPC_EINVAL, "TMPDIR %s: too long", tmp);
    if (mkdtemp(sb.tmpdir) == NULL) { /* mode 0700 */
        int e = errno;
        sb.tmpdir[0] = '\0';
        return err_set(err, NUMRPC_ESERVER, "cannot make the workers' temporary directory in %s: %s", tmp,
                       strerror(e));
    }
    sb.owner = getpid();
    sb.prepared = 1;
    if (sb.set_user) {
        /* The user's, so that its workers can write there; the handle
         * directory too (its files are made by the workers). */
        int rc = chown(sb.tmpdir, sb.uid, sb.gid);
        if (rc == 0 && server_handles != NULL) rc = chown(server_handles->dir, sb.uid, sb.gid);
        if (rc != 0) {
            int e = errno;
            sandbox_cleanup();
            return err_set(err, NUMRPC_ESERVER, "--user %s: cannot give it the workers' directories: %s", cfg->user,
                           strerror(e));
        }
    }
    sandbox_policy p;
    if (worker_policy(cfg, &p, err) != 0 || check_secrets(cfg, &p, err) != 0) {
        sandbox_cleanup();
        return err->code;
    }
    if (sandbox_landlock_abi() == 0)
        server_log(cfg, LOG_LEVEL_WARN, "Landlock unavailable: the worker's file access is not confined");
    return 0;
}

void sandbox_cleanup(void)
{
    if (!sb.prepared || sb.owner != getpid()) return;
    if (sb.tmpdir[0]) remove_tree(sb.tmpdir);
    sb.prepared = 0;
}

int sandbox_confine_worker(const server_config *cfg, err_t *err)
{
    if (!sb.prepared)
        return err_set(err, NUMRPC_ESERVER, "worker confinement: sandbox_prepare was not called at start");
    /* Files a call stages (files_call.c) go to the private directory. */
    setenv("TMPDIR", sb.tmpdir, 1);
    sandbox_policy p;
    if (worker_policy(cfg, &p, err) != 0) return err->code;
    err_t exposed;
    if (check_secrets(cfg, &p, &exposed) != 0) /* a configuration reread since start */
        server_log(cfg, LOG_LEVEL_ERROR, "%s", exposed.detail);
    sandbox_status st;
    if (sandbox_apply(&p, &st, err) != 0) return err->code;
    if (st.threads_before > 1)
        server_log(cfg, LOG_LEVEL_WARN,
                   "worker %ld had %d threads when confined: Landlock and the dropped capabilities hold only for "
                   "the thread that confined itself and those it starts",
                   (long)getpid(), st.threads_before);
    server_log(cfg, LOG_LEVEL_DEBUG, "worker %ld confined (Landlock ABI %d%s%s)", (long)getpid(), st.landlock_abi,
               st.blas_threads_ended ? ", OpenBLAS threads restarted" : "", sb.set_user ? ", --user" : "");
    return 0;
}

void sandbox_harden_dispatcher(void)
{
    sandbox_no_dump();
}
