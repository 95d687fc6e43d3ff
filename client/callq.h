/* callq.h -- queues of call objects linked through their next field
 * (callq.c); the caller holds whatever lock guards the queue. */
#ifndef NUMRPC_CLIENT_CALLQ_H
#define NUMRPC_CLIENT_CALLQ_H

#include "callobj.h"

/* A queue: head and tail, both NULL when empty. */
typedef struct callq {
    call_obj *head, *tail;
} callq;

void callq_push_back(callq *q, call_obj *k);
void callq_push_front(callq *q, call_obj *k);
/* Takes k out of q; 1 if it was there. */
int callq_unlink(callq *q, call_obj *k);

#endif
