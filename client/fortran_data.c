/* fortran_data.c -- the Fortran module's data handles: numrpc_data_put, _new,
 * _get and _free on a type(numrpc_data), checked against the array's descriptor. */
#include <stdio.h>
#include <string.h>

#include "fortran.h"
#include "iface.h"
#include "init.h"
#include "lasterr.h"

/* Called only through the bind(C) interfaces of include/numrpc.f90, where
 * a type(numrpc_data) is a struct of one pointer, passed by reference.
 * Optional arguments left out arrive as NULL. */
NUMRPC_API void numrpc_fortran_data_put(numrpc_data **h, const CFI_cdesc_t *a,
                                        const CFI_cdesc_t *server, int *status);
NUMRPC_API void numrpc_fortran_data_new(numrpc_data **h, const CFI_cdesc_t *mold, const int *rows,
                                        const int *cols, const CFI_cdesc_t *server, int *status);
NUMRPC_API void numrpc_fortran_data_get(numrpc_data *const *h, const CFI_cdesc_t *a, int *status);
NUMRPC_API void numrpc_fortran_data_free(numrpc_data **h, int *status);

/* The optional server= as a C string in buf ("" when absent: the library picks). */
static int server_name(const CFI_cdesc_t *d, char *buf, size_t len, err_t *err)
{
    buf[0] = '\0';
    if (d == NULL) return 0;
    if (d->type != CFI_type_char || d->rank != 0 || d->elem_len >= len)
        return err_set(err, NUMRPC_EINVAL, "server= must be a character scalar of 'host:port'");
    size_t n = d->elem_len;
    memcpy(buf, d->base_addr, n);
    while (n > 0 && buf[n - 1] == ' ') n--;
    buf[n] = '\0';
    return 0;
}

/* An array's numrpc type and its column-major layout: rows is the first
 * extent (1 for a scalar), cols the product of the others. */
static int array_layout(const CFI_cdesc_t *a, const char *what, uint32_t *type, size_t *rows,
                        size_t *cols, err_t *err)
{
    char given[64];
    if (a == NULL || a->base_addr == NULL)
        return err_set(err, NUMRPC_EINVAL, "%s: the array is missing or not allocated", what);
    *type = fortran_element_type(a);
    if (*type == NUMRPC_T_VOID || (*type == NUMRPC_T_CHAR && a->elem_len != 1))
        return err_set(err, NUMRPC_EINVAL,
                       "%s: a handle holds integer, real or complex elements (or character of "
                       "length 1); %s was given",
                       what, fortran_type_name(a, given, sizeof given));
    int64_t elems = fortran_contiguous_elems(a);
    if (elems == INT64_MAX)
        return err_set(err, NUMRPC_EINVAL,
                       "%s: an assumed-size array has no known size; pass one of known shape",
                       what);
    if (elems < 0)
        return err_set(err, NUMRPC_EINVAL, "%s: a strided array section; pass a contiguous array",
                       what);
    *rows = a->rank > 0 ? (size_t)a->dim[0].extent : 1;
    *cols = *rows ? (size_t)elems / *rows : 0;
    if (*rows == 0 || *cols == 0)
        return err_set(err, NUMRPC_EINVAL, "%s: the array is empty", what);
    return 0;
}

static int data_put(numrpc_data **h, const CFI_cdesc_t *a, const CFI_cdesc_t *server)
{
    err_t err;
    err_clear(&err);
    char where[CLIENT_HOST_MAX + 8];
    uint32_t type;
    size_t rows, cols;
    *h = NULL;
    if (server_name(server, where, sizeof where, &err) != 0 ||
        array_layout(a, "numrpc_data_put", &type, &rows, &cols, &err) != 0)
        return client_fail(&err);
    return numrpc_data_put(h, where[0] ? where : NULL, (int)type, a->base_addr, rows, cols, rows);
}

