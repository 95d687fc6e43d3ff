/* sandbox.c -- confines a process that runs routines on hostile input:
 * no-new-privs, no capabilities, a seccomp filter (libseccomp), Landlock. */
#define _GNU_SOURCE
#include "sandbox.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <link.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <linux/securebits.h>
#include <pwd.h>
#include <sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
/* What a linux/landlock.h older than the running kernel lacks (Debian 12's
 * knows ABI 2): the rights and fields of ABI 3..6. */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#define NR_LANDLOCK_NET_BIND_TCP (1ULL << 0)
#define NR_LANDLOCK_NET_CONNECT_TCP (1ULL << 1)
#define NR_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define NR_LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
struct nr_landlock_ruleset_attr {
    uint64_t handled_access_fs;  /* ABI 1 */
    uint64_t handled_access_net; /* ABI 4 */
    uint64_t scoped;             /* ABI 6 */
};

void sandbox_policy_init(sandbox_policy *p)
{
    memset(p, 0, sizeof *p);
}

int sandbox_policy_add(sandbox_policy *p, const char *path, int access, const char *why, err_t *err)
{
    if (path == NULL || path[0] == '\0') return 0;
    if (p->nrules >= SANDBOX_MAX_RULES)
        return err_set(err, NUMRPC_EINVAL, "sandbox: more than %d paths", SANDBOX_MAX_RULES);
    sandbox_rule *r = &p->rules[p->nrules];
    int n;
    if (path[0] == '/') {
        n = snprintf(r->path, sizeof r->path, "%s", path);
    } else {
        char cwd[PATH_MAX];
        if (getcwd(cwd, sizeof cwd) == NULL) return err_set(err, NUMRPC_ESERVER, "sandbox: getcwd: %s", strerror(errno));
        n = snprintf(r->path, sizeof r->path, "%s/%s", cwd, path);
    }
    if (n < 0 || (size_t)n >= sizeof r->path) return err_set(err, NUMRPC_EINVAL, "sandbox: path too long: %s", path);
    r->access = access;
    r->why = why ? why : "";
    p->nrules++;
    return 0;
}

