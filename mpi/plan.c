/* plan.c -- the course every engine routine takes: arrays to the grid (or
 * found kept there), ScaLAPACK, results back to rank 0, each phase timed. */
#include "plan.h"

#include <string.h>

#include "args.h"
#include "keep.h"
#include "numrpc.h"

void plan_begin(plan *p, const char *routine, int info_arg)
{
    memset(p, 0, sizeof *p);
    p->routine = routine;
    p->info_arg = info_arg;
    p->pivots_arg = -1;
}

int plan_array_add(plan *p, int arg, int ld_arg, int m, int n, int moves)
{
    plan_array *a = &p->arrays[p->count];
    a->arg = arg;
    a->ld_arg = ld_arg;
    a->moves = moves;
    a->d.m = m;
    a->d.n = n;
    return p->count++;
}

void plan_pivots(plan *p, int arg, int m, int count, int moves)
{
    p->pivots_arg = arg;
    p->pivots_m = m;
    p->pivots_count = count;
    p->pivots_moves = moves;
}

/* ---- Handles: what the job keeps between calls ---- */

/* Argument arg's handle key, or NULL when it is no handle's. */
static const engine_arg_key *key_of(const engine_call *c, int arg)
{
    return c->keys != NULL && arg >= 0 && arg < c->nargs && c->keys[arg].flags != 0 ? &c->keys[arg] : NULL;
}

static int held(const engine_call *c, int arg)
{
    const engine_arg_key *k = key_of(c, arg);
    return k != NULL && (k->flags & ENGINE_KEY_HELD);
}

/* Whether another argument names the same handle as arg. */
static int shares_handle(const engine_call *c, int arg)
{
    for (int i = 0; i < c->nargs; i++)
        if (i != arg && key_of(c, i) && memcmp(c->keys[i].key.id, c->keys[arg].key.id, sizeof c->keys[i].key.id) == 0)
            return 1;
    return 0;
}

/* Whether rank 0 may hold arg's bytes: an IN array named by its version. */
static int may_hold(const engine_call *c, int arg, int moves)
{
    const engine_arg_key *k = key_of(c, arg);
    return c->keep != NULL && k != NULL && (k->flags & ENGINE_KEY_NOW) && (moves & PLAN_IN) && !shares_handle(c, arg);
}

void plan_mark_held(const plan *p, const engine_call *c, engine_arg_key *keys)
{
    for (int i = 0; i < p->count; i++) {
        const plan_array *a = &p->arrays[i];
        if (may_hold(c, a->arg, a->moves) &&
            keep_find_matrix(c->keep, &keys[a->arg].key, a->d.m, a->d.n, args_int(c, a->ld_arg)) >= 0)
            keys[a->arg].flags |= ENGINE_KEY_HELD;
    }
    if (p->pivots_arg >= 0 && may_hold(c, p->pivots_arg, p->pivots_moves) &&
        keep_find_pivots(c->keep, &keys[p->pivots_arg].key, p->pivots_m) >= 0)
        keys[p->pivots_arg].flags |= ENGINE_KEY_HELD;
}

/* The held arrays' parts from the store: lent (IN) or taken (INOUT).  1
 * when every rank found every one, as rank 0 did. */
static int find_held(const engine_grid *g, engine_call *c, plan *p)
{
    int found = 1;
    for (int i = 0; i < p->count; i++) {
        plan_array *a = &p->arrays[i];
        if (!held(c, a->arg))
            continue;
        int at = c->keep ? keep_find_matrix(c->keep, &c->keys[a->arg].key, a->d.m, a->d.n, args_int(c, a->ld_arg))
                         : -1;
        found &= at >= 0;
        if (at < 0)
            continue;
        keep_touch(c->keep, at);
        a->d = c->keep->items[at].matrix;
        a->source = a->moves & PLAN_OUT ? PLAN_TAKEN : PLAN_LENT;
        if (a->source == PLAN_TAKEN)
            keep_take(c->keep, at);
    }
    if (p->pivots_arg >= 0 && held(c, p->pivots_arg)) {
        int at = c->keep ? keep_find_pivots(c->keep, &c->keys[p->pivots_arg].key, p->pivots_m) : -1;
        found &= at >= 0;
        if (at >= 0) {
            keep_touch(c->keep, at);
            p->pivots = c->keep->items[at].pivots;
            p->pivots_source = p->pivots_moves & PLAN_OUT ? PLAN_TAKEN : PLAN_LENT;
            if (p->pivots_source == PLAN_TAKEN)
                keep_take(c->keep, at);
        }
    }
    return dist_agree(g, found);
}

/* After a success: the store keeps each result a handle takes (under its
 * next version) and each IN array scattered from a handle (under its
 * version).  Pivots are kept as a scatter of rank 0's would make them. */
