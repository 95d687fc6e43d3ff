// raw_rfile.cc -- the raw rfile client of raw_rfile.h: GET_IFACE, a CALL
// written by the marshal walker, FILE_DATA built packet by packet.
#include "raw_rfile.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vector>

extern "C" {
#include "files.h"
#include "iface.h"
#include "marshal.h"
#include "msg.h"
#include "msg_control.h"
#include "sock.h"
}
#include "support/server_proc.h"

namespace {

const double kDeadlineSeconds = 20;  // a hang, not a slow machine
const uint32_t kCallId = 7, kProbeId = 8, kIfaceId = 6;

// The bytes [offset, offset + n) of path; short at the end of the file.
std::vector<uint8_t> ReadAt(const char *path, uint64_t offset, uint32_t n)
{
    std::vector<uint8_t> out(n);
    int fd = open(path, O_RDONLY);
    ssize_t k = fd < 0 ? -1 : pread(fd, out.data(), n, static_cast<off_t>(offset));
    if (fd >= 0) close(fd);
    out.resize(k > 0 ? static_cast<size_t>(k) : 0);
    return out;
}

// Writes one FILE_DATA the way `answer` says and holds it (the next
// message goes out in the same write).
int WriteAnswer(wire_writer *w, FileAnswer answer, const std::vector<uint8_t> &data, err_t *err)
{
    uint32_t id = answer == FileAnswer::kWrongCallId ? kCallId + 100 : kCallId;
    wire_begin(w, PROTO_FILE_DATA, id);
    if (answer == FileAnswer::kClientError) {
        int rc = wire_put_u32(w, NUMRPC_EIO, err);
        if (rc == 0) rc = wire_put_string(w, "data.bin: the disk went away", err);
        return rc != 0 ? rc : wire_end_held(w, err);
    }
    uint64_t announced = data.size(), sent = data.size();
    std::vector<uint8_t> bytes = data;
    if (answer == FileAnswer::kShort) announced = sent = data.size() - 8;
    if (answer == FileAnswer::kOversized) {
        announced = sent = data.size() + 8;
        bytes.resize(sent, 0x5a);
    }
    if (answer == FileAnswer::kTruncated) sent = data.size() / 2;
    int rc = wire_put_u32(w, NUMRPC_OK, err);
    if (rc == 0) rc = wire_put_string(w, "", err);
    if (rc == 0) rc = wire_put_u64(w, announced, err);
    if (rc == 0) rc = wire_put(w, bytes.data(), static_cast<size_t>(sent), err);
    if (rc == 0) rc = wire_pad8(w, err);
    return rc != 0 ? rc : wire_end_held(w, err);
}

// The interface of routine, fetched with GET_IFACE; false on failure.
bool FetchIface(msg_conn *c, const char *routine, iface_t *f, err_t *err)
{
    uint8_t *blob = nullptr;
    uint32_t len = 0;
    int rc = msg_write_get_iface(&c->writer, kIfaceId, routine, err);
    if (rc == 0) rc = msg_read_iface_reply(&c->reader, kIfaceId, "server", &blob, &len, err);
    if (rc == 0) rc = iface_decode(blob, len, f, err);
    free(blob);
    return rc == 0;
}

int SendCall(msg_conn *c, const iface_t *f, void **argv, iface_shape *shapes, err_t *err)
{
    msg_call_header h = {};
    snprintf(h.name, sizeof h.name, "%s", f->name);
    h.hash = f->hash;
    h.nargs = f->nparams;
    int rc = marshal_eval_shapes(f, argv, shapes, err);
    if (rc == 0) rc = msg_write_call_header(&c->writer, kCallId, &h, err);
    if (rc == 0) rc = marshal_write(&c->writer, f, argv, shapes, MARSHAL_REQUEST, err);
    if (rc == 0) rc = files_write(&c->writer, f, argv, MARSHAL_REQUEST, err);
    if (rc == 0) rc = wire_end(&c->writer, err);
    return rc;
}

// Reads the REPLY to the call (its header read): status and detail, and an
// OK reply's scalars into argv; the rest of the message is dropped.
int ReadCallReply(wire_reader *r, uint32_t type, const iface_t *f, void **argv,
                  const iface_shape *shapes, RawOutcome *out, err_t *err)
{
    int rc = msg_reply_status(r, type, kCallId, kCallId, "server", err);
    if (rc != 0 && wire_reader_broken(r)) return rc;
    if (rc != 0) {  /* the server's error, the message ended */
        out->status = err->code;
        out->detail = err->detail;
        return 0;
    }
    msg_call_result res;
    out->status = NUMRPC_OK;
    rc = msg_read_call_result(r, &res, err);
    if (rc == 0) rc = marshal_read_scalars(r, f, argv, shapes, MARSHAL_REPLY, err);
    if (rc == 0) rc = wire_skip_message(r, err);
    return rc;
}

}  // namespace

