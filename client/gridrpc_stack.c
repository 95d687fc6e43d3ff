/* gridrpc_stack.c -- GridRPC argument stacks: pointers to a call's
 * arguments pushed one by one (the pointees stay the caller's). */
#include "gridrpc_stack.h"

#include <stdlib.h>

#include "gridrpc_err.h"
#include "iface.h"

grpc_arg_stack_t *grpc_arg_stack_new_np(int maxsize)
{
    if (maxsize < 0 || maxsize > IFACE_MAX_PARAMS * 1024) return NULL;
    grpc_arg_stack_t *s = calloc(1, sizeof *s);
    if (s == NULL) return NULL;
    s->max = maxsize;
    s->items = calloc((size_t)(maxsize ? maxsize : 1), sizeof *s->items);
    if (s->items == NULL) {
        free(s);
        return NULL;
    }
    return s;
}

grpc_error_t grpc_arg_stack_push_arg_np(grpc_arg_stack_t *s, void *arg)
{
    if (s == NULL) return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "grpc_arg_stack_push_arg_np: stack is NULL");
    if (s->n == s->max)
        return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "grpc_arg_stack_push_arg_np: the stack is full (%d)", s->max);
    s->items[s->n++] = arg;
    return gridrpc_finish(GRPC_NO_ERROR, NULL);
}

void *grpc_arg_stack_pop_arg_np(grpc_arg_stack_t *s)
{
    return s && s->n > 0 ? s->items[--s->n] : NULL;
}

grpc_error_t grpc_arg_stack_destruct_np(grpc_arg_stack_t *s)
{
    if (s == NULL) return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "grpc_arg_stack_destruct_np: stack is NULL");
    free(s->items);
    free(s);
    return gridrpc_finish(GRPC_NO_ERROR, NULL);
}