static int data_new(numrpc_data **h, const CFI_cdesc_t *mold, int rows, int cols,
                    const CFI_cdesc_t *server)
{
    err_t err;
    err_clear(&err);
    char where[CLIENT_HOST_MAX + 8], given[64];
    uint32_t type = mold ? fortran_element_type(mold) : NUMRPC_T_VOID;
    *h = NULL;
    if (server_name(server, where, sizeof where, &err) != 0) return client_fail(&err);
    if (type == NUMRPC_T_VOID || (type == NUMRPC_T_CHAR && mold->elem_len != 1)) {
        err_set(&err, NUMRPC_EINVAL,
                "numrpc_data_new: the mold (e.g. 0d0) gives the element type: integer, real or "
                "complex; %s was given",
                mold ? fortran_type_name(mold, given, sizeof given) : "nothing");
        return client_fail(&err);
    }
    if (rows < 1 || cols < 1) {
        err_set(&err, NUMRPC_EINVAL, "numrpc_data_new: rows (%d) and cols (%d) must be positive",
                rows, cols);
        return client_fail(&err);
    }
    return numrpc_data_new(h, where[0] ? where : NULL, (int)type, (size_t)rows, (size_t)cols,
                           (size_t)rows);
}

/* Fills facts for the live handle h, or records why h is none. */
static int live_handle(numrpc_data *h, handle_facts *facts, const char *what, err_t *err)
{
    if (h == NULL || !handles_lookup(h, facts))
        return err_set(err, NUMRPC_ENOHANDLE,
                       "%s: the numrpc_data holds no live handle (never put, or freed)", what);
    return 0;
}

static int data_get(numrpc_data *h, const CFI_cdesc_t *a)
{
    err_t err;
    err_clear(&err);
    handle_facts facts;
    uint32_t type;
    size_t rows, cols;
    if (live_handle(h, &facts, "numrpc_data_get", &err) != 0 ||
        array_layout(a, "numrpc_data_get", &type, &rows, &cols, &err) != 0)
        return client_fail(&err);
    const msg_data_shape *s = &facts.shape;
    /* a matrix keeps the array's first extent as its leading dimension; a
     * rank-1 array takes the handle's columns one after another */
    size_t ld = a->rank >= 2 ? rows : (size_t)s->rows;
    if (type != s->type || ld < s->rows || rows * cols < ld * (s->cols - 1) + s->rows) {
        char given[64];
        err_set(&err, NUMRPC_EINVAL,
                "numrpc_data_get: the handle holds %s %llu x %llu; the array (%s, %zu x %zu) "
                "cannot take it",
                iface_type_name(s->type), (unsigned long long)s->rows,
                (unsigned long long)s->cols, fortran_type_name(a, given, sizeof given), rows, cols);
        return client_fail(&err);
    }
    return numrpc_data_get(h, a->base_addr, ld);
}

static int data_free(numrpc_data **h)
{
    err_t err;
    err_clear(&err);
    handle_facts facts;
    if (live_handle(*h, &facts, "numrpc_data_free", &err) != 0) return client_fail(&err);
    int rc = numrpc_data_free(*h);
    *h = NULL; /* freed here whatever the server said */
    return rc;
}

void numrpc_fortran_data_put(numrpc_data **h, const CFI_cdesc_t *a, const CFI_cdesc_t *server,
                             int *status)
{
    fortran_report(data_put(h, a, server), status, "numrpc_data_put");
}

void numrpc_fortran_data_new(numrpc_data **h, const CFI_cdesc_t *mold, const int *rows,
                             const int *cols, const CFI_cdesc_t *server, int *status)
{
    fortran_report(data_new(h, mold, *rows, *cols, server), status, "numrpc_data_new");
}

void numrpc_fortran_data_get(numrpc_data *const *h, const CFI_cdesc_t *a, int *status)
{
    fortran_report(data_get(*h, a), status, "numrpc_data_get");
}

void numrpc_fortran_data_free(numrpc_data **h, int *status)
{
    fortran_report(data_free(h), status, "numrpc_data_free");
}
