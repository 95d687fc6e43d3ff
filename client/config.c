/* config.c -- where libnumrpc sends calls and as whom: numrpc_init's
 * configuration or the environment (NUMRPC_SERVER, NUMRPC_PACKET_SIZE,
 * NUMRPC_TOKEN_FILE, NUMRPC_TLS_*), and numrpc:// URLs. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"
#include "sock.h"
#include "tls.h"

pthread_mutex_t client_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
    int initialised;
    char servers[1024];
    size_t packet_size;
    int has_token;
    token own_token; /* the token file's first line */
    tls_context *tls;     /* NULL: plain TCP (owned)                          */
    tls_context *retired; /* the one numrpc_init replaced, until the pool is cleared */
} config;

/* The setting s of numrpc_config, else the environment's variable. */
static const char *setting(const char *s, const char *env)
{
    const char *v = s ? s : getenv(env);
    return v && *v ? v : NULL;
}

/* The TLS context of c's settings (NULL and no error: no CA, plain TCP). */
static tls_context *tls_of(const numrpc_config *c, err_t *err)
{
    const char *ca = setting(c ? c->tls_ca : NULL, "NUMRPC_TLS_CA");
    const char *cert = setting(c ? c->tls_cert : NULL, "NUMRPC_TLS_CERT");
    const char *key = setting(c ? c->tls_key : NULL, "NUMRPC_TLS_KEY");
    err_clear(err);
    if (ca == NULL && (cert || key)) {
        err_set(err, NUMRPC_EINVAL, "NUMRPC_TLS_CERT and NUMRPC_TLS_KEY need NUMRPC_TLS_CA");
        return NULL;
    }
    tls_context *ctx = ca ? tls_client_context_new(ca, cert, key, err) : NULL;
    if (ca && ctx == NULL) err_prefix(err, "NUMRPC_TLS_CA");
    return ctx;
}

int config_load(const numrpc_config *c, int commit, err_t *err)
{
    const char *servers = c && c->servers ? c->servers : getenv("NUMRPC_SERVER");
    size_t packet = c && c->packet_size ? c->packet_size : 0;
    if (packet == 0) {
        const char *env = getenv("NUMRPC_PACKET_SIZE");
        if (env && *env) {
            char *end;
            unsigned long long v = strtoull(env, &end, 10);
            if (*end != '\0' || v < PROTO_MIN_PACKET || v > PROTO_MAX_PACKET)
                return err_set(err, NUMRPC_EINVAL,
                               "NUMRPC_PACKET_SIZE=%s: want a byte count from %u to %u", env,
                               PROTO_MIN_PACKET, PROTO_MAX_PACKET);
            packet = (size_t)v;
        }
    }
    const char *token_file = c && c->token_file ? c->token_file : getenv("NUMRPC_TOKEN_FILE");
    token own;
    memset(&own, 0, sizeof own);
    int has_token = token_file && *token_file;
    if (has_token && tokens_load_own(token_file, &own, err) != 0) return err->code;
    if (!commit) {
        memset(&own, 0, sizeof own);
        tls_context_free(tls_of(c, err)); /* read the files: a bad one fails here */
        return err->code;
    }
    tls_context *tls = tls_of(c, err);
    if (tls == NULL && err->code != 0) {
        memset(&own, 0, sizeof own);
        return err->code;
    }
    tls_context_free(config.retired); /* never two numrpc_init without a pool clear between */
    config.retired = config.tls;
    config.tls = tls;
    config.has_token = has_token;
    config.own_token = own;
    memset(&own, 0, sizeof own);
    snprintf(config.servers, sizeof config.servers, "%s", servers ? servers : "");
    config.packet_size = packet ? packet : PROTO_DEFAULT_PACKET;
    config.initialised = 1;
    return 0;
}

int config_loaded(void)
{
    return config.initialised;
}

void config_forget(void)
{
    config_free_retired();
    tls_context_free(config.tls);
    config.tls = NULL;
    config.initialised = 0;
    config.has_token = 0;
    memset(&config.own_token, 0, sizeof config.own_token);
}

const token *client_token(void)
{
    return config.has_token ? &config.own_token : NULL;
}

tls_context *client_tls(void)
{
    return config.tls;
}

void config_free_retired(void)
{
    tls_context_free(config.retired);
    config.retired = NULL;
}

size_t client_packet_size(void)
{
    return config.packet_size;
}

int endpoint_set(endpoint *ep, const char *hostport, err_t *err)
{
    int rc = sock_parse_hostport(hostport, ep->host, sizeof ep->host, &ep->port, err);
    if (rc != 0) return rc;
    snprintf(ep->label, sizeof ep->label, "%s:%d", ep->host, ep->port);
    ep->fingerprint[0] = '\0';
    return 0;
}

int config_servers(endpoint *out, err_t *err)
{
    char list[1024];
    pthread_mutex_lock(&client_lock);
    snprintf(list, sizeof list, "%s", config.servers);
    pthread_mutex_unlock(&client_lock);
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(list, ", ", &save); tok && n < CLIENT_MAX_SERVERS;
         tok = strtok_r(NULL, ", ", &save)) {
        int rc = endpoint_set(&out[n], tok, err);
        if (rc != 0) {
            err_prefix(err, "NUMRPC_SERVER");
            return rc;
        }
        n++;
    }
    return n;
}

int client_parse_url(const char *name, endpoint *ep, char *routine,
                     size_t routine_len, err_t *err)
{
    static const char scheme[] = "numrpc://";
    if (strncmp(name, scheme, sizeof scheme - 1) != 0) {
        if (strlen(name) >= routine_len || name[0] == '\0')
            return err_set(err, NUMRPC_EINVAL, "bad routine name \"%s\"", name);
        snprintf(routine, routine_len, "%s", name);
        return 0;
    }
    const char *hostport = name + sizeof scheme - 1;
    const char *slash = strchr(hostport, '/');
    if (slash == NULL || slash[1] == '\0' || (size_t)(slash - hostport) >= CLIENT_HOST_MAX ||
        strlen(slash + 1) >= routine_len)
        return err_set(err, NUMRPC_EINVAL, "bad URL \"%s\" (want numrpc://host:port/routine)", name);
    char hp[CLIENT_HOST_MAX];
    memcpy(hp, hostport, (size_t)(slash - hostport));
    hp[slash - hostport] = '\0';
    int rc = endpoint_set(ep, hp, err);
    if (rc != 0) return rc;
    snprintf(routine, routine_len, "%s", slash + 1);
    return 1;
}
