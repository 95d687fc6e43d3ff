/* bind_test.c -- the client's second line behind its gate: a call bound
 * again binds each parameter as a value or a pointer as its first bind did. */
#include <stdio.h>
#include <string.h>

#include "bind.h"

static int passed, failed;

static void check(int ok, int line, const char *what, const err_t *err)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    printf("FAIL (line %d): %s; detail: %s\n", line, what, err->detail);
}

int main(void)
{
    /* twoints(IN int a, OUT int *b); the forged one says OUT int *a. */
    iface_param first[2] = {{.name = "a", .type = NUMRPC_T_INT, .mode = IFACE_IN},
                            {.name = "b", .type = NUMRPC_T_INT, .mode = IFACE_OUT}};
    iface_param forged[2] = {{.name = "a", .type = NUMRPC_T_INT, .mode = IFACE_OUT},
                             {.name = "b", .type = NUMRPC_T_INT, .mode = IFACE_OUT}};
    iface_t was = {.name = "twoints", .nparams = 2, .params = first};
    iface_t now = {.name = "twoints", .nparams = 2, .params = forged};
    int out = 0;
    numrpc_arg args[2];
    memset(args, 0, sizeof args);
    args[0].type = NUMRPC_T_INT;
    args[0].v.i = 1; /* a value: never to be written through */
    args[1].type = NUMRPC_T_INT;
    args[1].v.p = &out;
    static call_obj k; /* zeroed, as every call object starts */
    arg_source src = {2, args, NULL};
    err_t err;
    err_clear(&err);

    int rc = call_bind(&k, &was, &src, &err);
    check(rc == 0 && *(int *)k.argv[0] == 1 && k.argv[1] == &out, __LINE__, "the first bind", &err);
    rc = call_bind(&k, &was, &src, &err);
    check(rc == 0, __LINE__, "a second bind to the same parameters", &err);
    rc = call_bind(&k, &now, &src, &err);
    check(rc == NUMRPC_EAUTH &&
              strstr(err.detail, "twoints: parameter a is OUT int of rank 0 now, it was IN int of rank 0") != NULL,
          __LINE__, "a bind that makes the value 1 a pointer is refused", &err);
    printf("bind_test: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