int sandbox_policy_add_system(sandbox_policy *p, err_t *err)
{
    /* Libraries and their data; /bin and /sbin for a routine that runs a
     * helper program (it stays confined: the domain and the filter are
     * inherited across execve). */
    static const char *const dirs[] = {"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/opt"};
    /* What glibc (dynamic loader, time zone, locale, name service for a
     * uid's name), OpenBLAS, gfortran and OpenMPI read of /etc: never the
     * whole of /etc, where administrators keep keys. */
    static const char *const etc[] = {
        "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/timezone",
        "/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/host.conf", "/etc/hosts", "/etc/gai.conf",
        "/etc/alternatives", "/etc/openblas", "/etc/openmpi", "/etc/locale.alias", "/etc/default/locale",
        "/etc/os-release", "/etc/mime.types"};
    static const char *const devs[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/urandom", "/dev/random"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (sandbox_policy_add(p, dirs[i], SANDBOX_READ, "the system's libraries", err) != 0) return err->code;
    for (size_t i = 0; i < sizeof etc / sizeof etc[0]; i++)
        if (sandbox_policy_add(p, etc[i], SANDBOX_READ, "the system's configuration", err) != 0) return err->code;
    /* /proc: the process's own maps, status, cpuinfo (other processes'
     * memory, environment and descriptors need ptrace access, which
     * Landlock refuses outside the domain); /sys: the CPU topology. */
    if (sandbox_policy_add(p, "/proc", SANDBOX_READ, "/proc", err) != 0) return err->code;
    if (sandbox_policy_add(p, "/sys", SANDBOX_READ, "/sys", err) != 0) return err->code;
    for (size_t i = 0; i < sizeof devs / sizeof devs[0]; i++)
        if (sandbox_policy_add(p, devs[i], SANDBOX_READ | SANDBOX_WRITE | SANDBOX_DEV, "a device", err) != 0)
            return err->code;
    return 0;
}

int sandbox_policy_reaches(const sandbox_policy *p, const char *file, const sandbox_rule **rule)
{
    char real[PATH_MAX];
    if (file == NULL || file[0] == '\0' || realpath(file, real) == NULL) return 0;
    for (int i = 0; i < p->nrules; i++) {
        char base[PATH_MAX];
        if (realpath(p->rules[i].path, base) == NULL) continue;
        size_t n = strlen(base);
        if (strcmp(base, "/") == 0 || (strncmp(real, base, n) == 0 && (real[n] == '\0' || real[n] == '/'))) {
            if (rule) *rule = &p->rules[i];
            return 1;
        }
    }
    return 0;
}

int sandbox_lookup_user(const char *name, uid_t *uid, gid_t *gid, err_t *err)
{
    struct passwd pw, *found = NULL;
    char buf[16384];
    char *end;
    unsigned long n = strtoul(name, &end, 10);
    int rc = *name && *end == '\0' ? getpwuid_r((uid_t)n, &pw, buf, sizeof buf, &found)
                                   : getpwnam_r(name, &pw, buf, sizeof buf, &found);
    if (rc != 0 || found == NULL)
        return err_set(err, NUMRPC_EINVAL, "--user %s: no such user%s%s", name, rc ? ": " : "", rc ? strerror(rc) : "");
    *uid = pw.pw_uid;
    *gid = pw.pw_gid;
    return 0;
}

int sandbox_thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    if (d == NULL) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

int sandbox_no_dump(void)
{
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

/* ---- Capabilities ---- */

static int drop_capabilities(const sandbox_policy *p, err_t *err)
{
    /* The bounding set (needs CAP_SETPCAP, so before the user changes):
     * no execve can bring a capability back. */
    for (int cap = 0; cap < 64; cap++) {
        if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) < 0) break; /* beyond the kernel's last */
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EPERM)
            return err_set(err, NUMRPC_ESERVER, "sandbox: dropping capability %d from the bounding set: %s", cap,
                           strerror(errno));
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
        return err_set(err, NUMRPC_ESERVER, "sandbox: clearing ambient capabilities: %s", strerror(errno));
    /* Root as a user name gives nothing back either (best effort: needs
     * CAP_SETPCAP). */
    prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
                                 SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED, 0, 0, 0);
    if (p->set_user) {
        if (setgroups(1, &p->gid) != 0 || setresgid(p->gid, p->gid, p->gid) != 0)
            return err_set(err, NUMRPC_ESERVER, "sandbox: setgid %u: %s", (unsigned)p->gid, strerror(errno));
        if (setresuid(p->uid, p->uid, p->uid) != 0)
            return err_set(err, NUMRPC_ESERVER, "sandbox: setuid %u: %s", (unsigned)p->uid, strerror(errno));
        uid_t r, e, s;
        if (getresuid(&r, &e, &s) != 0 || r != p->uid || e != p->uid || s != p->uid)
            return err_set(err, NUMRPC_ESERVER, "sandbox: still not uid %u", (unsigned)p->uid);
    }
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
    memset(d, 0, sizeof d);
    if (syscall(SYS_capset, &h, d) != 0)
        return err_set(err, NUMRPC_ESERVER, "sandbox: capset: %s", strerror(errno));
    memset(d, 0xff, sizeof d);
    if (syscall(SYS_capget, &h, d) != 0 || d[0].effective || d[0].permitted || d[0].inheritable || d[1].effective ||
        d[1].permitted || d[1].inheritable)
        return err_set(err, NUMRPC_ESERVER, "sandbox: capabilities remain after capset");
    return 0;
}

/* ---- Landlock ---- */

int sandbox_landlock_abi(void)
{
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : (int)abi;
}

#define FS_READ (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define FS_WRITE                                                                                              \
    (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |        \
     LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |               \
     LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER |                  \
     LANDLOCK_ACCESS_FS_TRUNCATE)
#define FS_FILE_ONLY                                                                                          \
    (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |             \
     LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

/* Every file system right ABI abi knows: all of them are handled (denied
 * unless a rule grants them). */
static uint64_t fs_handled(int abi)
{
    uint64_t all = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1; /* ABI 1 */
    if (abi >= 2) all |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3) all |= LANDLOCK_ACCESS_FS_TRUNCATE;
    if (abi >= 5) all |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
    return all;
}

