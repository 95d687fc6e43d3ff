/* linpack_demo.c -- numrpc-linpack: the Linpack workload.  Solves A x = b
 * locally with LAPACK and remotely through numrpc, and reports MFLOPS. */
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <numrpc.h>
#ifdef HAVE_CORBA
#include "corba_client.h"
#endif

/* LAPACK from OpenBLAS: the same work the server does. */
extern void dgetrf_(const int *m, const int *n, double *a, const int *lda,
                    int *ipiv, int *info);
extern void dgetrs_(const char *trans, const int *n, const int *nrhs,
                    const double *a, const int *lda, const int *ipiv,
                    double *b, const int *ldb, int *info, size_t trans_len);
extern int openblas_get_num_threads(void);

#define MAX_SIZES 64
#define RESIDUAL_LIMIT 100.0
#define MATRIX_SEED 1325u

enum mode { MODE_LINPACK = 1, MODE_DGEFA_DGESL = 2, MODE_BOTH = 3 };

struct options {
    int sizes[MAX_SIZES];
    int nsizes;
    int repeat;
    int mode;
    const char *csv_path;
    int local_only;
    const char *corba_ior; /* --corba: also run the omniORB baseline */
};

/* One result line of the table / CSV. */
struct row {
    int n;
    const char *mode;
    double local_s, remote_s;
    double send_s, compute_s, receive_s;
    uint64_t bytes;
    double resid_local, resid_remote;
    int remote_ok;
    double corba_s, resid_corba; /* the omniORB baseline, if run */
    int corba_ok;
};

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double linpack_flops(int n)
{
    double dn = (double)n;
    return 2.0 / 3.0 * dn * dn * dn + 2.0 * dn * dn;
}

static double mflops(int n, double seconds)
{
    return seconds > 0.0 ? linpack_flops(n) / seconds / 1e6 : 0.0;
}

/* Deterministic values in [-1, 1) (splitmix64). */
static double next_uniform(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    z ^= z >> 31;
    return 2.0 * ((double)(z >> 11) * 0x1.0p-53) - 1.0;
}

static void fill_problem(double *a, double *b, int n, unsigned seed)
{
    uint64_t state = (uint64_t)seed * UINT64_C(0x2545F4914F6CDD1D) + 1;
    for (size_t k = 0; k < (size_t)n * (size_t)n; k++)
        a[k] = next_uniform(&state);
    for (int i = 0; i < n; i++)
        b[i] = next_uniform(&state);
}

/* ||A x - b||_inf / (||A||_inf ||x||_inf n eps), A n x n with lda = n. */
static double normalised_residual(const double *a, int n, const double *x,
                                  const double *b)
{
    double *r = malloc((size_t)n * sizeof *r);
    double *rowsum = calloc((size_t)n, sizeof *rowsum);
    if (!r || !rowsum) {
        free(r);
        free(rowsum);
        return INFINITY;
    }
    for (int i = 0; i < n; i++)
        r[i] = -b[i];
    for (int j = 0; j < n; j++) {
        const double *col = a + (size_t)j * (size_t)n;
        for (int i = 0; i < n; i++) {
            r[i] += col[i] * x[j];
            rowsum[i] += fabs(col[i]);
        }
    }
    double rmax = 0.0, anorm = 0.0, xmax = 0.0;
    for (int i = 0; i < n; i++) {
        rmax = fmax(rmax, fabs(r[i]));
        anorm = fmax(anorm, rowsum[i]);
        xmax = fmax(xmax, fabs(x[i]));
    }
    free(r);
    free(rowsum);
    double denom = anorm * xmax * (double)n * DBL_EPSILON;
    if (!(rmax == rmax))
        return INFINITY;
    return denom > 0.0 ? rmax / denom : (rmax == 0.0 ? 0.0 : INFINITY);
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: numrpc-linpack [--sizes 100,200,500,1000,2000] "
            "[--repeat R]\n"
            "                      [--mode linpack|dgefa+dgesl|both] "
            "[--csv FILE] [--local-only]\n"
            "                      [--corba IORFILE]\n"
            "Solves a random A x = b with local LAPACK (dgetrf + dgetrs) and "
            "on the\nnumrpc server named by NUMRPC_SERVER (host:port) or chosen by NUMRPC_METASERVER, and "
            "prints the best of R runs.  --corba also runs the same solve through the\n"
            "omniORB baseline server whose IOR is in IORFILE (numrpc-corba-server).\n");
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

