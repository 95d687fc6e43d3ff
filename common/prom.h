/* prom.h -- the Prometheus text exposition format 0.0.4 (prom.c): a metric
 * family's HELP and TYPE lines, then its samples, label values escaped. */
#ifndef NUMRPC_COMMON_PROM_H
#define NUMRPC_COMMON_PROM_H

#include <stdint.h>

#include "strbuf.h"

/* The Content-Type of a page in this format. */
#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* One label of a sample: name is the caller's constant, value any text
 * (a peer's, escaped here). */
typedef struct prom_label {
    const char *name, *value;
} prom_label;

/* Starts family name (type "counter", "gauge" or "histogram"): every
 * sample of it must follow before the next family starts. */
void prom_family(strbuf *b, const char *name, const char *type, const char *help);
/* One sample of the family: name{labels} value. */
void prom_sample(strbuf *b, const char *name, const prom_label *labels, int nlabels, double value);
/* The same with an integer value (exact beyond 2^53). */
void prom_sample_u64(strbuf *b, const char *name, const prom_label *labels, int nlabels, uint64_t value);
/* One histogram of family name: nbuckets upper bounds (seconds, increasing)
 * with the count of observations at or below each, then +Inf, _sum and
 * _count (count is also the +Inf bucket). */
void prom_histogram(strbuf *b, const char *name, const prom_label *labels, int nlabels, const double *upper,
                    const uint64_t *cumulative, int nbuckets, uint64_t count, double sum);

#endif
