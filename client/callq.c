/* callq.c -- queues of call objects (the farm's pending, send and reply
 * queues): push at either end, unlink from anywhere. */
#include "callq.h"

#include <stddef.h>

void callq_push_back(callq *q, call_obj *k)
{
    k->next = NULL;
    if (q->tail) q->tail->next = k;
    else q->head = k;
    q->tail = k;
}

void callq_push_front(callq *q, call_obj *k)
{
    k->next = q->head;
    q->head = k;
    if (q->tail == NULL) q->tail = k;
}

int callq_unlink(callq *q, call_obj *k)
{
    call_obj *prev = NULL;
    for (call_obj *x = q->head; x; prev = x, x = x->next) {
        if (x != k) continue;
        if (prev) prev->next = x->next;
        else q->head = x->next;
        if (q->tail == x) q->tail = prev;
        x->next = NULL;
        return 1;
    }
    return 0;
}