static int parse_options(int argc, char **argv, struct options *opt)
{
    static const int default_sizes[] = {100, 200, 500, 1000, 2000};
    memcpy(opt->sizes, default_sizes, sizeof default_sizes);
    opt->nsizes = (int)(sizeof default_sizes / sizeof default_sizes[0]);
    opt->repeat = 3;
    opt->mode = MODE_LINPACK;
    opt->csv_path = NULL;
    opt->local_only = 0;
    opt->corba_ior = NULL;

    static const struct option longopts[] = {
        {"sizes", required_argument, NULL, 's'},
        {"repeat", required_argument, NULL, 'r'},
        {"mode", required_argument, NULL, 'm'},
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
        case 'r': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 1000) {
                fprintf(stderr, "numrpc-linpack: bad --repeat '%s' (want "
                                "1..1000)\n",
                        optarg);
                return -1;
            }
            opt->repeat = (int)v;
            break;
        }
        case 'm':
            if (strcmp(optarg, "linpack") == 0)
                opt->mode = MODE_LINPACK;
            else if (strcmp(optarg, "dgefa+dgesl") == 0)
                opt->mode = MODE_DGEFA_DGESL;
            else if (strcmp(optarg, "both") == 0)
                opt->mode = MODE_BOTH;
            else {
                fprintf(stderr, "numrpc-linpack: bad --mode '%s' (want "
                                "linpack, dgefa+dgesl or both)\n",
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

/* Problem buffers for one size (lda = n). */
struct problem {
    int n;
    double *a0, *b0; /* the original system         */
    double *a, *x;   /* working copies               */
    int *ipvt;
};

static int problem_init(struct problem *p, int n)
{
    size_t nn = (size_t)n * (size_t)n;
    p->n = n;
    p->a0 = malloc(nn * sizeof(double));
    p->a = malloc(nn * sizeof(double));
    p->b0 = malloc((size_t)n * sizeof(double));
    p->x = malloc((size_t)n * sizeof(double));
    p->ipvt = malloc((size_t)n * sizeof(int));
    if (!p->a0 || !p->a || !p->b0 || !p->x || !p->ipvt)
        return -1;
    fill_problem(p->a0, p->b0, n, MATRIX_SEED + (unsigned)n);
    return 0;
}

static void problem_free(struct problem *p)
{
    free(p->a0);
    free(p->a);
    free(p->b0);
    free(p->x);
    free(p->ipvt);
}

static void reset_system(struct problem *p)
{
    memcpy(p->a, p->a0, (size_t)p->n * (size_t)p->n * sizeof(double));
    memcpy(p->x, p->b0, (size_t)p->n * sizeof(double));
}

/* Best time of R local solves (dgetrf + dgetrs) after one untimed warm-up
 * (BLAS threads start, pages fault in); residual of the last. */
static int run_local(struct problem *p, int repeat, double *best_s,
                     double *resid)
{
    const int n = p->n, one = 1;
    *best_s = INFINITY;
    for (int r = -1; r < repeat; r++) {
        reset_system(p);
        int info = 0;
        double t0 = now_seconds();
        dgetrf_(&n, &n, p->a, &n, p->ipvt, &info);
        if (info == 0)
            dgetrs_("N", &n, &one, p->a, &n, p->ipvt, p->x, &n, &info, 1);
        double t = now_seconds() - t0;
        if (info != 0) {
            fprintf(stderr, "numrpc-linpack: local LAPACK n=%d: info=%d\n",
                    n, info);
            return -1;
        }
        if (r >= 0 && t < *best_s)
            *best_s = t;
    }
    *resid = normalised_residual(p->a0, n, p->x, p->b0);
    return 0;
}

static void report_call_failure(const char *routine, int n, int rc)
{
    fprintf(stderr, "numrpc-linpack: remote %s n=%d failed: %s (%s)",
            routine, n, numrpc_strerror(rc), numrpc_errname(rc));
    const char *detail = numrpc_last_error_detail();
    if (detail && *detail)
        fprintf(stderr, ": %s", detail);
    fputc('\n', stderr);
}

static void add_call_info(struct row *acc, const numrpc_call_info *ci)
{
    acc->send_s += ci->send_seconds;
    acc->compute_s += ci->compute_seconds;
    acc->receive_s += ci->receive_seconds;
    acc->bytes += ci->bytes_sent + ci->bytes_received;
}

/* One remote solve in the given mode; fills the time and call figures. */
static int remote_solve_once(struct problem *p, int mode, struct row *out)
{
    const int n = p->n, lda = p->n;
    int info = 0, rc;
    numrpc_call_info ci;
    memset(out, 0, sizeof *out);
    reset_system(p);

    double t0 = now_seconds();
    if (mode == MODE_LINPACK) {
        /* The whole remote solve: one line. */
        rc = numrpc_call("linpack", p->a, lda, n, p->ipvt, p->x, &info);
        out->remote_s = now_seconds() - t0;
        if (rc != NUMRPC_OK) {
            report_call_failure("linpack", n, rc);
            return -1;
        }
        numrpc_last_call_info(&ci);
        add_call_info(out, &ci);
        if (info != 0) {
            fprintf(stderr, "numrpc-linpack: remote linpack n=%d: info=%d\n",
                    n, info);
            return -1;
        }
        return 0;
    }

    rc = numrpc_call("dgefa", p->a, lda, n, p->ipvt, &info);
    if (rc != NUMRPC_OK) {
        report_call_failure("dgefa", n, rc);
        return -1;
    }
    numrpc_last_call_info(&ci);
    add_call_info(out, &ci);
    if (info != 0) {
        fprintf(stderr, "numrpc-linpack: remote dgefa n=%d: info=%d\n", n,
                info);
        return -1;
    }
    rc = numrpc_call("dgesl", p->a, lda, n, p->ipvt, p->x, 0);
    out->remote_s = now_seconds() - t0;
    if (rc != NUMRPC_OK) {
        report_call_failure("dgesl", n, rc);
        return -1;
    }
    numrpc_last_call_info(&ci);
    add_call_info(out, &ci);
    return 0;
}

/* Best of R remote solves after one untimed warm-up (connection, interface
 * fetch); residual of the last. */
static int run_remote(struct problem *p, int mode, int repeat, struct row *row)
{
    struct row best = {0}, one;
    best.remote_s = INFINITY;
    for (int r = -1; r < repeat; r++) {
        if (remote_solve_once(p, mode, &one) != 0)
            return -1;
        if (r >= 0 && one.remote_s < best.remote_s)
            best = one;
    }
    row->remote_s = best.remote_s;
    row->send_s = best.send_s;
    row->compute_s = best.compute_s;
    row->receive_s = best.receive_s;
    row->bytes = best.bytes;
    row->resid_remote = normalised_residual(p->a0, p->n, p->x, p->b0);
    row->remote_ok = 1;
    return 0;
}

#ifdef HAVE_CORBA
/* One solve through the omniORB baseline, the same calls as numrpc makes. */
static int corba_solve_once(struct problem *p, int mode, double *seconds)
{
    const int n = p->n, lda = p->n;
    int info = 0, rc;
    reset_system(p);
    double t0 = now_seconds();
    if (mode == MODE_LINPACK) {
        rc = corba_linpack(p->a, lda, n, p->ipvt, p->x, &info);
    } else {
        rc = corba_dgefa(p->a, lda, n, p->ipvt, &info);
        if (rc == 0 && info == 0) rc = corba_dgesl(p->a, lda, n, p->ipvt, p->x, 0);
    }
    *seconds = now_seconds() - t0;
    if (rc != 0 || info != 0) {
        fprintf(stderr, "numrpc-linpack: CORBA solve n=%d failed: %s (info %d)\n", n,
                rc ? corba_last_error() : "ok", info);
        return -1;
    }
    return 0;
}

/* Best of R CORBA solves after one untimed warm-up; residual of the last. */
static int run_corba(struct problem *p, int mode, int repeat, struct row *row)
{
    double best = INFINITY, one;
    for (int r = -1; r < repeat; r++) {
        if (corba_solve_once(p, mode, &one) != 0) return -1;
        if (r >= 0 && one < best) best = one;
    }
    row->corba_s = best;
    row->resid_corba = normalised_residual(p->a0, p->n, p->x, p->b0);
    row->corba_ok = 1;
    return 0;
}
#endif

static double comm_mb_per_s(const struct row *r)
{
    double t = r->send_s + r->receive_s;
    return t > 0.0 ? (double)r->bytes / t / 1e6 : 0.0;
}

static void print_header(void)
{
    printf("%6s %-12s %10s %9s %10s %9s %7s %9s %9s %9s %9s %9s %9s\n", "n",
           "mode", "local_s", "local_MF", "remote_s", "remote_MF", "ratio",
           "send_s", "compute_s", "recv_s", "comm_MB/s", "resid_rem",
           "resid_loc");
}

static void print_corba_header(void)
{
    printf("%6s %-12s %10s %9s %10s %9s %14s %9s\n", "n", "mode", "numrpc_s", "numrpc_MF",
           "corba_s", "corba_MF", "numrpc/corba", "resid_cb");
}

static void print_corba_row(const struct row *r)
{
    if (!r->corba_ok || !r->remote_ok) return;
    double nm = mflops(r->n, r->remote_s), cm = mflops(r->n, r->corba_s);
    printf("%6d %-12s %10.5f %9.1f %10.5f %9.1f %14.3f %9.3f\n", r->n, r->mode, r->remote_s, nm,
           r->corba_s, cm, cm > 0.0 ? nm / cm : 0.0, r->resid_corba);
}

static void print_row(const struct row *r)
{
    printf("%6d %-12s %10.5f %9.1f ", r->n, r->mode, r->local_s,
           mflops(r->n, r->local_s));
    if (r->remote_ok) {
        double lm = mflops(r->n, r->local_s), rm = mflops(r->n, r->remote_s);
        printf("%10.5f %9.1f %7.3f %9.5f %9.5f %9.5f %9.1f %9.3f ",
               r->remote_s, rm, lm > 0.0 ? rm / lm : 0.0, r->send_s,
               r->compute_s, r->receive_s, comm_mb_per_s(r), r->resid_remote);
    } else {
        printf("%10s %9s %7s %9s %9s %9s %9s %9s ", "-", "-", "-", "-", "-",
               "-", "-", "-");
    }
    printf("%9.3f\n", r->resid_local);
}

static void csv_header(FILE *f)
{
    fprintf(f, "n,mode,local_s,local_mflops,remote_s,remote_mflops,ratio,"
               "send_s,compute_s,receive_s,comm_mb_per_s,bytes,"
               "resid_remote,resid_local,corba_s,corba_mflops\n");
}

static void csv_row(FILE *f, const struct row *r)
{
    double lm = mflops(r->n, r->local_s);
    fprintf(f, "%d,%s,%.6g,%.6g,", r->n, r->mode, r->local_s, lm);
    if (r->remote_ok) {
        double rm = mflops(r->n, r->remote_s);
        fprintf(f, "%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%llu,%.6g,",
                r->remote_s, rm, lm > 0.0 ? rm / lm : 0.0, r->send_s,
                r->compute_s, r->receive_s, comm_mb_per_s(r),
                (unsigned long long)r->bytes, r->resid_remote);
    } else {
        fprintf(f, ",,,,,,,,,");
    }
    fprintf(f, "%.6g,", r->resid_local);
    if (r->corba_ok) fprintf(f, "%.6g,%.6g\n", r->corba_s, mflops(r->n, r->corba_s));
    else fprintf(f, ",\n");
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
        csv_header(csv);
    }

    const char *server = getenv("NUMRPC_SERVER"), *meta = getenv("NUMRPC_METASERVER");
    char where[300];
    if (meta && *meta) snprintf(where, sizeof where, "chosen per call by the metaserver %s", meta);
    else snprintf(where, sizeof where, "%s", server && *server ? server : "(NUMRPC_SERVER unset)");
    printf("numrpc-linpack: best of %d run(s) after 1 warm-up; MFLOPS = (2/3 n^3 + 2 n^2) "
           "/ s / 1e6; local OpenBLAS threads %d; server %s\n",
           opt.repeat, openblas_get_num_threads(), opt.local_only ? "(local only)" : where);
    printf("client lines per solve: local 2 (dgetrf_ + dgetrs_), remote 1 "
           "(numrpc_call(\"linpack\", ...)) or 2 (dgefa + dgesl)\n");
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
    print_header();

    struct row corba_rows[2 * MAX_SIZES];
    int ncorba = 0;
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
        if (run_local(&p, opt.repeat, &local_s, &resid_local) != 0) {
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
                     {MODE_DGEFA_DGESL, "dgefa+dgesl"}};
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            if (!(opt.mode & modes[m].mode))
                continue;
            struct row row;
            memset(&row, 0, sizeof row);
            row.n = p.n;
            row.mode = opt.local_only ? "local" : modes[m].name;
            row.local_s = local_s;
            row.resid_local = resid_local;
            if (!opt.local_only) {
                if (run_remote(&p, modes[m].mode, opt.repeat, &row) != 0) {
                    status = 1;
                } else if (!(row.resid_remote <= RESIDUAL_LIMIT)) {
                    fprintf(stderr, "numrpc-linpack: remote %s residual %g "
                                    "for n=%d is too large\n",
                            modes[m].name, row.resid_remote, p.n);
                    status = 1;
                }
            }
#ifdef HAVE_CORBA
            if (opt.corba_ior && !opt.local_only) {
                if (run_corba(&p, modes[m].mode, opt.repeat, &row) != 0 ||
                    !(row.resid_corba <= RESIDUAL_LIMIT))
                    status = 1;
                corba_rows[ncorba++] = row;
            }
#endif
            print_row(&row);
            fflush(stdout);
            if (csv)
                csv_row(csv, &row);
            if (opt.local_only)
                break; /* one local row per size */
        }
        problem_free(&p);
    }

    if (ncorba > 0) {
        printf("\nnumrpc vs the CORBA baseline (omniORB), best of %d each:\n", opt.repeat);
        print_corba_header();
        for (int i = 0; i < ncorba; i++) print_corba_row(&corba_rows[i]);
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
