/* gridrpc_config.c -- the GridRPC configuration file: servers,
 * packet_size and timeout as "name = value" lines, # comments. */
#include "gridrpc_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gridrpc_err.h"

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) *--e = '\0';
    return s;
}

grpc_error_t gridrpc_read_config(const char *path, numrpc_config *cfg, char *servers, size_t len,
                                double *timeout)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return gridrpc_failf(GRPC_CONFIGFILE_NOT_FOUND, "%s: %s", path, strerror(errno));
    char line[2048];
    int lineno = 0;
    grpc_error_t code = GRPC_NO_ERROR;
    while (code == GRPC_NO_ERROR && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *text = trim(line);
        if (*text == '\0') continue;
        char *eq = strchr(text, '=');
        if (eq == NULL) {
            code = gridrpc_failf(GRPC_CONFIGFILE_ERROR, "%s:%d: want name = value", path, lineno);
            break;
        }
        *eq = '\0';
        char *name = trim(text), *value = trim(eq + 1), *end = NULL;
        if (strcmp(name, "servers") == 0) {
            char list[2048];
            snprintf(list, sizeof list, "%s", value);
            char *save = NULL;
            int n = 0;
            for (char *tok = strtok_r(list, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
                endpoint ep;
                err_t err;
                if (endpoint_set(&ep, tok, &err) != 0 || ++n > CLIENT_MAX_SERVERS) {
                    code = gridrpc_failf(GRPC_CONFIGFILE_ERROR, "%s:%d: servers: \"%s\" %s", path, lineno, tok,
                                 n > CLIENT_MAX_SERVERS ? "is one too many (at most 16)" : "is not host:port");
                    break;
                }
            }
            if (code == GRPC_NO_ERROR && n == 0)
                code = gridrpc_failf(GRPC_CONFIGFILE_ERROR, "%s:%d: servers: an empty list", path, lineno);
            if (code == GRPC_NO_ERROR && strlen(value) >= len)
                code = gridrpc_failf(GRPC_CONFIGFILE_ERROR, "%s:%d: servers: too long", path, lineno);
            if (code == GRPC_NO_ERROR) {
                snprintf(servers, len, "%s", value);
                cfg->servers = servers;
            }
        } else if (strcmp(name, "packet_size") == 0) {
            unsigned long long v = strtoull(value, &end, 10);
            if (*value == '\0' || *end != '\0' || v < 64 || v > (1ull << 30))
                code = gridrpc_failf(GRPC_CONFIGFILE_ERROR, "%s:%d: packet_size: \"%s\" is no byte count", path,
                             lineno, value);
            else cfg->packet_size = (size_t)v;
        } else if (strcmp(name, "timeout") == 0) {
            double v = strtod(value, &end);
            if (*value == '\0' || *end != '\0' || !(v >= 0) || v > 4e6)
                code = gridrpc_failf(GRPC_CONFIGFILE_ERROR, "%s:%d: timeout: \"%s\" is no number of seconds",
                             path, lineno, value);
            else *timeout = v;
        } else {
            code = gridrpc_failf(GRPC_CONFIGFILE_ERROR, "%s:%d: unknown setting \"%s\" (servers, packet_size, timeout)",
                         path, lineno, name);
        }
    }
    fclose(f);
    return code;
}

