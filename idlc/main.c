/* main.c -- the numrpc-idlc command line: compile an IDL file to stub C, to
 * a loadable module (via cc), or dump its descriptors for checking. */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ast.h"
#include "codegen.h"
#include "sema.h"

#ifndef IDLC_SOURCE_INCLUDE
#define IDLC_SOURCE_INCLUDE ""
#endif
#ifndef IDLC_INSTALL_INCLUDE
#define IDLC_INSTALL_INCLUDE "/usr/local/include/numrpc"
#endif
#ifndef IDLC_BINDIR
#define IDLC_BINDIR "/usr/local/bin"
#endif
#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "?"
#endif

extern char **environ;

typedef enum action { ACT_C, ACT_DUMP, ACT_BLOB, ACT_MODULE } action;

typedef struct options {
    action act;
    const char *input;
    const char *output;
    const char *blob_name;
    const char *cc;
    char **extra; /* after "--" */
    int nextra;
} options;

static void usage(FILE *to)
{
    fprintf(to,
            "usage: numrpc-idlc [-o OUT.c] FILE.idl          write the stub C (stdout without -o)\n"
            "       numrpc-idlc --module -o NAME.so FILE.idl [--cc CC] [-- LINK-ARGS...]\n"
            "       numrpc-idlc --dump FILE.idl             print each descriptor as IDL and its hash\n"
            "       numrpc-idlc --blob NAME FILE.idl        write routine NAME's raw descriptor\n"
            "       numrpc-idlc --help | --version\n");
}

/* Returns 0, 1 for a usage error, or 2 when --help/--version was handled. */
static int parse_args(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->act = ACT_C;
    o->cc = "cc";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_next = i + 1 < argc;
        if (strcmp(a, "--") == 0) {
            o->extra = argv + i + 1;
            o->nextra = argc - i - 1;
            break;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 2;
        } else if (strcmp(a, "--version") == 0) {
            printf("numrpc-idlc %s\n", PACKAGE_VERSION);
            return 2;
        } else if (strcmp(a, "-o") == 0 && has_next) {
            o->output = argv[++i];
        } else if (strcmp(a, "--dump") == 0) {
            o->act = ACT_DUMP;
        } else if (strcmp(a, "--blob") == 0 && has_next) {
            o->act = ACT_BLOB;
            o->blob_name = argv[++i];
        } else if (strcmp(a, "--module") == 0) {
            o->act = ACT_MODULE;
        } else if (strcmp(a, "--cc") == 0 && has_next) {
            o->cc = argv[++i];
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "numrpc-idlc: unknown or incomplete option '%s'\n", a);
            return 1;
        } else if (o->input) {
            fprintf(stderr, "numrpc-idlc: more than one input file ('%s', '%s')\n",
                    o->input, a);
            return 1;
        } else {
            o->input = a;
        }
    }
    if (o->input == NULL) {
        fprintf(stderr, "numrpc-idlc: no input file\n");
        return 1;
    }
    if (o->act == ACT_MODULE && o->output == NULL) {
        fprintf(stderr, "numrpc-idlc: --module needs -o NAME.so\n");
        return 1;
    }
    if (o->nextra && o->act != ACT_MODULE) {
        fprintf(stderr, "numrpc-idlc: link arguments after '--' need --module\n");
        return 1;
    }
    return 0;
}

/* Writes the generated C to path through a temporary file, so that a
 * failure never leaves half a file behind. */