const char *FileAnswerName(FileAnswer a)
{
    switch (a) {
    case FileAnswer::kGood: return "good";
    case FileAnswer::kClientError: return "client error";
    case FileAnswer::kWrongCallId: return "wrong call id";
    case FileAnswer::kShort: return "short";
    case FileAnswer::kOversized: return "oversized";
    case FileAnswer::kTruncated: return "truncated";
    case FileAnswer::kNever: return "never";
    }
    return "?";
}

RawOutcome RawRfileCall(int port, const char *routine, void **argv, FileAnswer answer, Probe probe)
{
    RawOutcome out;
    err_t err;
    err_clear(&err);
    msg_conn c;
    if (msg_conn_init(&c, PROTO_DEFAULT_PACKET, &err) != 0) {
        out.end = err.detail;
        return out;
    }
    int fd = connect_loopback(port);
    if (fd < 0) {
        out.end = "cannot connect";
        msg_conn_free(&c);
        return out;
    }
    msg_conn_attach(&c, transport_tcp(fd), "server");
    wire_reader_set_deadline(&c.reader, sock_now() + kDeadlineSeconds);
    iface_t f = {};
    iface_shape shapes[IFACE_MAX_PARAMS];
    const char *path = nullptr;
    int rc = FetchIface(&c, routine, &f, &err) ? 0 : err.code;
    for (uint32_t i = 0; rc == 0 && i < f.nparams; i++)
        if (f.params[i].type == NUMRPC_T_RFILE) path = *static_cast<char **>(argv[i]);
    struct stat st;
    if (rc == 0 && (path == nullptr || stat(path, &st) != 0))
        rc = err_set(&err, NUMRPC_EINVAL, "%s has no readable rfile", routine);
    if (rc == 0) rc = SendCall(&c, &f, argv, shapes, &err);
    bool replied = false, probe_sent = false;
    while (rc == 0 && !(replied && (out.probe_answered || !probe_sent))) {
        uint32_t type, id;
        rc = wire_next_message(&c.reader, &type, &id, &err);
        if (rc != 0) break;
        if (type == PROTO_FILE_READ && id == kCallId) {
            msg_file_read q;
            rc = msg_read_file_read(&c.reader, &q, &err);
            if (rc != 0) break;
            out.file_reads++;
            bool last = q.offset + q.length >= static_cast<uint64_t>(st.st_size);
            if (last && answer == FileAnswer::kNever) continue;
            rc = WriteAnswer(&c.writer, last ? answer : FileAnswer::kGood, ReadAt(path, q.offset, q.length), &err);
            if (rc == 0 && last && probe == Probe::kWithAnswer) {
                rc = msg_write_probe(&c.writer, kProbeId, 0, 0, &err); /* one write with the answer */
                probe_sent = true;
            } else if (rc == 0) {
                rc = wire_flush(&c.writer, &err);
            }
        } else if (type == PROTO_REPLY && id == kCallId) {
            replied = true;
            rc = ReadCallReply(&c.reader, type, &f, argv, shapes, &out, &err);
            if (rc == 0 && probe == Probe::kAfterReply) {
                rc = msg_write_probe(&c.writer, kProbeId, 0, 0, &err);
                probe_sent = true;
            }
        } else if (type == PROTO_REPLY && id == kProbeId) {
            rc = msg_reply_status(&c.reader, type, id, kProbeId, "server", &err);
            if (rc == 0) rc = wire_skip_message(&c.reader, &err);
            out.probe_answered = rc == 0;
        } else {
            rc = err_set(&err, NUMRPC_EPROTO, "unexpected message %u for call %u", type, id);
        }
    }
    if (rc != 0) {
        out.timed_out = err.code == NUMRPC_ETIMEDOUT;
        out.closed = err.code == NUMRPC_EIO;
        out.end = err.detail;
    }
    iface_free(&f);
    msg_conn_free(&c);
    return out;
}

bool RoutineBytes(int port, const char *routine, uint64_t *bytes_in, uint64_t *bytes_out)
{
    err_t err;
    msg_conn c;
    if (msg_conn_init(&c, PROTO_DEFAULT_PACKET, &err) != 0) return false;
    int fd = connect_loopback(port);
    if (fd < 0) {
        msg_conn_free(&c);
        return false;
    }
    msg_conn_attach(&c, transport_tcp(fd), "server");
    wire_reader_set_deadline(&c.reader, sock_now() + kDeadlineSeconds);
    msg_status st = {};
    bool found = false;
    if (msg_write_status(&c.writer, kCallId, &err) == 0 &&
        msg_read_status_reply(&c.reader, kCallId, "server", &st, &err) == 0) {
        for (uint32_t i = 0; i < st.nroutines && !found; i++) {
            if (strcmp(st.rows[i].name, routine) != 0 || !st.rows[i].offered) continue;
            *bytes_in = st.rows[i].bytes_in;
            *bytes_out = st.rows[i].bytes_out;
            found = true;
        }
    }
    msg_status_free(&st);
    msg_conn_free(&c);
    return found;
}
