/* lifecycle.c -- numrpc_init and numrpc_finalize: a new configuration,
 * and every module (farm, pool, cache, metaserver reports, handles) reset. */
#include "conn.h"
#include "data.h"
#include "farm.h"
#include "iface_cache.h"
#include "init.h"
#include "lasterr.h"
#include "meta.h"
#include "trust.h"

int numrpc_init(const numrpc_config *c)
{
    err_t err;
    pthread_mutex_lock(&client_lock);
    int rc = client_configure_locked(c, &err);
    pthread_mutex_unlock(&client_lock);
    if (rc != 0) return client_fail(&err);
    farm_shutdown();
    conn_pool_clear();
    iface_cache_clear();
    pthread_mutex_lock(&client_lock);
    config_free_retired(); /* the last connection that could use it is closed */
    pthread_mutex_unlock(&client_lock);
    client_succeed();
    return 0;
}

void numrpc_finalize(void)
{
    meta_finish(); /* reports of finished calls (meta.c) */
    farm_shutdown();
    data_finalize(); /* the process's handles, freed on their servers */
    conn_pool_clear();
    iface_cache_clear();
    pthread_mutex_lock(&client_lock);
    config_forget();
    pthread_mutex_unlock(&client_lock);
    trust_forget(); /* pins and bindings: the next configuration binds anew */
}