static int apply_landlock(const sandbox_policy *p, int abi, err_t *err)
{
    /* The size tells the kernel which fields this caller knows: an older
     * kernel refuses a larger one (E2BIG). */
    struct nr_landlock_ruleset_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.handled_access_fs = fs_handled(abi);
    size_t size = sizeof attr.handled_access_fs;
    if (abi >= 4) {
        if (p->deny_inet) attr.handled_access_net = NR_LANDLOCK_NET_BIND_TCP | NR_LANDLOCK_NET_CONNECT_TCP;
        size = offsetof(struct nr_landlock_ruleset_attr, scoped);
    }
    if (abi >= 6) {
        attr.scoped = (p->scope_signals ? NR_LANDLOCK_SCOPE_SIGNAL : 0) |
                      (p->scope_abstract_unix ? NR_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET : 0);
        size = sizeof attr;
    }
    int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (rs < 0) return err_set(err, NUMRPC_ESERVER, "sandbox: landlock_create_ruleset (ABI %d): %s", abi, strerror(errno));
    for (int i = 0; i < p->nrules; i++) {
        const sandbox_rule *r = &p->rules[i];
        int fd = open(r->path, O_PATH | O_CLOEXEC);
        if (fd < 0) continue; /* not on this machine: nothing to grant */
        struct stat st;
        if (fstat(fd, &st) != 0) {
            close(fd);
            continue;
        }
        uint64_t want = 0;
        if (r->access & SANDBOX_READ) want |= FS_READ;
        if (r->access & SANDBOX_WRITE) want |= FS_READ | FS_WRITE;
        if (r->access & SANDBOX_DEV) want |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
        if (!S_ISDIR(st.st_mode)) want &= FS_FILE_ONLY;
        want &= attr.handled_access_fs;
        struct landlock_path_beneath_attr pb = {.allowed_access = want, .parent_fd = fd};
        long rc = syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
        int e = errno;
        close(fd);
        if (rc != 0) {
            close(rs);
            return err_set(err, NUMRPC_ESERVER, "sandbox: Landlock rule for %s: %s", r->path, strerror(e));
        }
    }
    long rc = syscall(SYS_landlock_restrict_self, rs, 0);
    int e = errno;
    close(rs);
    if (rc != 0) return err_set(err, NUMRPC_ESERVER, "sandbox: landlock_restrict_self: %s", strerror(e));
    return 0;
}

/* ---- seccomp ---- */

/* Denied with EPERM: another process's memory or tracing, the kernel's
 * own surface (modules, BPF, keys, perf, mounts and namespaces), io_uring
 * (its requests are not seen by seccomp), userfaultfd (stalls the kernel
 * at will, a help to exploits), handles to any file by number. */
static const char *const denied[] = {
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "process_madvise",
    "perf_event_open", "bpf", "userfaultfd",
    "mount", "umount", "umount2", "pivot_root", "chroot", "unshare", "setns",
    "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
    "keyctl", "add_key", "request_key",
    "init_module", "finit_module", "delete_module", "create_module", "kexec_load", "kexec_file_load",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog", "vhangup",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "open_by_handle_at", "name_to_handle_at", "lookup_dcookie", "fanotify_init", "nfsservctl", "uselib",
    "iopl", "ioperm", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname",
    "setdomainname", "_sysctl",
};

static int deny(scmp_filter_ctx ctx, const char *name, int errno_value, unsigned n, const struct scmp_arg_cmp *cmp)
{
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) return 0; /* unknown to this libseccomp: no such call here */
    int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(errno_value), nr, n, cmp);
    return rc == -EDOM || rc == -EFAULT ? 0 : rc; /* not on this architecture */
}

