/* prom.c -- writes the Prometheus text format: families, samples with
 * escaped labels, histograms with cumulative buckets. */
#include "prom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void prom_family(strbuf *b, const char *name, const char *type, const char *help)
{
    strbuf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{a="x",b="y",extra="v"}: extra (NULL = none) after the labels. */
static void sample_name(strbuf *b, const char *name, const char *suffix, const prom_label *labels, int nlabels,
                        const char *extra_name, const char *extra_value)
{
    strbuf_printf(b, "%s%s", name, suffix);
    if (nlabels == 0 && extra_name == NULL) return;
    strbuf_printf(b, "{");
    for (int i = 0; i < nlabels; i++) {
        strbuf_printf(b, "%s%s=\"", i ? "," : "", labels[i].name);
        strbuf_escaped(b, labels[i].value, STRBUF_PROM_LABEL);
        strbuf_printf(b, "\"");
    }
    if (extra_name) strbuf_printf(b, "%s%s=\"%s\"", nlabels ? "," : "", extra_name, extra_value);
    strbuf_printf(b, "}");
}

/* The shortest of 15 or 17 significant digits that reads back as v. */
static void format_double(char *out, size_t len, double v)
{
    if (isnan(v)) snprintf(out, len, "NaN");
    else if (isinf(v)) snprintf(out, len, "%sInf", v > 0 ? "+" : "-");
    else if (snprintf(out, len, "%.15g", v) > 0 && strtod(out, NULL) != v) snprintf(out, len, "%.17g", v);
}

static void value(strbuf *b, double v)
{
    char text[32];
    format_double(text, sizeof text, v);
    strbuf_printf(b, " %s\n", text);
}

void prom_sample(strbuf *b, const char *name, const prom_label *labels, int nlabels, double v)
{
    sample_name(b, name, "", labels, nlabels, NULL, NULL);
    value(b, v);
}

void prom_sample_u64(strbuf *b, const char *name, const prom_label *labels, int nlabels, uint64_t v)
{
    sample_name(b, name, "", labels, nlabels, NULL, NULL);
    strbuf_printf(b, " %llu\n", (unsigned long long)v);
}

void prom_histogram(strbuf *b, const char *name, const prom_label *labels, int nlabels, const double *upper,
                    const uint64_t *cumulative, int nbuckets, uint64_t count, double sum)
{
    char le[32];
    for (int i = 0; i < nbuckets; i++) {
        format_double(le, sizeof le, upper[i]);
        sample_name(b, name, "_bucket", labels, nlabels, "le", le);
        strbuf_printf(b, " %llu\n", (unsigned long long)cumulative[i]);
    }
    sample_name(b, name, "_bucket", labels, nlabels, "le", "+Inf");
    strbuf_printf(b, " %llu\n", (unsigned long long)count);
    sample_name(b, name, "_sum", labels, nlabels, NULL, NULL);
    value(b, sum);
    sample_name(b, name, "_count", labels, nlabels, NULL, NULL);
    strbuf_printf(b, " %llu\n", (unsigned long long)count);
}
