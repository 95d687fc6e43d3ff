/* attack_script.h -- the bytes a hostile connection sends, built by the
 * message layer's own writers into memory: a HELLO, a CALL of dcopy, STATUS. */
#ifndef NUMRPC_BENCH_ATTACK_SCRIPT_H
#define NUMRPC_BENCH_ATTACK_SCRIPT_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* Bytes of whole messages; p is malloc'd (attack_bytes_free). */
typedef struct attack_bytes {
    uint8_t *p;
    size_t len;
} attack_bytes;

/* Appends a valid HELLO (this protocol version, 4 KiB packets). */
int attack_add_hello(attack_bytes *b, err_t *err);
/* Appends a valid CALL of dcopy(n, x, 1, y, 1), marshalled against the
 * interface the server at host:port hands out (fetched here, within 5 s). */
int attack_add_dcopy_call(attack_bytes *b, const char *host, int port, int n, err_t *err);
/* Appends count STATUS requests (one packet each). */
int attack_add_status(attack_bytes *b, int count, err_t *err);
void attack_bytes_free(attack_bytes *b);

#endif
