/* config.h -- where libnumrpc sends calls: server endpoints, the
 * configuration (numrpc_init or the environment) and numrpc:// URLs. */
#ifndef NUMRPC_CLIENT_CONFIG_H
#define NUMRPC_CLIENT_CONFIG_H

#include <pthread.h>
#include <stddef.h>

#include "error.h"
#include "numrpc.h"
#include "tokens.h"

#define CLIENT_MAX_SERVERS 16
#define CLIENT_HOST_MAX 256
#define CLIENT_FINGERPRINT_MAX 65 /* SHA-256 in hex, and its NUL */

/* One server endpoint. */
typedef struct endpoint {
    char host[CLIENT_HOST_MAX];
    int port;
    char label[CLIENT_HOST_MAX + 8]; /* "host:port" */
    /* Under TLS: the certificate it must present, as its JOIN announced it
     * to the metaserver ("" = any the CA vouches for, e.g. NUMRPC_SERVER's). */
    char fingerprint[CLIENT_FINGERPRINT_MAX];
} endpoint;

/* Guards the configuration, the connection pool and the interface cache. */
extern pthread_mutex_t client_lock;

/* Checks c (NULL: the environment) and, with commit, makes it the
 * configuration (client_lock held). */
int config_load(const numrpc_config *c, int commit, err_t *err);
/* True once a configuration is loaded (client_lock held). */
int config_loaded(void);
/* Forgets the configuration (client_lock held). */
void config_forget(void);
/* The servers NUMRPC_SERVER or numrpc_init named; fills up to
 * CLIENT_MAX_SERVERS, returns the count (0: none) or an error. */
int config_servers(endpoint *out, err_t *err);
size_t client_packet_size(void);
/* The token this process proves to servers (NUMRPC_TOKEN_FILE or
 * numrpc_config.token_file), or NULL.  Set while a configuration is loaded. */
const token *client_token(void);
/* The TLS context every connection uses (NUMRPC_TLS_CA or
 * numrpc_config.tls_ca), or NULL for plain TCP.  Set while a configuration
 * is loaded; a context replaced by numrpc_init stays valid until
 * config_free_retired. */
struct tls_context *client_tls(void);
/* Frees the contexts of earlier configurations, once no connection can use
 * them (the pool cleared, the farm stopped). */
void config_free_retired(void);
/* Splits "numrpc://host:port/routine" into its endpoint and routine name;
 * returns 1 if name was such a URL, 0 if a plain name, or an error. */
int client_parse_url(const char *name, endpoint *ep, char *routine, size_t routine_len,
                     err_t *err);
int endpoint_set(endpoint *ep, const char *hostport, err_t *err);

#endif
