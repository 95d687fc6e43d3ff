/* client_files.h -- a call's files on the client: the server's reads of
 * remote files answered while the reply is awaited, OUT files written
 * (client_files.c). */
#ifndef NUMRPC_CLIENT_FILES_H
#define NUMRPC_CLIENT_FILES_H

#include <stdint.h>

#include "conn.h"
#include "iface.h"

/* Remembers the call's arguments: its rfiles are served while it waits. */
void client_files_attach(client_conn *c, const iface_t *f, void *const *argv);
/* Closes the served file and forgets the call. */
void client_files_detach(client_conn *c);
/* Waits for the REPLY to call_id, answering the FILE_READs of the
 * attached call meanwhile, then detaches it and reads the reply's status
 * (as conn_read_reply_status). */
int client_files_await_reply(client_conn *c, uint32_t call_id, err_t *err);
/* Reads the reply's OUT files into the caller's paths; a path that cannot
 * be written is the call's error (the rest of the reply is dropped). */
int client_files_read_reply(client_conn *c, const iface_t *f, void *const *argv, err_t *err);

#endif
