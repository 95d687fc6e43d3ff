/* bench_bind.c -- what checking numrpc_call's argument types costs a call:
 * binding dgemm's 13 arguments untagged (as before) and tagged, interleaved. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bind.h"
#include "stats.h"

#define ROUNDS 21
#define ITERS 200000

/* dgemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) */
static iface_param params[13];
static iface_t dgemm = {.name = "dgemm", .nparams = 13, .params = params};
static call_obj k; /* bound again and again: each a call's one bind */

static void make_iface(void)
{
    static const char *const names[13] = {"transa", "transb", "m", "n", "k", "alpha", "a",
                                          "lda",    "b",      "ldb", "beta", "c", "ldc"};
    static const uint32_t types[13] = {NUMRPC_T_CHAR,   NUMRPC_T_CHAR, NUMRPC_T_INT,    NUMRPC_T_INT, NUMRPC_T_INT,
                                       NUMRPC_T_DOUBLE, NUMRPC_T_DOUBLE, NUMRPC_T_INT,  NUMRPC_T_DOUBLE,
                                       NUMRPC_T_INT,    NUMRPC_T_DOUBLE, NUMRPC_T_DOUBLE, NUMRPC_T_INT};
    for (int i = 0; i < 13; i++) {
        params[i].name = names[i];
        params[i].type = types[i];
        params[i].mode = i == 11 ? IFACE_INOUT : IFACE_IN;
        params[i].rank = i == 6 || i == 8 || i == 11 ? 2 : 0;
    }
}

/* As numrpc_call_counted_ reads its arguments. */
static int bind_untagged(int nargs, const char *name, ...)
{
    (void)name;
    va_list ap;
    va_start(ap, name);
    arg_source src = {nargs, NULL, &ap, NULL};
    err_t err;
    k.bound_once = 0;
    int rc = call_bind(&k, &dgemm, &src, &err);
    va_end(ap);
    return rc;
}

/* As numrpc_call_tagged_ reads them: the pairs, then the checks. */
static int bind_tagged(int nargs, const char *name, ...)
{
    va_list ap;
    va_start(ap, name);
    typed_arg typed[TYPED_MAX];
    err_t err;
    int rc = typed_read(nargs, &ap, typed, name, &err);
    va_end(ap);
    arg_source src = {nargs, NULL, NULL, typed};
    k.bound_once = 0;
    return rc != 0 ? rc : call_bind(&k, &dgemm, &src, &err);
}
#define BIND_TAGGED(...) bind_tagged(NUMRPC_NARG_(__VA_ARGS__) - 1, NUMRPC_TAGGED_(__VA_ARGS__))

static double a[4], b[4], c[4];

static double run(int tagged)
{
    int m = 2, n = 2, kk = 2, failures = 0;
    double t0 = bench_now();
    for (int i = 0; i < ITERS; i++) {
        if (tagged) failures += BIND_TAGGED("dgemm", 'N', 'N', m, n, kk, 1.5, a, m, b, kk, 0.5, c, m) != 0;
        else failures += bind_untagged(13, "dgemm", 'N', 'N', m, n, kk, 1.5, a, m, b, kk, 0.5, c, m) != 0;
    }
    double ns = (bench_now() - t0) / ITERS * 1e9;
    return failures ? -1 : ns;
}

int main(void)
{
    make_iface();
    double untagged[ROUNDS], tagged[ROUNDS], diff[ROUNDS];
    run(0), run(1); /* warm */
    for (int r = 0; r < ROUNDS; r++) {
        untagged[r] = run(r % 2);
        tagged[r] = run(!(r % 2));
        if (r % 2) { /* the order alternates */
            double t = untagged[r];
            untagged[r] = tagged[r];
            tagged[r] = t;
        }
        if (untagged[r] < 0 || tagged[r] < 0) {
            fprintf(stderr, "bench_bind: a bind failed\n");
            return 1;
        }
        diff[r] = tagged[r] - untagged[r];
    }
    printf("binding dgemm's 13 arguments, %d rounds of %d, interleaved (ns per call):\n", ROUNDS, ITERS);
    printf("  untagged (as before)  median %.1f  [%.1f, %.1f]\n", bench_median(untagged, ROUNDS),
           bench_min(untagged, ROUNDS), bench_max(untagged, ROUNDS));
    printf("  tagged and checked    median %.1f  [%.1f, %.1f]\n", bench_median(tagged, ROUNDS),
           bench_min(tagged, ROUNDS), bench_max(tagged, ROUNDS));
    printf("  difference per call   median %.1f  [%.1f, %.1f]\n", bench_median(diff, ROUNDS), bench_min(diff, ROUNDS),
           bench_max(diff, ROUNDS));
    return 0;
}
