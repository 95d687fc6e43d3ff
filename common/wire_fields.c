/* wire_fields.c -- single XDR values (u32, u64, double, string, opaque) in
 * a framed message: the fields of every message header; a reader's hook. */
#include "wire.h"

#include <rpc/xdr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void wire_reader_set_side(wire_reader *r, uint32_t type,
                          int (*fn)(wire_reader *r, uint32_t call_id, void *arg, err_t *err), void *arg)
{
    r->side_type = fn ? type : 0;
    r->side_fn = fn;
    r->side_arg = arg;
}


static int put_xdr(wire_writer *w, xdrproc_t proc, void *value, err_t *err)
{
    uint8_t enc[16];
    XDR x;
    xdrmem_create(&x, (char *)enc, sizeof enc, XDR_ENCODE);
    bool_t ok = proc(&x, value);
    u_int n = xdr_getpos(&x);
    xdr_destroy(&x);
    if (!ok) return err_set(err, NUMRPC_EINTERNAL, "XDR encoding failed");
    return wire_put(w, enc, n, err);
}

static int get_xdr(wire_reader *r, xdrproc_t proc, void *value, size_t n, err_t *err)
{
    uint8_t enc[16];
    int rc = wire_get(r, enc, n, err);
    if (rc != 0) return rc;
    XDR x;
    xdrmem_create(&x, (char *)enc, (u_int)n, XDR_DECODE);
    bool_t ok = proc(&x, value);
    xdr_destroy(&x);
    return ok ? 0 : err_set(err, NUMRPC_EPROTO, "XDR decoding failed");
}

int wire_put_u32(wire_writer *w, uint32_t v, err_t *err)
{
    return put_xdr(w, (xdrproc_t)xdr_u_int, &v, err);
}

int wire_put_u64(wire_writer *w, uint64_t v, err_t *err)
{
    return put_xdr(w, (xdrproc_t)xdr_uint64_t, &v, err);
}

int wire_put_double(wire_writer *w, double v, err_t *err)
{
    return put_xdr(w, (xdrproc_t)xdr_double, &v, err);
}

int wire_get_u32(wire_reader *r, uint32_t *v, err_t *err)
{
    return get_xdr(r, (xdrproc_t)xdr_u_int, v, 4, err);
}

int wire_get_u64(wire_reader *r, uint64_t *v, err_t *err)
{
    return get_xdr(r, (xdrproc_t)xdr_uint64_t, v, 8, err);
}

int wire_get_double(wire_reader *r, double *v, err_t *err)
{
    return get_xdr(r, (xdrproc_t)xdr_double, v, 8, err);
}

int wire_put_opaque(wire_writer *w, const void *p, uint32_t len, err_t *err)
{
    static const uint8_t zeros[4];
    int rc = wire_put_u32(w, len, err);
    if (rc == 0) rc = wire_put(w, p, len, err);
    if (rc == 0) rc = wire_put(w, zeros, (4 - (len & 3)) & 3, err);
    return rc;
}

int wire_put_string(wire_writer *w, const char *s, err_t *err)
{
    size_t len = s ? strlen(s) : 0;
    if (len > WIRE_MAX_STRING)
        return err_set(err, NUMRPC_ELIMIT, "string of %zu bytes exceeds %u", len, WIRE_MAX_STRING);
    return wire_put_opaque(w, s ? s : "", (uint32_t)len, err);
}

int wire_get_opaque(wire_reader *r, uint8_t **out, uint32_t *len,
                       uint32_t max, err_t *err)
{
    uint8_t pad[4];
    int rc = wire_get_u32(r, len, err);
    if (rc != 0) return rc;
    if (*len > max)
        return err_set(err, NUMRPC_ELIMIT, "field of %u bytes exceeds the limit of %u", *len, max);
    uint8_t *p = malloc((size_t)*len + 1);
    if (p == NULL) return err_set(err, NUMRPC_ENOMEM, "field of %u bytes", *len);
    rc = wire_get(r, p, *len, err);
    if (rc == 0) rc = wire_get(r, pad, (4 - (*len & 3)) & 3, err);
    if (rc != 0) {
        free(p);
        return rc;
    }
    p[*len] = '\0';
    *out = p;
    return 0;
}

int wire_get_string(wire_reader *r, char **out, uint32_t max, err_t *err)
{
    uint32_t len;
    return wire_get_opaque(r, (uint8_t **)out, &len, max, err);
}

int wire_get_string_into(wire_reader *r, char *buf, size_t size, uint32_t max, err_t *err)
{
    char *s = NULL;
    int rc = wire_get_string(r, &s, max, err);
    if (rc == 0) snprintf(buf, size, "%s", s);
    free(s);
    return rc;
}
