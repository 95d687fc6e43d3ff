/* linpack_demo.c -- numrpc-linpack: the Linpack workload.  Solves A x = b
 * locally with LAPACK and remotely through numrpc, and reports MFLOPS. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_CORBA
#include "corba_client.h"
#endif
#include "linpack_multisolve.h"
#include "linpack_problem.h"
#include "linpack_report.h"
#include "linpack_run.h"

extern int openblas_get_num_threads(void);

#define MAX_SIZES 64

struct options {
    int sizes[MAX_SIZES];
    int nsizes;
    int repeat;
    int warmup; /* untimed runs before the R timed ones */
    int mode; /* a mask of enum mode */
    int rhs;  /* right-hand sides of the multi-solve */
    const char *csv_path;
    int local_only;
    const char *corba_ior; /* --corba: also run the omniORB baseline */
};


static void usage(FILE *out)
{
    fprintf(out,
            "usage: numrpc-linpack [--sizes 100,200,500,1000,2000] "
            "[--repeat R] [--warmup W]\n"
            "                      [--mode MODE[,MODE...]] [--rhs K] "
            "[--csv FILE] [--local-only]\n"
            "                      [--corba IORFILE]\n"
            "Solves a random A x = b with local LAPACK (dgetrf + dgetrs) and on the numrpc\n"
            "server named by NUMRPC_SERVER (host:port) or chosen by NUMRPC_METASERVER, and\n"
            "prints the best of R runs after W untimed ones (default 1: connection,\n"
            "interfaces, pages).  MODE (default linpack):\n"
            "  linpack      one numrpc_call(\"linpack\", ...): A goes out, x comes back\n"
            "  dgefa+dgesl  two calls, each shipping A (out, back, out again)\n"
            "  handles      numrpc_data_put of A, dgefa on the handle (the factors stay on\n"
            "               the server), dgesl with the handle (only b travels), free\n"
            "  multisolve   one put and one dgetrf, then K dgetrs (--rhs K, default 10) each\n"
            "               with its own b; against K one-call linpacks and local dgetrf + K\n"
            "               dgetrs plus one transfer of A (a put of it, timed alone)\n"
            "  both         linpack,dgefa+dgesl      all   every mode above\n"
            "--corba also runs the linpack and dgefa+dgesl solves through the omniORB\n"
            "baseline server whose IOR is in IORFILE (numrpc-corba-server).\n");
}

static int parse_sizes(const char *text, struct options *opt)
{
    opt->nsizes = 0;
    const char *p = text;
    while (*p) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 1 || v > 100000 ||
            (*end != ',' && *end != '\0') || opt->nsizes == MAX_SIZES)
            return -1;
        opt->sizes[opt->nsizes++] = (int)v;
        p = *end == ',' ? end + 1 : end;
    }
    return opt->nsizes > 0 ? 0 : -1;
}

/* A comma-separated list of mode names into a mask; -1 on an unknown name. */
static int parse_modes(const char *text)
{
    static const struct {
        const char *name;
        int mask;
    } names[] = {{"linpack", MODE_LINPACK},   {"dgefa+dgesl", MODE_DGEFA_DGESL},
                 {"handles", MODE_HANDLES},   {"multisolve", MODE_MULTISOLVE},
                 {"both", MODE_BOTH},         {"all", MODE_ALL}};
    int mask = 0;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, ","), i;
        for (i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == len && strncmp(p, names[i].name, len) == 0) break;
        if (i == sizeof names / sizeof names[0]) return -1;
        mask |= names[i].mask;
        p += len;
        if (*p == ',' && *++p == '\0') return -1;
    }
    return mask ? mask : -1;
}

/* An integer option in lo..hi, or -1 with the error on stderr. */
static int parse_count(const char *name, const char *text, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end || errno || v < lo || v > hi) {
        fprintf(stderr, "numrpc-linpack: bad --%s '%s' (want %ld..%ld)\n", name, text, lo, hi);
        return -1;
    }
    return (int)v;
}

