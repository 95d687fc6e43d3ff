/* transfer_report.h -- numrpc-bench-transfer's results: tables on stdout and in
 * Markdown (medians, ratios to raw TCP, spreads, linear fits) and the CSVs. */
#ifndef NUMRPC_BENCH_TRANSFER_REPORT_H
#define NUMRPC_BENCH_TRANSFER_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "transfer_place.h"

/* Ratios: median over rounds with a bootstrap CI of that median. */
#define BOOTSTRAP_RESAMPLES 1000
#define CI_LEVEL 0.90

/* MB/s of bytes moved in s seconds (0 when s <= 0). */
double report_mbps(size_t bytes, double s);
/* "8 MiB", "64 KiB", "8 B" into buf. */
const char *report_size_label(size_t b, char *buf, size_t len);
/* Creates path and writes the CSV header line; NULL (reported) on failure. */
FILE *report_open_csv(const char *path, const char *header);

/* ---- transfer_report.c: the round trips ---- */
/* Per placement of pls[0..npl-1] (those run): latency, cold calls, round
 * trips, baselines, one-way bulk, linear models, packet sweep; on stdout,
 * and in Markdown on md when md is not NULL. */
void report_tables(const struct placement *pls, int npl, int ncpu, FILE *md);
/* One row per sample; 0, or -1 when path cannot be opened. */
int report_write_csv(const char *path, const struct placement *pls);

/* ---- transfer_report_sweep.c: the buffer sweep ---- */
/* The buffer sweep's table: MB/s by socket buffer x NODELAY x packet size. */
void report_sweep(FILE *md);
/* One row per sample; 0, or -1 when path cannot be opened. */
int report_write_sweep_csv(const char *path, const struct placement *pls);

#endif
