/* linpack_report.c -- numrpc-linpack's output: per size and mode the local and
 * remote times, MFLOPS, call split and residuals (table and CSV); CORBA beside. */
#include <stdio.h>

#include "linpack_problem.h"
#include "linpack_run.h"
#include "linpack_report.h"

static double comm_mb_per_s(const struct row *r)
{
    double t = r->send_s + r->receive_s;
    return t > 0.0 ? (double)r->bytes / t / 1e6 : 0.0;
}

void report_header(void)
{
    printf("%6s %-12s %10s %9s %10s %9s %7s %9s %9s %9s %9s %9s %9s\n", "n",
           "mode", "local_s", "local_MF", "remote_s", "remote_MF", "ratio",
           "send_s", "compute_s", "recv_s", "comm_MB/s", "resid_rem",
           "resid_loc");
}

void report_corba_header(void)
{
    printf("%6s %-12s %10s %9s %10s %9s %14s %9s\n", "n", "mode", "numrpc_s", "numrpc_MF",
           "corba_s", "corba_MF", "numrpc/corba", "resid_cb");
}

void report_corba_row(const struct row *r)
{
    if (!r->corba_ok || !r->remote_ok) return;
    double nm = problem_mflops(r->n, r->remote_s), cm = problem_mflops(r->n, r->corba_s);
    printf("%6d %-12s %10.5f %9.1f %10.5f %9.1f %14.3f %9.3f\n", r->n, r->mode, r->remote_s, nm,
           r->corba_s, cm, cm > 0.0 ? nm / cm : 0.0, r->resid_corba);
}

void report_row(const struct row *r)
{
    printf("%6d %-12s %10.5f %9.1f ", r->n, r->mode, r->local_s,
           problem_mflops(r->n, r->local_s));
    if (r->remote_ok) {
        double lm = problem_mflops(r->n, r->local_s), rm = problem_mflops(r->n, r->remote_s);
        printf("%10.5f %9.1f %7.3f %9.5f %9.5f %9.5f %9.1f %9.3f ",
               r->remote_s, rm, lm > 0.0 ? rm / lm : 0.0, r->send_s,
               r->compute_s, r->receive_s, comm_mb_per_s(r), r->resid_remote);
    } else {
        printf("%10s %9s %7s %9s %9s %9s %9s %9s ", "-", "-", "-", "-", "-",
               "-", "-", "-");
    }
    printf("%9.3f\n", r->resid_local);
}

void report_csv_header(FILE *f)
{
    fprintf(f, "n,mode,local_s,local_mflops,remote_s,remote_mflops,ratio,"
               "send_s,compute_s,receive_s,comm_mb_per_s,bytes,"
               "resid_remote,resid_local,corba_s,corba_mflops,rhs,solve_s,linpacks_s,transfer_s\n");
}

void report_csv_row(FILE *f, const struct row *r)
{
    const int rhs = r->rhs > 0 ? r->rhs : 1;
    double lm = problem_mflops_rhs(r->n, rhs, r->local_s);
    fprintf(f, "%d,%s,%.6g,%.6g,", r->n, r->mode, r->local_s, lm);
    if (r->remote_ok) {
        double rm = problem_mflops_rhs(r->n, rhs, r->remote_s);
        fprintf(f, "%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%llu,%.6g,",
                r->remote_s, rm, lm > 0.0 ? rm / lm : 0.0, r->send_s,
                r->compute_s, r->receive_s, comm_mb_per_s(r),
                (unsigned long long)r->bytes, r->resid_remote);
    } else {
        fprintf(f, ",,,,,,,,,");
    }
    fprintf(f, "%.6g,", r->resid_local);
    if (r->corba_ok) fprintf(f, "%.6g,%.6g,", r->corba_s, problem_mflops(r->n, r->corba_s));
    else fprintf(f, ",,");
    if (r->rhs > 0) fprintf(f, "%d,%.6g,%.6g,%.6g\n", r->rhs, r->solve_s, r->linpacks_s, r->transfer_s);
    else fprintf(f, ",,,\n");
}
