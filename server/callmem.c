/* callmem.c -- the memory one CALL asks the server for, judged before any
 * of it is allocated or touched: nothing a request does not carry may cost
 * the server more than a small budget. */
#include "callmem.h"

#include "arena.h"

/* Adds b to *sum; false when it overflows. */
static int add(uint64_t *sum, uint64_t b)
{
    return !__builtin_add_overflow(*sum, b, sum);
}

/* Adds elems x size to *sum; false when it overflows. */
static int add_product(uint64_t *sum, uint64_t elems, uint64_t size)
{
    uint64_t bytes;
    return !__builtin_mul_overflow(elems, size, &bytes) && add(sum, bytes);
}

/* Bytes of parameter p's storage in memory, into m. */
static int measure_param(const iface_param *p, const iface_shape *sh, call_memory *m)
{
    int request = iface_param_in_request(p);
    if (p->type == NUMRPC_T_STRING) {
        /* A table of char* the request fills element by element, then a
         * buffer per output string that the routine may fill to its bound. */
        uint64_t table = 0, out = 0;
        uint64_t each = sh->bound >= 0 ? (uint64_t)sh->bound + 1 : 1;
        if (p->rank > 0 && !add_product(&table, sh->mem_elems, sizeof(char *))) return 0;
        if (iface_param_in_reply(p) && !add_product(&out, p->rank > 0 ? sh->wire_elems : 1, each)) return 0;
        return add(&m->string_bytes, table) && add(&m->string_bytes, out) && add(&m->untravelled, table) &&
               add(&m->untravelled, out);
    }
    if (p->rank == 0) return 1;
    uint64_t size = iface_type_size(p->type), block = 0, sent = 0;
    if (!add_product(&block, sh->mem_elems, size) || (request && !add_product(&sent, sh->wire_elems, size)))
        return 0;
    uint64_t aligned = arena_round(block); /* the arena's layout */
    return aligned >= block && sent <= block && add(&m->array_bytes, aligned) && add(&m->sent_bytes, sent) &&
           add(&m->untravelled, block - sent);
}

int callmem_measure(const server_config *cfg, const iface_t *f, const iface_shape *shapes,
                    call_memory *m, err_t *err)
{
    *m = (call_memory){0};
    for (uint32_t i = 0; i < f->nparams; i++) {
        const iface_param *p = &f->params[i];
        if (shapes[i].held) continue; /* a data handle's memory: kept on the server already */
        if (p->rank > 0 && shapes[i].mem_elems > cfg->max_array_elems)
            return err_set(err, NUMRPC_ELIMIT, "%s: %sarray %s has %llu elements, over this server's limit of %llu",
                           f->name, p->type == NUMRPC_T_STRING ? "string " : "", p->name,
                           (unsigned long long)shapes[i].mem_elems, (unsigned long long)cfg->max_array_elems);
        if (!measure_param(p, &shapes[i], m) || m->array_bytes > cfg->max_call_bytes ||
            m->string_bytes > cfg->max_call_bytes - m->array_bytes)
            return err_set(err, NUMRPC_ELIMIT,
                           "%s: arrays of this call need more than this server's limit of %llu bytes",
                           f->name, (unsigned long long)cfg->max_call_bytes);
    }
    /* Sent bytes are at most --max-call-bytes: the product cannot overflow. */
    uint64_t budget = cfg->max_untravelled_bytes, extra = CALLMEM_SENT_FACTOR * m->sent_bytes;
    if (!add(&budget, extra)) budget = UINT64_MAX;
    if (m->untravelled > budget)
        return err_set(err, NUMRPC_ELIMIT,
                       "%s: the call asks for %llu bytes of memory that its request does not fill (output and "
                       "work arrays, gaps between the elements sent), over this server's limit of %llu for it "
                       "(--max-untravelled-bytes %llu plus %d times the %llu array bytes sent)",
                       f->name, (unsigned long long)m->untravelled, (unsigned long long)budget,
                       (unsigned long long)cfg->max_untravelled_bytes, CALLMEM_SENT_FACTOR,
                       (unsigned long long)m->sent_bytes);
    return 0;
}

int callmem_reserve(const server_config *cfg, worker_slot *slot, const iface_t *f,
                    const call_memory *m, err_t *err)
{
    uint64_t bytes = m->array_bytes + m->string_bytes, cap = cfg->max_server_memory, others = 0;
    if (cap == 0 || bytes == 0) return 0;
    if (bytes > cap)
        return err_set(err, NUMRPC_ELIMIT,
                       "%s: the call needs %llu bytes, over this server's limit of %llu for all calls together "
                       "(--max-server-memory)",
                       f->name, (unsigned long long)bytes, (unsigned long long)cap);
    if (slots_reserve_memory(slot, bytes, cap, &others) != 0)
        return err_set(err, NUMRPC_EBUSY,
                       "%s: server memory busy: the call needs %llu bytes, calls in flight hold %llu of the %llu "
                       "this server allows them together (--max-server-memory); try again later",
                       f->name, (unsigned long long)bytes, (unsigned long long)others,
                       (unsigned long long)cap);
    return 0;
}

int callmem_may_keep(const server_config *cfg, const worker_slot *slot, uint64_t kept)
{
    uint64_t cap = cfg->max_server_memory;
    return cap == 0 || kept == 0 || slots_memory_held(slot) + kept <= cap / 2;
}