static int parse_options(int argc, char **argv, struct options *opt)
{
    static const int default_sizes[] = {100, 200, 500, 1000, 2000};
    memcpy(opt->sizes, default_sizes, sizeof default_sizes);
    opt->nsizes = (int)(sizeof default_sizes / sizeof default_sizes[0]);
    opt->repeat = 3;
    opt->warmup = 1;
    opt->mode = MODE_LINPACK;
    opt->rhs = 10;
    opt->csv_path = NULL;
    opt->local_only = 0;
    opt->corba_ior = NULL;

    static const struct option longopts[] = {
        {"sizes", required_argument, NULL, 's'},
        {"repeat", required_argument, NULL, 'r'},
        {"warmup", required_argument, NULL, 'w'},
        {"mode", required_argument, NULL, 'm'},
        {"rhs", required_argument, NULL, 'k'},
        {"csv", required_argument, NULL, 'c'},
        {"local-only", no_argument, NULL, 'l'},
        {"corba", required_argument, NULL, 'C'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (parse_sizes(optarg, opt) != 0) {
                fprintf(stderr, "numrpc-linpack: bad --sizes '%s' (want "
                                "comma-separated integers 1..100000)\n",
                        optarg);
                return -1;
            }
            break;
        case 'r':
            if ((opt->repeat = parse_count("repeat", optarg, 1, 1000)) < 0) return -1;
            break;
        case 'w':
            if ((opt->warmup = parse_count("warmup", optarg, 0, 10)) < 0) return -1;
            break;
        case 'k':
            if ((opt->rhs = parse_count("rhs", optarg, 1, 100000)) < 0) return -1;
            break;
        case 'm':
            if ((opt->mode = parse_modes(optarg)) < 0) {
                fprintf(stderr, "numrpc-linpack: bad --mode '%s' (want a comma-separated list of "
                                "linpack, dgefa+dgesl, handles, multisolve, both, all)\n",
                        optarg);
                return -1;
            }
            break;
        case 'c':
            opt->csv_path = optarg;
            break;
        case 'l':
            opt->local_only = 1;
            break;
        case 'C':
#ifdef HAVE_CORBA
            opt->corba_ior = optarg;
            break;
#else
            fprintf(stderr, "numrpc-linpack: built without omniORB: no --corba\n");
            return -1;
#endif
        case 'h':
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "numrpc-linpack: unexpected argument '%s'\n",
                argv[optind]);
        usage(stderr);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct options opt;
    if (parse_options(argc, argv, &opt) != 0)
        return 2;

    FILE *csv = NULL;
    if (opt.csv_path) {
        csv = fopen(opt.csv_path, "w");
        if (!csv) {
            fprintf(stderr, "numrpc-linpack: cannot write %s: %s\n",
                    opt.csv_path, strerror(errno));
            return 2;
        }
        report_csv_header(csv);
    }

    const char *server = getenv("NUMRPC_SERVER"), *meta = getenv("NUMRPC_METASERVER");
    char where[300];
    if (meta && *meta) snprintf(where, sizeof where, "chosen per call by the metaserver %s", meta);
    else snprintf(where, sizeof where, "%s", server && *server ? server : "(NUMRPC_SERVER unset)");
    printf("numrpc-linpack: best of %d run(s) after %d warm-up(s); MFLOPS = (2/3 n^3 + 2 n^2) "
           "/ s / 1e6; local OpenBLAS threads %d; server %s\n",
           opt.repeat, opt.warmup, openblas_get_num_threads(), opt.local_only ? "(local only)" : where);
    printf("client lines per solve: local 2 (dgetrf_ + dgetrs_), remote 1 "
           "(numrpc_call(\"linpack\", ...)), 2 (dgefa + dgesl)\nor 4 with a handle (put, dgefa, dgesl, "
           "free; the handles row's time and bytes count all four)\n");
#ifdef HAVE_CORBA
    if (opt.corba_ior) {
        char err[256];
        if (corba_client_open(opt.corba_ior, err, sizeof err) != 0) {
            fprintf(stderr, "numrpc-linpack: %s\n", err);
            return 2;
        }
        printf("CORBA baseline (omniORB): IOR from %s; client lines: 3 to set up the ORB and "
               "the reference, 9 for the linpack call (apps/corba/corba_client.cc)\n",
               opt.corba_ior);
    }
#endif
    /* The single-solve table, unless the multi-solve alone was asked. */
    if (opt.local_only || (opt.mode & ~MODE_MULTISOLVE)) report_header();

    struct row corba_rows[2 * MAX_SIZES], multi_rows[MAX_SIZES];
    int ncorba = 0, nmulti = 0;
    int status = 0;
    for (int s = 0; s < opt.nsizes; s++) {
        struct problem p;
        memset(&p, 0, sizeof p);
        if (problem_init(&p, opt.sizes[s]) != 0) {
            fprintf(stderr, "numrpc-linpack: out of memory for n=%d\n",
                    opt.sizes[s]);
            problem_free(&p);
            status = 1;
            continue;
        }
        double local_s, resid_local;
        if (run_local(&p, opt.warmup, opt.repeat, &local_s, &resid_local) != 0) {
            problem_free(&p);
            status = 1;
            continue;
        }
        if (!(resid_local <= RESIDUAL_LIMIT)) {
            fprintf(stderr, "numrpc-linpack: local residual %g for n=%d is "
                            "too large\n",
                    resid_local, p.n);
            status = 1;
        }

        static const struct {
            int mode;
            const char *name;
        } modes[] = {{MODE_LINPACK, "linpack"},
                     {MODE_DGEFA_DGESL, "dgefa+dgesl"},
                     {MODE_HANDLES, "handles"}};
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            if (!opt.local_only && !(opt.mode & modes[m].mode))
                continue;
            struct row row;
            memset(&row, 0, sizeof row);
            row.n = p.n;
            row.mode = opt.local_only ? "local" : modes[m].name;
            row.local_s = local_s;
            row.resid_local = resid_local;
            if (!opt.local_only) {
                if (run_remote(&p, modes[m].mode, opt.warmup, opt.repeat, &row) != 0) {
                    status = 1;
                } else if (!(row.resid_remote <= RESIDUAL_LIMIT)) {
                    fprintf(stderr, "numrpc-linpack: remote %s residual %g "
                                    "for n=%d is too large\n",
                            modes[m].name, row.resid_remote, p.n);
                    status = 1;
                }
            }
#ifdef HAVE_CORBA
            if (opt.corba_ior && !opt.local_only && modes[m].mode != MODE_HANDLES) {
                if (run_corba(&p, modes[m].mode, opt.warmup, opt.repeat, &row) != 0 ||
                    !(row.resid_corba <= RESIDUAL_LIMIT))
                    status = 1;
                corba_rows[ncorba++] = row;
            }
#endif
            report_row(&row);
            fflush(stdout);
            if (csv)
                report_csv_row(csv, &row);
            if (opt.local_only)
                break; /* one local row per size */
        }
        if ((opt.mode & MODE_MULTISOLVE) && !opt.local_only) {
            struct row row = {.n = p.n, .mode = "multisolve"};
            if (run_multisolve(&p, opt.rhs, opt.warmup, opt.repeat, &row) != 0) {
                status = 1;
            } else {
                if (!(row.resid_remote <= RESIDUAL_LIMIT && row.resid_local <= RESIDUAL_LIMIT)) {
                    fprintf(stderr, "numrpc-linpack: multisolve residual %g (remote), %g (local) for n=%d "
                                    "is too large\n", row.resid_remote, row.resid_local, p.n);
                    status = 1;
                }
                multi_rows[nmulti++] = row;
                if (csv) report_csv_row(csv, &row);
            }
        }
        problem_free(&p);
    }

    if (nmulti > 0) {
        printf("\nmulti-solve, best of %d each: put + dgetrf + K dgetrs + free on a handle (handles_s, "
               "solve_ms the mean\ndgetrs); K one-call linpacks (linpacks_s, faster = linpacks_s / "
               "handles_s); local dgetrf + K\ndgetrs (local_s) plus one transfer of A, a numrpc_data_put "
               "timed alone (transfer_s);\nvs_local = handles_s / loc+xfer_s; MB_moved by the handle's "
               "calls\n", opt.repeat);
        report_multisolve_header();
        for (int i = 0; i < nmulti; i++) report_multisolve_row(&multi_rows[i]);
    }

    if (ncorba > 0) {
        printf("\nnumrpc vs the CORBA baseline (omniORB), best of %d each:\n", opt.repeat);
        report_corba_header();
        for (int i = 0; i < ncorba; i++) report_corba_row(&corba_rows[i]);
#ifdef HAVE_CORBA
        corba_client_close();
#endif
    }

    if (csv && fclose(csv) != 0) {
        fprintf(stderr, "numrpc-linpack: error writing %s\n", opt.csv_path);
        status = 1;
    }
    return status;
}
