/* trust.c -- the gate between a server's interface and the caller's memory:
 * pins, the first binding of each routine (frozen), typed headers' pins. */
#include "trust.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pin.h"

#define EXPECT_CACHE_MAX 256 /* typed headers' pins kept decoded */

/* A routine's first admitted interface in this process (or configuration). */
typedef struct binding {
    iface_t iface;
    struct binding *next;
} binding;

/* A typed header's pin line, decoded once. */
typedef struct expectation {
    char *line;
    iface_t pin;
    struct expectation *next;
} expectation;

static pthread_mutex_t trust_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int pins_on;
    pin_set pins;
    char pin_file[256]; /* for messages */
    binding *bindings;
    expectation *expected;
    int nexpected;
} trust; /* trust_lock */

/* ---- Comparing the parts that decide which bytes of the caller's memory
 * are read and written ---- */

static int expr_same(const expr_t *a, const expr_t *b)
{
    return a->nwords == b->nwords &&
           (a->nwords == 0 || memcmp(a->words, b->words, a->nwords * sizeof *a->words) == 0);
}

static const char *dim_difference(const iface_dim *a, const iface_dim *b)
{
    if (!expr_same(&a->size, &b->size)) return "extent";
    if (!expr_same(&a->count, &b->count)) return "element count";
    if (!expr_same(&a->start, &b->start)) return "first element";
    if (!expr_same(&a->stride, &b->stride)) return "stride";
    return NULL;
}

/* 1 when now handles the caller's memory differently from was, with the
 * first difference in words in why; else 0. */
static int signature_differs(const iface_t *was, const iface_t *now, char *why, size_t len)
{
    if (was->nparams != now->nparams) {
        snprintf(why, len, "its parameter count (%u, was %u)", now->nparams, was->nparams);
        return 1;
    }
    for (uint32_t i = 0; i < was->nparams; i++) {
        const iface_param *a = &was->params[i], *b = &now->params[i];
        if (a->mode != b->mode) {
            snprintf(why, len, "parameter %s: mode %s, was %s", a->name, iface_mode_name(b->mode),
                     iface_mode_name(a->mode));
            return 1;
        }
        if (a->type != b->type) {
            snprintf(why, len, "parameter %s: type %s, was %s", a->name, iface_type_name(b->type),
                     iface_type_name(a->type));
            return 1;
        }
        if (a->rank != b->rank) {
            snprintf(why, len, "parameter %s: rank %u, was %u", a->name, b->rank, a->rank);
            return 1;
        }
        for (uint32_t d = 0; d < IFACE_MAX_RANK; d++) {
            const char *what = dim_difference(&a->dims[d], &b->dims[d]);
            if (what) {
                snprintf(why, len, "parameter %s: the %s of dimension %u", a->name, what, d + 1);
                return 1;
            }
        }
        if (!expr_same(&a->bound, &b->bound)) {
            snprintf(why, len, "parameter %s: its string bound", a->name);
            return 1;
        }
    }
    return 0;
}

/* f must be the interface of pin (whose: "the pin in F", "the typed header"). */
static int check_pin(const iface_t *pin, const iface_t *f, const char *server, const char *whose,
                     err_t *err)
{
    char why[200] = "";
    int differs = signature_differs(pin, f, why, sizeof why);
    if (pin->hash == f->hash && !differs) return 0;
    return err_set(err, NUMRPC_EAUTH,
                   "%s: %s serves interface %016" PRIx64 ", %s has %016" PRIx64 " (%s): refused "
                   "before any argument was read or sent",
                   f->name, server, f->hash, whose, pin->hash,
                   differs ? why : "same parameters, other version");
}

/* ---- The gate ---- */

static binding *binding_of(const char *name)
{
    for (binding *b = trust.bindings; b; b = b->next)
        if (strcmp(b->iface.name, name) == 0) return b;
    return NULL;
}

static void forget_bindings(void)
{
    while (trust.bindings) {
        binding *next = trust.bindings->next;
        iface_free(&trust.bindings->iface);
        free(trust.bindings);
        trust.bindings = next;
    }
}

/* The first interface of its name: kept (a private copy from blob). */
static int bind_first(const uint8_t *blob, size_t len, err_t *err)
{
    binding *b = calloc(1, sizeof *b);
    if (b == NULL) return err_set(err, NUMRPC_ENOMEM, "binding");
    int rc = iface_decode(blob, len, &b->iface, err);
    if (rc != 0) {
        free(b);
        return rc;
    }
    b->next = trust.bindings;
    trust.bindings = b;
    return 0;
}

