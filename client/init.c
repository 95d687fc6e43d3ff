/* init.c -- the configuration loaded once (numrpc_init or the environment:
 * servers, pins, metaserver) and the servers calls go to. */
#include "init.h"

#include <stdlib.h>

#include "meta.h"
#include "trust.h"

int client_configure_locked(const numrpc_config *c, err_t *err)
{
    int rc = config_load(c, 0, err);
    const char *pins = c && c->pin_file ? c->pin_file : getenv("NUMRPC_PIN_FILE");
    if (rc == 0) rc = trust_configure(pins, err); /* trust.c */
    const char *meta = c && c->metaserver ? c->metaserver : getenv("NUMRPC_METASERVER");
    if (rc == 0 && (rc = meta_configure(meta, err)) != 0) /* meta.c */
        err_prefix(err, c && c->metaserver ? "numrpc_config.metaserver" : "NUMRPC_METASERVER");
    if (rc == 0) rc = config_load(c, 1, err);
    return rc;
}

int client_ensure_init(err_t *err)
{
    pthread_mutex_lock(&client_lock);
    int rc = config_loaded() ? 0 : client_configure_locked(NULL, err);
    pthread_mutex_unlock(&client_lock);
    return rc;
}

int client_servers(endpoint *out, err_t *err)
{
    int n = config_servers(out, err);
    if (n == 0) n = meta_last_servers(out, CLIENT_MAX_SERVERS); /* named by the metaserver lately */
    if (n == 0)
        return err_set(err, NUMRPC_ENOSERVER,
                       "no server: set NUMRPC_SERVER=host:port, call numrpc_init, or name "
                       "the routine numrpc://host:port/routine");
    return n;
}

int client_locate(const char *name, endpoint *eps, char *routine, size_t len, int *pinned,
                  err_t *err)
{
    *pinned = 0;
    int rc = client_ensure_init(err);
    if (rc == 0) rc = client_parse_url(name, &eps[0], routine, len, err);
    if (rc < 0) return rc;
    *pinned = rc;
    return rc == 1 ? 1 : client_servers(eps, err);
}
