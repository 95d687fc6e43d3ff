/* fuzz_msg_client.c -- libFuzzer target: a hostile server's bytes read by
 * every reader a client (libnumrpc, the numrpc CLI) runs on them. */
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "fuzz_support.h"
#include "marshal.h"
#include "msg.h"
#include "msg_control.h"
#include "msg_data.h"

/* Input: byte scenario (mod 9): the request the client sent (call id 1),
 * whose reply it reads: 0 HELLO, 1 LIST, 2 GET_IFACE (then the descriptor
 * decoded), 3 PROBE, 4 CALL, 5 STATUS, 6 ADMIN (challenge, then command,
 * id 2), 7 DATA_PUT, 8 DATA_RENEW of three handles.  For CALL, byte routine (an index into the real interfaces) and
 * one byte per integer scalar (fuzz_args_fill), then the stream.  The
 * client's own arrays and string buffers are exactly as large as its
 * shapes say, so a write past them is caught. */

#define LIST_MAX (1u << 20) /* client/discover.c: routines a server may list */
#define LABEL "127.0.0.1:7800"

/* client/client_files.c serve_read: the server asks for bytes of an rfile
 * while the client waits for the reply; the request is checked, not
 * answered (the answer is the client's writer). */
static int serve_file_read(wire_reader *r, const iface_t *f, err_t *err)
{
    msg_file_read q;
    int rc = msg_read_file_read(r, &q, err);
    if (rc != 0) return rc;
    if (q.length > FILES_MAX_READ) return err_set(err, NUMRPC_EPROTO, "file read too long");
    if (q.param >= f->nparams || f->params[q.param].type != NUMRPC_T_RFILE)
        return err_set(err, NUMRPC_EPROTO, "not a remote file");
    return 0;
}

/* client/call.c and client_files.c: the reply of a CALL into the caller's
 * arguments. */
static void read_call_reply(wire_reader *r, fuzz_cursor *c)
{
    const iface_t *f = fuzz_iface_at(fuzz_take_byte(c) % fuzz_iface_count());
    fuzz_args a;
    err_t err, call_err;
    uint32_t type, id;
    msg_call_result res;
    /* An OUT file the client receives: written, then gone. */
    if (fuzz_args_fill(f, c, "/dev/null", &a) != 0) goto done;
    fuzz_reader_feed(r, c->p, c->left);
    int rc = wire_next_message(r, &type, &id, &err);
    int has_rfile = 0; /* client_files_attach: reads are served for rfiles only */
    for (uint32_t i = 0; i < f->nparams; i++) has_rfile |= f->params[i].type == NUMRPC_T_RFILE;
    while (rc == 0 && type == PROTO_FILE_READ && id == 1 && has_rfile) {
        rc = serve_file_read(r, f, &err);
        if (rc == 0) rc = wire_next_message(r, &type, &id, &err);
    }
    if (rc == 0) rc = msg_reply_status(r, type, id, 1, LABEL, &err);
    if (rc == 0) rc = msg_read_call_result(r, &res, &err);
    if (rc == 0) rc = marshal_read_scalars(r, f, a.argv, a.shapes, MARSHAL_REPLY, &err);
    if (rc == 0) rc = marshal_read_arrays(r, f, a.argv, a.shapes, MARSHAL_REPLY, &err);
    err_clear(&call_err);
    if (rc == 0 && files_read(r, f, a.argv, MARSHAL_REPLY, UINT64_MAX - 1, NULL, NULL, &call_err, &err) != 0)
        rc = call_err.code != 0 ? wire_skip_message(r, &err) : err.code;
    else if (rc == 0)
        rc = wire_expect_end(r, &err);
    if (rc == 0 && call_err.code == 0) /* what the caller then holds */
        marshal_check_strings(f, a.argv, a.shapes, MARSHAL_REPLY, &err);
    fuzz_reader_close();
done:
    fuzz_args_free(f, &a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wire_reader *r = fuzz_reader(PROTO_MAX_PACKET); /* msg_conn_init's limit */
    fuzz_cursor c = {data, size};
    uint8_t scenario = fuzz_take_byte(&c) % 9;
    err_t err;
    if (scenario == 4) {
        read_call_reply(r, &c);
        return 0;
    }
    fuzz_reader_feed(r, c.p, c.left);
    switch (scenario) {
    case 0: {
        msg_hello h;
        msg_read_hello_reply(r, 0, LABEL, &h, &err);
        break;
    }
    case 1: {
        msg_routine_entry *items = NULL;
        uint32_t n = 0;
        if (msg_read_list_reply(r, 1, LABEL, LIST_MAX, &items, &n, &err) == 0) free(items);
        break;
    }
    case 2: {
        uint8_t *blob = NULL;
        uint32_t len = 0;
        iface_t f;
        if (msg_read_iface_reply(r, 1, LABEL, &blob, &len, &err) == 0) {
            if (iface_decode(blob, len, &f, &err) == 0) iface_free(&f);
            free(blob);
        }
        break;
    }
    case 3: {
        uint64_t back;
        msg_read_probe_reply(r, 1, LABEL, &back, &err);
        break;
    }
    case 5: {
        msg_status s;
        if (msg_read_status_reply(r, 1, LABEL, &s, &err) == 0) msg_status_free(&s);
        break;
    }
    case 7: {
        msg_data_id id;
        uint32_t lease;
        if (msg_read_reply(r, 1, LABEL, &err) == 0) msg_read_data_put_reply(r, &id, &lease, &err);
        break;
    }
    case 8: {
        int32_t statuses[3];
        uint32_t lease;
        if (msg_read_reply(r, 1, LABEL, &err) == 0) msg_read_data_ids_reply(r, &lease, statuses, 3, &err);
        break;
    }
    default: {
        uint8_t *nonce = NULL;
        uint32_t len = 0;
        char *text = NULL;
        if (msg_read_admin_challenge_reply(r, 1, LABEL, &nonce, &len, &err) == 0 &&
            msg_read_admin_command_reply(r, 2, LABEL, &text, &err) == 0)
            free(text);
        free(nonce);
    }
    }
    fuzz_reader_close();
    return 0;
}
