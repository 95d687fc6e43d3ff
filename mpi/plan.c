/* plan.c -- the course every engine routine takes: arrays to the grid,
 * ScaLAPACK, results back to rank 0, each phase timed (plan.h). */
#include "plan.h"

#include <string.h>

#include "args.h"

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

/* Every array that moves one way (PLAN_IN: to the grid), then the pivots. */
static void move_all(const engine_grid *g, engine_call *c, plan *p, int way)
{
    for (int i = 0; i < p->count; i++) {
        plan_array *a = &p->arrays[i];
        if (!(a->moves & way))
            continue;
        if (way == PLAN_IN)
            dist_scatter(g, args_doubles(c, a->arg), args_int(c, a->ld_arg), &a->d);
        else
            dist_gather(g, &a->d, args_doubles(c, a->arg), args_int(c, a->ld_arg));
    }
    if (p->pivots_arg < 0 || !(p->pivots_moves & way))
        return;
    if (way == PLAN_IN)
        dist_pivots_scatter(g, args_ints(c, p->pivots_arg), &p->pivots);
    else
        dist_pivots_gather(g, &p->pivots, args_ints(c, p->pivots_arg), p->pivots_count);
}

int plan_run(const engine_grid *g, engine_call *c, plan *p, plan_compute_fn compute)
{
    int ok = 1, rc = -1, info = 0;
    for (int i = 0; i < p->count; i++) {
        dist_matrix *d = &p->arrays[i].d;
        ok &= dist_matrix_init(g, d, d->m, d->n) == 0;
    }
    if (p->pivots_arg >= 0)
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
    goto done;
no_memory:
    rc = args_fail_memory(c, p->routine, p->arrays[0].d.m, p->arrays[0].d.n);
done:
    for (int i = 0; i < p->count; i++)
        dist_matrix_free(&p->arrays[i].d);
    dist_pivots_free(&p->pivots);
    return rc;
}