int trust_admit(const iface_t *f, const char *asked, const uint8_t *blob, size_t len,
                const char *server, err_t *err)
{
    if (strcmp(f->name, asked) != 0)
        return err_set(err, NUMRPC_EPROTO, "%s answered the interface of %s with one of %s", server,
                       asked, f->name);
    int rc = 0;
    pthread_mutex_lock(&trust_lock);
    if (trust.pins_on) {
        char whose[300];
        const iface_t *pin = pin_set_find(&trust.pins, f->name);
        snprintf(whose, sizeof whose, "its pin in %s", trust.pin_file);
        if (pin == NULL)
            rc = err_set(err, NUMRPC_EAUTH,
                         "%s is not pinned in %s: refused before anything was sent (pin it with "
                         "`numrpc describe --pin %s >> %s` from a server you trust)",
                         f->name, trust.pin_file, f->name, trust.pin_file);
        else
            rc = check_pin(pin, f, server, whose, err);
    }
    binding *b = rc == 0 ? binding_of(f->name) : NULL;
    char why[200];
    if (rc == 0 && b == NULL)
        rc = bind_first(blob, len, err);
    else if (rc == 0 && signature_differs(&b->iface, f, why, sizeof why))
        rc = err_set(err, NUMRPC_EAUTH,
                     "%s: %s serves interface %016" PRIx64 ", which changes %s from the one this "
                     "process bound first (%016" PRIx64 "): refused, never used (a new process or "
                     "numrpc_init binds anew)",
                     f->name, server, f->hash, why, b->iface.hash);
    pthread_mutex_unlock(&trust_lock);
    return rc;
}

/* The decoded pin of line, from the cache or decoded now (*fresh: the
 * caller frees it). */
static int expectation_of(const char *line, iface_t *fresh, const iface_t **pin, err_t *err)
{
    for (expectation *e = trust.expected; e; e = e->next)
        if (strcmp(e->line, line) == 0) {
            *pin = &e->pin;
            return 0;
        }
    int rc = pin_parse(line, strlen(line), "typed header", fresh, err);
    if (rc != 0) return rc;
    *pin = fresh;
    expectation *e = trust.nexpected < EXPECT_CACHE_MAX ? calloc(1, sizeof *e) : NULL;
    if (e && (e->line = strdup(line)) != NULL) {
        e->pin = *fresh;
        e->next = trust.expected;
        trust.expected = e;
        trust.nexpected++;
        *fresh = (iface_t){0};
        *pin = &e->pin;
    } else {
        free(e);
    }
    return 0;
}

int trust_expect(const iface_t *f, const char *pin_line, const char *server, err_t *err)
{
    iface_t fresh = {0};
    const iface_t *pin = NULL;
    pthread_mutex_lock(&trust_lock);
    int rc = expectation_of(pin_line, &fresh, &pin, err);
    if (rc == 0 && strcmp(pin->name, f->name) != 0)
        rc = err_set(err, NUMRPC_EINVAL, "%s: the typed header's pin is for %s", f->name, pin->name);
    if (rc == 0) rc = check_pin(pin, f, server, "the typed header", err);
    pthread_mutex_unlock(&trust_lock);
    iface_free(&fresh);
    return rc;
}

int trust_configure(const char *pin_file, err_t *err)
{
    pin_set pins = {NULL, 0};
    int on = pin_file && pin_file[0];
    int rc = on ? pin_set_load(pin_file, &pins, err) : 0;
    if (rc != 0) return rc;
    pthread_mutex_lock(&trust_lock);
    pin_set_free(&trust.pins);
    trust.pins = pins;
    trust.pins_on = on;
    snprintf(trust.pin_file, sizeof trust.pin_file, "%s", on ? pin_file : "");
    forget_bindings();
    pthread_mutex_unlock(&trust_lock);
    return 0;
}

void trust_forget(void)
{
    pthread_mutex_lock(&trust_lock);
    pin_set_free(&trust.pins);
    trust.pins_on = 0;
    forget_bindings();
    while (trust.expected) {
        expectation *next = trust.expected->next;
        free(trust.expected->line);
        iface_free(&trust.expected->pin);
        free(trust.expected);
        trust.expected = next;
    }
    trust.nexpected = 0;
    pthread_mutex_unlock(&trust_lock);
}