static int apply_seccomp(const sandbox_policy *p, err_t *err)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (ctx == NULL) return err_set(err, NUMRPC_ESERVER, "sandbox: seccomp_init failed");
    int rc = 0;
    /* Every thread (OpenBLAS's, OpenMPI's); a call from another
     * architecture's table (int 0x80) is refused, not killed. */
    if (rc == 0) rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
    if (rc == 0) rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM));
    for (size_t i = 0; rc == 0 && i < sizeof denied / sizeof denied[0]; i++) rc = deny(ctx, denied[i], EPERM, 0, NULL);
    /* personality: reading it only (a change could turn off address
     * randomisation for what the process runs next). */
    struct scmp_arg_cmp not_query = SCMP_A0(SCMP_CMP_NE, 0xffffffffu);
    if (rc == 0) rc = deny(ctx, "personality", EPERM, 1, &not_query);
    /* New namespaces by clone: one rule per flag.  clone3 passes its flags
     * in memory a filter cannot read: ENOSYS, so that glibc (2.34+) falls
     * back to clone for its threads. */
    static const unsigned long ns_flags[] = {CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
                                             CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET};
    for (size_t i = 0; rc == 0 && i < sizeof ns_flags / sizeof ns_flags[0]; i++) {
        struct scmp_arg_cmp has = SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]);
        rc = deny(ctx, "clone", EPERM, 1, &has);
    }
    if (rc == 0) rc = deny(ctx, "clone3", ENOSYS, 0, NULL);
    if (p->deny_inet) {
        /* Only AF_UNIX: the worker's control socket, the MPI job's socket. */
        struct scmp_arg_cmp not_unix = SCMP_A0(SCMP_CMP_NE, AF_UNIX);
        if (rc == 0) rc = deny(ctx, "socket", EPERM, 1, &not_unix);
        if (rc == 0) rc = deny(ctx, "socketpair", EPERM, 1, &not_unix);
    }
    if (p->deny_connect) {
        struct scmp_arg_cmp to_address = SCMP_A4(SCMP_CMP_NE, 0);
        if (rc == 0) rc = deny(ctx, "connect", EPERM, 0, NULL);
        if (rc == 0) rc = deny(ctx, "sendto", EPERM, 1, &to_address);
    }
    if (rc == 0) rc = seccomp_load(ctx);
    seccomp_release(ctx);
    if (rc != 0) return err_set(err, NUMRPC_ESERVER, "sandbox: seccomp filter: %s", strerror(rc < 0 ? -rc : rc));
    return 0;
}

/* ---- The whole ---- */

/* dl_iterate_phdr's visit: the first loaded OpenBLAS's path into data. */
static int find_openblas(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    if (info->dlpi_name == NULL || strstr(info->dlpi_name, "libopenblas") == NULL) return 0;
    snprintf(data, PATH_MAX, "%s", info->dlpi_name);
    return 1;
}

/* OpenBLAS (pthreads) starts its pool when it loads, before confinement;
 * ended here, it starts again at the next call, from the confined thread.
 * Stub modules are loaded RTLD_LOCAL: the library is found among those
 * loaded, and its own symbol asked for. */
static int stop_blas_threads(void)
{
    int (*shutdown)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "blas_thread_shutdown_");
    char path[PATH_MAX] = "";
    void *lib = NULL;
    if (shutdown == NULL && dl_iterate_phdr(find_openblas, path) && (lib = dlopen(path, RTLD_LAZY | RTLD_NOLOAD)))
        shutdown = (int (*)(void))dlsym(lib, "blas_thread_shutdown_");
    if (shutdown != NULL) shutdown();
    if (lib != NULL) dlclose(lib); /* the reference RTLD_NOLOAD took: it stays loaded */
    return shutdown != NULL;
}

int sandbox_apply(const sandbox_policy *p, sandbox_status *st, err_t *err)
{
    memset(st, 0, sizeof *st);
    int parts = p->parts ? p->parts : SANDBOX_PART_PRIVS | SANDBOX_PART_SECCOMP | SANDBOX_PART_LANDLOCK;
    if (sandbox_thread_count() > 1) st->blas_threads_ended = stop_blas_threads();
    st->threads_before = sandbox_thread_count();
    /* Landlock wants no-new-privs (or CAP_SYS_ADMIN) whatever the parts. */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return err_set(err, NUMRPC_ESERVER, "sandbox: PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
    if ((parts & SANDBOX_PART_PRIVS) && drop_capabilities(p, err) != 0) return err->code;
    st->landlock_abi = sandbox_landlock_abi();
    if ((parts & SANDBOX_PART_LANDLOCK) && st->landlock_abi > 0 && apply_landlock(p, st->landlock_abi, err) != 0)
        return err->code;
    return (parts & SANDBOX_PART_SECCOMP) ? apply_seccomp(p, err) : 0;
}
