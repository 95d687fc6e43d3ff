/* transfer_opt.c -- numrpc-bench-transfer's options: the one instance every layer
 * reads (main fills it from the command line) and the size syntax they use. */
#include <stdlib.h>

#include "transfer_opt.h"

struct transfer_options bench_opt;

size_t bench_parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    while (*end == ' ') end++;
    if (*end == 'k' || *end == 'K') v *= 1024;
    else if (*end == 'm' || *end == 'M') v *= 1024 * 1024;
    else if (*end == 'g' || *end == 'G') v *= 1024.0 * 1024 * 1024;
    return v > 0 ? (size_t)v : 0;
}
