/* call.h -- one exchange of a call object on one connection: prepare,
 * write the CALL, read the reply's status and results (call.c, which also
 * holds the blocking call numrpc_callv built on them). */
#ifndef NUMRPC_CLIENT_CALL_H
#define NUMRPC_CLIENT_CALL_H

#include "bind.h"
#include "callobj.h"
#include "conn.h"

/* Evaluates the shapes of k (bound to f), checks them, the data handles
 * among its arguments (which must live on server label) and the deadline. */
int call_prepare(call_obj *k, const iface_t *f, const char *label, err_t *err);
/* Writes k's CALL on c with call id k->wire_id (after call_prepare); with
 * hold, the request stays in c's writer to go out with the next one (the
 * caller flushes before it waits). */
int call_write(call_obj *k, client_conn *c, const iface_t *f, int hold, err_t *err);
/* call_prepare, then call_write. */
int call_send(call_obj *k, client_conn *c, const iface_t *f, err_t *err);
/* Reads the reply's status and compute seconds (a failed status is the
 * server's error; the message is then ended).  No wait outlasts the
 * call's deadline plus CALL_DEADLINE_GRACE (the connection is then
 * broken: wire_reader_broken). */
int call_receive_status(call_obj *k, client_conn *c, err_t *err);
/* Records which server ran the call (a bounded copy of label). */
void call_set_server(numrpc_call_info *info, const char *label);
/* Reads the out scalars and arrays into the caller's memory. */
int call_receive_results(call_obj *k, client_conn *c, const iface_t *f, err_t *err);
/* The blocking call of name with src's arguments, in this thread; its
 * outcome is also the thread's last error and call info (lasterr.h).
 * expect_pin: a typed header's pin line the server's interface must match
 * before the arguments are bound (trust_expect), or NULL. */
int call_run(const char *name, arg_source *src, const char *expect_pin);
/* The process-wide timeout of new calls in seconds (0 = none). */
double call_timeout(void);

#endif
