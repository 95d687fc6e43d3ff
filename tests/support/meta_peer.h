// meta_peer.h -- a raw connection to a metaserver (or a server) for the
// metaserver tests, speaking as a hostile or honest peer would: HELLO with
// or without a token, JOIN with any descriptors, QUERY, REPORT, STATUS.
#ifndef NUMRPC_TESTS_META_PEER_H
#define NUMRPC_TESTS_META_PEER_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

extern "C" {
#include "auth.h"
#include "iface.h"
#include "msg.h"
#include "msg_meta.h"
#include "protocol.h"
#include "sock.h"
#include "transport.h"
}

// One routine's descriptor as a server announces it (owned).
struct Routine {
    msg_meta_routine r = {};
    ~Routine() { free(r.blob); }
};

// A raw connection to a metaserver (or a server), from source address src,
// speaking as a hostile or honest peer would; proves the token of the file
// token_file ("" = none) at hello().
class Peer {
  public:
    Peer(int port, const std::string &token_file = "", const char *src = "127.0.0.1") : token_file_(token_file)
    {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a = {};
        a.sin_family = AF_INET;
        inet_pton(AF_INET, src, &a.sin_addr);
        sockaddr_in to = a;
        to.sin_port = htons((uint16_t)port);
        inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
        sock_set_timeouts(fd, 5000, 5000);
        ok_ = fd >= 0 && bind(fd, (sockaddr *)&a, sizeof a) == 0 && connect(fd, (sockaddr *)&to, sizeof to) == 0 &&
              msg_conn_init(&c_, PROTO_DEFAULT_PACKET, &err_) == 0;
        if (ok_) msg_conn_attach(&c_, transport_tcp(fd), "peer");
        else if (fd >= 0) close(fd);
    }
    ~Peer()
    {
        if (ok_) msg_conn_free(&c_);
    }
    // HELLO (and, with a token, the proofs both ways and AUTH's reply).
    int hello()
    {
        msg_hello h = {};
        h.version = PROTO_VERSION;
        h.packet_size = PROTO_DEFAULT_PACKET;
        snprintf(h.peer, sizeof h.peer, "meta_auth_test");
        uint32_t id = next(), auth_id = next();
        int proving = 0;
        int rc = auth_client_hello_file(&c_, token_file_.c_str(), &h, id, auth_id, &proving, &err_);
        if (rc == 0 && proving) return auth_client_finish(&c_, auth_id, &err_);
        if (rc == 0) rc = msg_write_hello(&c_.writer, id, &h, &err_);
        if (rc == 0) rc = msg_read_hello_reply(&c_.reader, id, "peer", &h, &err_);
        return rc;
    }
    // JOIN announcing routines at host:port with slots and a flat speed,
    // under a server name.
    int join(const std::string &host, int port, const std::vector<const Routine *> &routines, uint32_t slots = 2,
             double flops = 1e9, const char *name = "meta_auth_test")
    {
        std::vector<msg_meta_routine> list;
        for (const Routine *r : routines) list.push_back(r->r);
        msg_meta_join j = {};
        snprintf(j.host, sizeof j.host, "%s", host.c_str());
        j.port = (uint32_t)port;
        snprintf(j.name, sizeof j.name, "%s", name);
        j.slots = slots;
        j.curve.npoints = 1;
        j.curve.n[0] = 512;
        j.curve.rate[0] = flops;
        j.routines = list.data();
        j.nroutines = (uint32_t)list.size();
        uint32_t id = next();
        msg_meta_joined joined;
        int rc = msg_write_meta_join(&c_.writer, id, &j, &err_);
        if (rc == 0) rc = msg_read_reply(&c_.reader, id, "peer", &err_);
        if (rc == 0) rc = msg_read_meta_join_reply(&c_.reader, &joined, &err_);
        return rc;
    }
    int load(uint32_t in_flight)
    {
        msg_meta_load l = {.in_flight = in_flight, .queued = 0, .draining = 0, .loadavg = 0};
        return msg_write_meta_load(&c_.writer, next(), &l, &err_);
    }
    // QUERY for a call of 1e12 flops (a placement that lasts): the servers
    // named, best first ("host:port"), in *out.
    int query(const char *routine, std::vector<std::string> *out = nullptr)
    {
        msg_meta_query q = {};
        snprintf(q.routine, sizeof q.routine, "%s", routine);
        q.flops = 1e12;
        q.max_servers = 8;
        msg_meta_ranked got[8];
        uint32_t id = next(), lease = 0, n = 0;
        int rc = msg_write_meta_query(&c_.writer, id, &q, &err_);
        if (rc == 0) rc = msg_read_reply(&c_.reader, id, "peer", &err_);
        if (rc == 0) rc = msg_read_meta_query_reply(&c_.reader, &lease, got, 8, &n, &err_);
        for (uint32_t i = 0; rc == 0 && out && i < n; i++)
            out->push_back(std::string(got[i].host) + ":" + std::to_string(got[i].port));
        return rc;
    }
    int status(std::string *text = nullptr)
    {
        uint32_t id = next();
        char *got = nullptr;
        int rc = msg_write_meta_status(&c_.writer, id, MSG_META_STATUS_JSON, &err_);
        if (rc == 0) rc = msg_read_reply(&c_.reader, id, "peer", &err_);
        if (rc == 0) rc = msg_read_meta_status_reply(&c_.reader, &got, &err_);
        if (rc == 0 && text) *text = got;
        free(got);
        return rc;
    }
    // The speed (flop/s) the metaserver predicts for routine at flops on
    // server, from a QUERY's answer (0: not named, -1: no answer).
    double speed(const char *routine, double flops, const std::string &server)
    {
        msg_meta_query q = {};
        snprintf(q.routine, sizeof q.routine, "%s", routine);
        q.flops = flops;
        q.max_servers = 8;
        msg_meta_ranked got[8];
        uint32_t id = next(), lease = 0, n = 0;
        if (msg_write_meta_query(&c_.writer, id, &q, &err_) != 0 || msg_read_reply(&c_.reader, id, "peer", &err_) != 0 ||
            msg_read_meta_query_reply(&c_.reader, &lease, got, 8, &n, &err_) != 0)
            return -1;
        for (uint32_t i = 0; i < n; i++)
            if (std::string(got[i].host) + ":" + std::to_string(got[i].port) == server) return got[i].flops_per_second;
        return 0;
    }
    // A finished call on server (one-way; sent at once): flops done in
    // seconds (0 flops: a call that teaches no speed).
    int report(const std::string &server, const char *routine, double flops = 0, double seconds = 1e-4)
    {
        msg_meta_call call = {};
        snprintf(call.server, sizeof call.server, "%s", server.c_str());
        snprintf(call.routine, sizeof call.routine, "%s", routine);
        call.flops = flops;
        call.total_seconds = call.compute_seconds = seconds;
        int rc = msg_write_meta_report(&c_.writer, next(), &call, 1, &err_);
        if (rc == 0 && wire_writer_holding(&c_.writer)) rc = wire_flush(&c_.writer, &err_);
        return rc;
    }
    // LIST: the routine names offered, in *out.
    int list(std::vector<std::string> *out)
    {
        uint32_t id = next(), count = 0;
        msg_routine_entry *names = nullptr;
        int rc = msg_write_list(&c_.writer, id, &err_);
        if (rc == 0) rc = msg_read_list_reply(&c_.reader, id, "peer", 4096, &names, &count, &err_);
        for (uint32_t i = 0; rc == 0 && i < count; i++) out->push_back(names[i].name);
        free(names);
        return rc;
    }
    // The descriptor of routine (from a server or the metaserver).
    int descriptor(const char *routine, Routine *out)
    {
        uint32_t id = next();
        iface_t f;
        snprintf(out->r.name, sizeof out->r.name, "%s", routine);
        int rc = msg_write_get_iface(&c_.writer, id, routine, &err_);
        if (rc == 0) rc = msg_read_iface_reply(&c_.reader, id, "peer", &out->r.blob, &out->r.len, &err_);
        if (rc == 0) rc = iface_decode(out->r.blob, out->r.len, &f, &err_);
        if (rc == 0) {
            out->r.hash = f.hash;
            iface_free(&f);
        }
        return rc;
    }
    // True when the other end closes the connection within 2 s.
    bool closed()
    {
        pollfd p = {.fd = msg_conn_fd(&c_), .events = POLLIN, .revents = 0};
        char b;
        return poll(&p, 1, 2000) == 1 && recv(p.fd, &b, 1, MSG_PEEK) == 0;
    }
    std::string detail() const { return err_.detail; }

  private:
    uint32_t next() { return ++id_; }
    std::string token_file_;
    bool ok_ = false;
    msg_conn c_ = {};
    err_t err_ = {};
    uint32_t id_ = 0;
};

#endif