static void keep_results(const engine_grid *g, engine_call *c, plan *p)
{
    for (int i = 0; i < p->count; i++) {
        plan_array *a = &p->arrays[i];
        const engine_arg_key *k = key_of(c, a->arg);
        if (k == NULL || a->source == PLAN_LENT)
            continue;
        engine_key next = k->key;
        next.version = k->next_version;
        if ((k->flags & ENGINE_KEY_NEXT) && (a->moves & PLAN_OUT))
            keep_add_matrix(c->keep, &next, args_int(c, a->ld_arg), &a->d);
        else if ((k->flags & ENGINE_KEY_NOW) && a->moves == PLAN_IN)
            keep_add_matrix(c->keep, &k->key, args_int(c, a->ld_arg), &a->d);
    }
    const engine_arg_key *k = p->pivots_arg >= 0 ? key_of(c, p->pivots_arg) : NULL;
    if (k == NULL || p->pivots_source == PLAN_LENT)
        return;
    if ((k->flags & ENGINE_KEY_NEXT) && (p->pivots_moves & PLAN_OUT) && p->pivots_count == p->pivots_m) {
        engine_key next = k->key;
        next.version = k->next_version;
        memset(p->pivots.local, 0, ((size_t)p->pivots.mloc + (size_t)g->nb) * sizeof *p->pivots.local);
        dist_pivots_scatter(g, args_ints(c, p->pivots_arg), &p->pivots);
        keep_add_pivots(c->keep, &next, &p->pivots);
    } else if ((k->flags & ENGINE_KEY_NOW) && p->pivots_moves == PLAN_IN) {
        keep_add_pivots(c->keep, &k->key, &p->pivots);
    }
}

/* ---- The course ---- */

/* Every array that moves one way (PLAN_IN: to the grid, unless held), then
 * the pivots. */
static void move_all(const engine_grid *g, engine_call *c, plan *p, int way)
{
    for (int i = 0; i < p->count; i++) {
        plan_array *a = &p->arrays[i];
        if (!(a->moves & way) || (way == PLAN_IN && a->source != PLAN_FRESH))
            continue;
        if (way == PLAN_IN)
            dist_scatter(g, args_doubles(c, a->arg), args_int(c, a->ld_arg), &a->d);
        else
            dist_gather(g, &a->d, args_doubles(c, a->arg), args_int(c, a->ld_arg));
    }
    if (p->pivots_arg < 0 || !(p->pivots_moves & way) || (way == PLAN_IN && p->pivots_source != PLAN_FRESH))
        return;
    if (way == PLAN_IN)
        dist_pivots_scatter(g, args_ints(c, p->pivots_arg), &p->pivots);
    else
        dist_pivots_gather(g, &p->pivots, args_ints(c, p->pivots_arg), p->pivots_count);
}

/* Pivots from the caller: a row outside the matrix would be a wild access. */
static int check_pivots(const engine_grid *g, engine_call *c, const plan *p)
{
    if (p->pivots_arg < 0 || !(p->pivots_moves & PLAN_IN) || held(c, p->pivots_arg))
        return 0;
    int32_t value;
    int bad = dist_pivots_check(g, args_ints(c, p->pivots_arg), p->pivots_m, &value);
    if (bad < 0)
        return 0;
    return args_fail(c, NUMRPC_EINVAL, "%s: ipiv[%d] = %d is not a row of A (1 to n = %d)", p->routine, bad,
                     (int)value, p->pivots_m);
}

static void free_parts(plan *p)
{
    for (int i = 0; i < p->count; i++)
        if (p->arrays[i].source != PLAN_LENT)
            dist_matrix_free(&p->arrays[i].d);
    if (p->pivots_source != PLAN_LENT)
        dist_pivots_free(&p->pivots);
}

int plan_run(const engine_grid *g, engine_call *c, plan *p, plan_compute_fn compute)
{
    int ok = 1, rc = -1, info = 0;
    if (check_pivots(g, c, p) != 0)
        return -1;
    if (!find_held(g, c, p)) {
        free_parts(p);
        if (c->keep)
            keep_clear(c->keep);
        return args_fail(c, NUMRPC_EINTERNAL,
                         "%s: the MPI job's ranks disagreed on the arrays kept between calls; all are dropped",
                         p->routine);
    }
    for (int i = 0; i < p->count; i++) {
        dist_matrix *d = &p->arrays[i].d;
        if (p->arrays[i].source == PLAN_FRESH)
            ok &= dist_matrix_init(g, d, d->m, d->n) == 0;
    }
    if (p->pivots_arg >= 0 && p->pivots_source == PLAN_FRESH)
        ok &= dist_pivots_init(g, &p->pivots, p->pivots_m) == 0;
    if (!dist_agree(g, ok))
        goto no_memory;
    double t = dist_clock(g);
    move_all(g, c, p, PLAN_IN);
    dist_lap(g, &t, &c->scatter_s);
    info = compute(g, c, p);
    if (info == PLAN_NO_MEMORY)
        goto no_memory;
    dist_lap(g, &t, &c->compute_s);
    move_all(g, c, p, PLAN_OUT);
    dist_lap(g, &t, &c->gather_s);
    if (p->info_arg >= 0)
        args_set_int(c, p->info_arg, info);
    rc = args_check_info(c, p->routine, info);
    if (rc == 0 && c->keep != NULL)
        keep_results(g, c, p);
    goto done;
no_memory:
    rc = args_fail_memory(c, p->routine, p->arrays[0].d.m, p->arrays[0].d.n);
done:
    free_parts(p);
    return rc;
}

int plan_run_layout(const engine_grid *g, engine_call *c, engine_layout_fn layout, plan_compute_fn compute)
{
    plan p;
    int rc = layout(c, &p);
    if (rc < 0)
        return -1;
    if (p.info_arg >= 0)
        args_set_int(c, p.info_arg, 0);
    return rc > 0 ? 0 : plan_run(g, c, &p, compute);
}
