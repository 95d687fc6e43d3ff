/* web.c -- the metaserver's HTTP port (--http-port): the status page at /,
 * the JSON it refreshes from at /status.json, and /metrics. */
#include "metaserver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hmac.h"
#include "http_port.h"
#include "prom.h"

/* The page (status_page.html, made into a C string by the Makefile). */
extern const char status_page_html[];

static http_port *port;
/* The page's Content-Security-Policy: its own inline script and style
 * (by their SHA-256) and fetches from its own origin, nothing else. */
static char page_policy[512];

static void log_line(void *owner, const char *line)
{
    const meta_options *o = owner;
    if (o->quiet) return;
    printf("%s\n", line);
    fflush(stdout);
}

static int render_page(void *owner, strbuf *out)
{
    (void)owner;
    strbuf_printf(out, "%s", status_page_html);
    return out->failed ? -1 : 0;
}

static int render_json(void *owner, strbuf *out)
{
    (void)owner;
    char *text = table_status(1);
    if (text == NULL) return -1;
    strbuf_printf(out, "%s", text);
    free(text);
    return out->failed ? -1 : 0;
}

/* 'sha256-BASE64' of the text between open and close in the page ("" when
 * the page has no such element). */
static void source_hash(const char *open, const char *close, char *out, size_t len)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *from = strstr(status_page_html, open), *to = from ? strstr(from, close) : NULL;
    out[0] = '\0';
    if (to == NULL) return;
    from += strlen(open);
    uint8_t h[HMAC_SHA256_BYTES + 1] = {0}; /* one byte of room for the last triple */
    sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, from, (size_t)(to - from));
    sha256_final(&c, h);
    char b64[48];
    size_t n = 0;
    for (size_t i = 0; i < HMAC_SHA256_BYTES; i += 3) {
        uint32_t v = (uint32_t)h[i] << 16 | (uint32_t)h[i + 1] << 8 | (i + 2 < HMAC_SHA256_BYTES ? h[i + 2] : 0);
        b64[n++] = digits[v >> 18 & 63];
        b64[n++] = digits[v >> 12 & 63];
        b64[n++] = i + 1 < HMAC_SHA256_BYTES ? digits[v >> 6 & 63] : '=';
        b64[n++] = i + 2 < HMAC_SHA256_BYTES ? digits[v & 63] : '=';
    }
    b64[n] = '\0';
    snprintf(out, len, "'sha256-%s'", b64);
}

static const http_route routes[] = {
    {"/", "text/html; charset=utf-8", page_policy, render_page},
    {"/status.json", "application/json", NULL, render_json},
    {"/metrics", PROM_CONTENT_TYPE, NULL, metrics_render},
};

int web_start(const meta_options *opt, err_t *err)
{
    if (opt->http_port < 0 || port != NULL) return 0;
    char script[64], style[64];
    source_hash("<script>", "</script>", script, sizeof script);
    source_hash("<style>", "</style>", style, sizeof style);
    snprintf(page_policy, sizeof page_policy,
             "default-src 'none'; script-src %s; style-src %s; connect-src 'self'; base-uri 'none'; "
             "form-action 'none'; frame-ancestors 'none'",
             script, style);
    token_table tokens = {0};
    if (rights_copy(&tokens) != 0) return err_set(err, NUMRPC_ENOMEM, "--http-port: tokens");
    http_port_options o = {.bind_addr = opt->bind_addr,
                           .port = opt->http_port,
                           .port_file = opt->http_port_file,
                           .tls_cert = opt->tls_cert,
                           .tls_key = opt->tls_key,
                           .tls_client_ca = opt->tls_client_ca,
                           .allow_insecure = opt->allow_insecure,
                           .timeout_s = opt->http_timeout,
                           .tokens = &tokens,
                           .routes = routes,
                           .nroutes = (int)(sizeof routes / sizeof routes[0]),
                           .owner = (void *)opt,
                           .log = log_line};
    int bound = 0;
    port = http_port_start(&o, &bound, err);
    tokens_free(&tokens);
    if (port == NULL) return err->code;
    if (!opt->quiet) {
        printf("status page on %s://%s:%d/ (/status.json, /metrics)%s\n", opt->tls_cert[0] ? "https" : "http",
               opt->bind_addr, bound, rights_on() ? ", a `status` token required" : "");
        fflush(stdout);
    }
    return 0;
}

void web_reload_tokens(void)
{
    token_table tokens = {0};
    if (port == NULL || rights_copy(&tokens) != 0) return;
    http_port_set_tokens(port, &tokens);
    tokens_free(&tokens);
}
