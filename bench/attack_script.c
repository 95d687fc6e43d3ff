/* attack_script.c -- what the attacker's connections send, written by the
 * message layer (msg.c, msg_control.c, the walker) into a memory stream. */
#include "attack_script.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "marshal.h"
#include "msg.h"
#include "msg_control.h"

/* ---- A write-only stream that appends to an attack_bytes ---- */

static ssize_t capture_send(transport *t, const void *buf, size_t n)
{
    attack_bytes *b = t->session;
    uint8_t *p = realloc(b->p, b->len + n);
    if (p == NULL) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(p + b->len, buf, n);
    b->p = p;
    b->len += n;
    return (ssize_t)n;
}

static ssize_t capture_recv(transport *t, void *buf, size_t n)
{
    (void)t, (void)buf, (void)n;
    errno = EBADF;
    return -1;
}

static int capture_start(transport *t, int server_side, err_t *err)
{
    (void)t, (void)server_side, (void)err;
    return 0;
}

static size_t capture_pending(const transport *t)
{
    (void)t;
    return 0;
}

static void capture_close(transport *t)
{
    t->session = NULL; /* the bytes stay the caller's */
}

static const transport_ops capture_ops = {"capture",     capture_recv,    capture_send,
                                          capture_start, capture_pending, capture_close,
                                          NULL,          NULL,            NULL,
                                          NULL,          NULL};

/* A writer whose messages land in b; free it with wire_writer_free. */
static int capture_writer(wire_writer *w, attack_bytes *b, err_t *err)
{
    int rc = wire_writer_init(w, -1, PROTO_DEFAULT_PACKET, err);
    if (rc == 0) wire_writer_attach(w, (transport){&capture_ops, -1, b});
    return rc;
}

/* ---- The messages ---- */

static const msg_hello attacker_hello = {.version = PROTO_VERSION, .packet_size = PROTO_DEFAULT_PACKET, .peer = "numrpc-attacker"};

int attack_add_hello(attack_bytes *b, err_t *err)
{
    wire_writer w;
    int rc = capture_writer(&w, b, err);
    if (rc == 0) rc = msg_write_hello(&w, 1, &attacker_hello, err);
    wire_writer_free(&w);
    return rc;
}

int attack_add_status(attack_bytes *b, int count, err_t *err)
{
    wire_writer w;
    int rc = capture_writer(&w, b, err);
    for (int i = 0; i < count && rc == 0; i++)
        rc = msg_write_status(&w, (uint32_t)i + 1, err);
    wire_writer_free(&w);
    return rc;
}

/* dcopy's interface as the server at host:port describes it (*f: iface_free). */
static int fetch_dcopy(const char *host, int port, iface_t *f, err_t *err)
{
    msg_conn c;
    msg_hello back;
    uint8_t *blob = NULL;
    uint32_t len = 0;
    int rc = msg_conn_open(&c, host, port, 5000, 5000, PROTO_DEFAULT_PACKET, err);
    if (rc != 0) return rc;
    uint32_t id = msg_conn_next_id(&c);
    rc = msg_write_hello(&c.writer, id, &attacker_hello, err);
    if (rc == 0) rc = msg_read_hello_reply(&c.reader, id, c.label, &back, err);
    if (rc == 0) rc = msg_write_get_iface(&c.writer, id = msg_conn_next_id(&c), "dcopy", err);
    if (rc == 0) rc = msg_read_iface_reply(&c.reader, id, c.label, &blob, &len, err);
    if (rc == 0) rc = iface_decode(blob, len, f, err);
    free(blob);
    msg_conn_free(&c);
    if (rc == 0 && f->nparams != 5) {
        iface_free(f);
        rc = err_set(err, NUMRPC_EINVAL, "dcopy of %s:%d has %u parameters, not 5", host, port,
                     f->nparams);
    }
    return rc;
}

int attack_add_dcopy_call(attack_bytes *b, const char *host, int port, int n, err_t *err)
{
    iface_t f;
    int rc = fetch_dcopy(host, port, &f, err);
    if (rc != 0) return rc;
    double *x = calloc((size_t)n + 1, sizeof *x), *y = calloc((size_t)n + 1, sizeof *y);
    int one = 1;
    void *argv[5] = {&n, x, &one, y, &one};
    iface_shape shapes[5];
    msg_call_header h = {.name = "dcopy", .hash = f.hash, .nargs = f.nparams};
    wire_writer w;
    if (x == NULL || y == NULL)
        rc = err_set(err, NUMRPC_ENOMEM, "dcopy arguments of %d elements", n);
    if (rc == 0) rc = capture_writer(&w, b, err);
    if (rc == 0) {
        rc = marshal_eval_shapes(&f, argv, shapes, err);
        if (rc == 0) rc = msg_write_call_header(&w, 2, &h, err);
        if (rc == 0) rc = marshal_write(&w, &f, argv, shapes, MARSHAL_REQUEST, err);
        if (rc == 0) rc = wire_end(&w, err);
        wire_writer_free(&w);
    }
    free(x);
    free(y);
    iface_free(&f);
    return rc;
}

void attack_bytes_free(attack_bytes *b)
{
    free(b->p);
    b->p = NULL;
    b->len = 0;
}