static int write_c_file(const char *path, const sema_unit *unit, const char *input)
{
    size_t n = strlen(path) + 8;
    char *tmp = malloc(n);
    if (tmp == NULL) {
        fprintf(stderr, "numrpc-idlc: out of memory\n");
        return -1;
    }
    snprintf(tmp, n, "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (out == NULL) {
        fprintf(stderr, "numrpc-idlc: cannot create %s: %s\n", tmp, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        free(tmp);
        return -1;
    }
    fchmod(fd, 0644);
    int rc = codegen_emit(out, unit, input);
    if (fclose(out) != 0 && rc == 0) {
        fprintf(stderr, "numrpc-idlc: cannot write %s: %s\n", tmp, strerror(errno));
        rc = -1;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        fprintf(stderr, "numrpc-idlc: cannot rename %s to %s: %s\n", tmp, path,
                strerror(errno));
        rc = -1;
    }
    if (rc != 0) unlink(tmp);
    free(tmp);
    return rc;
}

static int dump_unit(const sema_unit *unit)
{
    for (size_t n = 0; n < unit->count; n++) {
        const iface_t *f = &unit->routines[n].iface;
        uint8_t *blob;
        size_t len;
        iface_t back;
        char *text = NULL;
        err_t err;
        err_clear(&err);
        if (iface_encode(f, &blob, &len, &err) != 0) {
            fprintf(stderr, "numrpc-idlc: cannot encode %s: %s\n", f->name, err.detail);
            return -1;
        }
        int rc = iface_decode(blob, len, &back, &err);
        free(blob);
        if (rc != 0) {
            fprintf(stderr, "numrpc-idlc: %s does not decode: %s\n", f->name, err.detail);
            return -1;
        }
        if (iface_render_idl(&back, &text) != 0) {
            fprintf(stderr, "numrpc-idlc: out of memory\n");
            iface_free(&back);
            return -1;
        }
        printf("%s%shash 0x%016llx\n", n ? "\n" : "", text, (unsigned long long)back.hash);
        free(text);
        iface_free(&back);
    }
    return fflush(stdout) == 0 ? 0 : -1;
}

static int write_blob(const sema_unit *unit, const char *name)
{
    for (size_t n = 0; n < unit->count; n++) {
        const iface_t *f = &unit->routines[n].iface;
        if (strcmp(f->name, name) != 0) continue;
        uint8_t *blob;
        size_t len;
        err_t err;
        err_clear(&err);
        if (iface_encode(f, &blob, &len, &err) != 0) {
            fprintf(stderr, "numrpc-idlc: cannot encode %s: %s\n", f->name, err.detail);
            return -1;
        }
        size_t wrote = fwrite(blob, 1, len, stdout);
        free(blob);
        return wrote == len && fflush(stdout) == 0 ? 0 : -1;
    }
    fprintf(stderr, "numrpc-idlc: no routine '%s' in this file\n", name);
    return -1;
}

/* The directory holding stubmod.h: $NUMRPC_IDLC_INCLUDE, else the installed
 * one when this program is the installed one, else the source tree's. */
static const char *include_dir(void)
{
    const char *env = getenv("NUMRPC_IDLC_INCLUDE");
    if (env && env[0]) return env;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    size_t bin = strlen(IDLC_BINDIR);
    if (n > 0) {
        self[n] = '\0';
        if (strncmp(self, IDLC_BINDIR, bin) == 0 && self[bin] == '/')
            return IDLC_INSTALL_INCLUDE;
    }
    char probe[PATH_MAX];
    struct stat st;
    snprintf(probe, sizeof probe, "%s/stubmod.h", IDLC_SOURCE_INCLUDE);
    if (IDLC_SOURCE_INCLUDE[0] && stat(probe, &st) == 0) return IDLC_SOURCE_INCLUDE;
    return IDLC_INSTALL_INCLUDE;
}

/* Runs argv[0] with argv; returns its exit status or -1. */
static int run(char **argv)
{
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
    if (rc != 0) {
        fprintf(stderr, "numrpc-idlc: cannot run %s: %s\n", argv[0], strerror(rc));
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "numrpc-idlc: waiting for %s: %s\n", argv[0], strerror(errno));
            return -1;
        }
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    fprintf(stderr, "numrpc-idlc: %s was killed by signal %d\n", argv[0], WTERMSIG(status));
    return -1;
}

static int build_module(const options *o, const sema_unit *unit)
{
    char dir[] = "/tmp/numrpc-idlc-XXXXXX";
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "numrpc-idlc: cannot create a temporary directory: %s\n",
                strerror(errno));
        return -1;
    }
    char source[sizeof dir + 16];
    snprintf(source, sizeof source, "%s/stub.c", dir);
    int rc = write_c_file(source, unit, o->input);
    if (rc == 0) {
        char include[PATH_MAX + 2];
        snprintf(include, sizeof include, "-I%s", include_dir());
        char **args = calloc((size_t)o->nextra + 12, sizeof *args);
        if (args == NULL) {
            fprintf(stderr, "numrpc-idlc: out of memory\n");
            rc = -1;
        } else {
            int k = 0;
            args[k++] = (char *)o->cc;
            args[k++] = "-shared";
            args[k++] = "-fPIC";
            args[k++] = "-O2";
            args[k++] = include;
            args[k++] = "-o";
            args[k++] = (char *)o->output;
            args[k++] = source;
            for (int i = 0; i < o->nextra; i++) args[k++] = o->extra[i];
            args[k] = NULL;
            int status = run(args);
            if (status != 0) {
                if (status > 0)
                    fprintf(stderr, "numrpc-idlc: %s failed (exit status %d)\n", o->cc,
                            status);
                rc = -1;
            }
            free(args);
        }
    }
    unlink(source);
    rmdir(dir);
    return rc;
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse_args(argc, argv, &o);
    if (rc != 0) {
        if (rc == 1) usage(stderr);
        return rc == 2 ? 0 : 1;
    }

    ast_file file;
    ast_file_init(&file, o.input);
    if (ast_parse_file(&file) != 0) {
        fprintf(stderr, "numrpc-idlc: cannot read %s: %s\n", o.input, strerror(errno));
        ast_file_free(&file);
        return 1;
    }
    sema_unit unit;
    int errors = sema_check(&file, &unit);
    ast_file_free(&file);
    if (errors != 0) {
        sema_unit_free(&unit);
        return 1;
    }

    switch (o.act) {
    case ACT_C:
        if (o.output) rc = write_c_file(o.output, &unit, o.input);
        else rc = codegen_emit(stdout, &unit, o.input) || fflush(stdout) != 0 ? -1 : 0;
        break;
    case ACT_DUMP: rc = dump_unit(&unit); break;
    case ACT_BLOB: rc = write_blob(&unit, o.blob_name); break;
    case ACT_MODULE: rc = build_module(&o, &unit); break;
    }
    sema_unit_free(&unit);
    return rc == 0 ? 0 : 1;
}
