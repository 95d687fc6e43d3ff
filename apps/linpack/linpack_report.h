/* linpack_report.h -- numrpc-linpack's output: the table of local and remote
 * rows, the numrpc vs CORBA table, and the CSV file. */
#ifndef NUMRPC_LINPACK_REPORT_H
#define NUMRPC_LINPACK_REPORT_H

#include <stdio.h>

#include "linpack_run.h"

/* ---- stdout ---- */
void report_header(void);
void report_row(const struct row *r);
/* numrpc against the omniORB baseline; rows without both are skipped. */
void report_corba_header(void);
void report_corba_row(const struct row *r);

/* ---- CSV ---- */
void report_csv_header(FILE *f);
void report_csv_row(FILE *f, const struct row *r);

#endif
