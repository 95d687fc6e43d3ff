/* cli_group.c -- `numrpc status --all` and `numrpc admin --all`: the same
 * request to every server of a group (a metaserver's, or NUMRPC_SERVER's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_conn.h"
#include "cli_meta.h"


/* The most servers --all reaches (the metaserver's table holds 64). */
#define GROUP_MAX 64

/* The servers --all names: the metaserver's (meta, else
 * NUMRPC_METASERVER), else NUMRPC_SERVER's list.  The count, or a negative
 * code with err set. */
static int group_of(const char *meta, char labels[][CLI_LABEL_MAX], int max, err_t *err)
{
    if (meta == NULL) meta = getenv("NUMRPC_METASERVER");
    if (meta && *meta) return cli_meta_servers(meta, labels, max, err);
    const char *list = getenv("NUMRPC_SERVER");
    int n = 0;
    for (const char *p = list; p && *p && n < max;) {
        size_t len = strcspn(p, ", ");
        if (len > 0 && len < CLI_LABEL_MAX) snprintf(labels[n++], CLI_LABEL_MAX, "%.*s", (int)len, p);
        p += len;
        p += strspn(p, ", ");
    }
    if (n == 0) return err_set(err, NUMRPC_EINVAL, "--all: give --metaserver HOST:PORT, or set NUMRPC_METASERVER or NUMRPC_SERVER");
    return n;
}

/* Parses "--all [--metaserver H:P]" (in any order) out of argv: 1 when
 * --all is there, *meta set; argv keeps what remains (*argc updated). */
static int take_group_flags(int *argc, char **argv, const char **meta)
{
    int all = 0, k = 0;
    for (int i = 0; i < *argc; i++) {
        if (strcmp(argv[i], "--all") == 0) all = 1;
        else if (strcmp(argv[i], "--metaserver") == 0 && i + 1 < *argc) *meta = argv[++i];
        else if (strncmp(argv[i], "--metaserver=", 13) == 0) *meta = argv[i] + 13;
        else argv[k++] = argv[i];
    }
    *argc = k;
    return all;
}

int cli_all_wanted(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--all") == 0) return 1;
    return 0;
}

/* numrpc status --all [--metaserver H:P]: a block per server; 1 when one
 * of them did not answer. */
int cli_status_all(int argc, char **argv)
{
    const char *meta = NULL;
    take_group_flags(&argc, argv, &meta);
    if (argc != 0) {
        fprintf(stderr, "usage: numrpc status --all [--metaserver HOST:PORT]\n");
        return 2;
    }
    static char labels[GROUP_MAX][CLI_LABEL_MAX];
    err_t err;
    int n = group_of(meta, labels, GROUP_MAX, &err), bad = 0;
    if (n < 0) return cli_fail("status", &err);
    for (int i = 0; i < n; i++) {
        msg_status s;
        printf("%s== %s ==\n", i ? "\n" : "", labels[i]);
        if (cli_server_status(labels[i], CLI_CONNECT_MS, CLI_IO_MS, &s, &err) != 0) {
            printf("error: %s: %s (%s)\n", numrpc_strerror(err.code), err.detail, numrpc_errname(err.code));
            bad++;
            continue;
        }
        cli_print_status(labels[i], &s);
        msg_status_free(&s);
    }
    printf("\n%d servers, %d answered\n", n, n - bad);
    return bad ? 1 : 0;
}

/* numrpc admin --all [--metaserver H:P] [--secret-file F] COMMAND: a line
 * per server; 1 when one of them failed. */
int cli_admin_all(int argc, char **argv)
{
    const char *secret_file = getenv("NUMRPC_ADMIN_SECRET_FILE"), *meta = NULL;
    take_group_flags(&argc, argv, &meta);
    int i = 0;
    for (; i + 1 < argc && strcmp(argv[i], "--secret-file") == 0; i += 2) secret_file = argv[i + 1];
    char command[CLI_ADMIN_COMMAND_MAX];
    if (cli_admin_command(argc - i, argv + i, command) != 0) {
        fprintf(stderr, "usage: numrpc admin --all [--metaserver HOST:PORT] [--secret-file FILE] "
                        "register MODULE.so | unregister MODULE | list\n");
        return 2;
    }
    err_t err;
    if (secret_file == NULL) {
        err_set(&err, NUMRPC_EAUTH, "no secret: give --secret-file FILE or set NUMRPC_ADMIN_SECRET_FILE");
        return cli_fail("admin", &err);
    }
    static char labels[GROUP_MAX][CLI_LABEL_MAX];
    int n = group_of(meta, labels, GROUP_MAX, &err), bad = 0;
    if (n < 0) return cli_fail("admin", &err);
    for (int k = 0; k < n; k++) {
        if (cli_remote_admin(labels[k], secret_file, command, 1, &err) == 0) continue;
        printf("%s: error: %s: %s (%s)\n", labels[k], numrpc_strerror(err.code), err.detail, numrpc_errname(err.code));
        bad++;
    }
    printf("%d servers, %d done\n", n, n - bad);
    return bad ? 1 : 0;
}
