// grpc_baseline.cc -- the gRPC baseline: a synchronous C++ server and client
// for Ping and Dcopy, with message limits raised for 64 MiB arrays.
#include "grpc_baseline.h"

#include <grpcpp/grpcpp.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include "numbench.grpc.pb.h"

namespace {

class SolverImpl final : public numbench::Solver::Service {
    grpc::Status Ping(grpc::ServerContext *, const numbench::Empty *, numbench::Empty *) override
    {
        return grpc::Status::OK;
    }
    grpc::Status Dcopy(grpc::ServerContext *, const numbench::Doubles *x,
                       numbench::Doubles *y) override
    {
        *y->mutable_v() = x->v();
        return grpc::Status::OK;
    }
    grpc::Status Sink(grpc::ServerContext *, const numbench::Doubles *x,
                      numbench::Ack *ack) override
    {
        int n = x->v_size();
        ack->set_sum(n ? x->v(0) + x->v(n / 2) + x->v(n - 1) : 0.0);
        return grpc::Status::OK;
    }
};

// NUMRPC_BENCH_HOST (e.g. a veth address) or loopback.
std::string bench_host()
{
    const char *h = std::getenv("NUMRPC_BENCH_HOST");
    return h && *h ? h : "127.0.0.1";
}

std::unique_ptr<numbench::Solver::Stub> stub;
std::string last_error;

int fail(const grpc::Status &s)
{
    last_error = s.error_message();
    return -1;
}

}  // namespace

extern "C" int grpc_baseline_serve(const char *port_file)
{
    SolverImpl service;
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort(bench_host() + ":0", grpc::InsecureServerCredentials(), &port);
    builder.SetMaxReceiveMessageSize(-1);
    builder.SetMaxSendMessageSize(-1);
    builder.RegisterService(&service);
    std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
    if (!server || port <= 0) return -1;
    {
        std::ofstream out(std::string(port_file) + ".tmp");
        out << port << "\n";
    }
    std::rename((std::string(port_file) + ".tmp").c_str(), port_file);
    server->Wait();
    return 0;
}

extern "C" int grpc_baseline_open(int port)
{
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    args.SetMaxSendMessageSize(-1);
    auto channel = grpc::CreateCustomChannel(bench_host() + ":" + std::to_string(port),
                                             grpc::InsecureChannelCredentials(), args);
    stub = numbench::Solver::NewStub(channel);
    return stub ? 0 : -1;
}

extern "C" void grpc_baseline_close(void)
{
    stub.reset();
}

extern "C" const char *grpc_baseline_error(void)
{
    return last_error.c_str();
}

extern "C" int grpc_baseline_ping(void)
{
    grpc::ClientContext ctx;
    numbench::Empty in, out;
    grpc::Status s = stub->Ping(&ctx, in, &out);
    return s.ok() ? 0 : fail(s);
}

extern "C" int grpc_baseline_dcopy(const double *x, double *y, size_t n)
{
    grpc::ClientContext ctx;
    numbench::Doubles in, out;
    in.mutable_v()->Add(x, x + n);
    grpc::Status s = stub->Dcopy(&ctx, in, &out);
    if (!s.ok()) return fail(s);
    if (static_cast<size_t>(out.v_size()) != n) {
        last_error = "reply of the wrong length";
        return -1;
    }
    std::memcpy(y, out.v().data(), n * sizeof(double));
    return 0;
}

extern "C" int grpc_baseline_sink(const double *x, size_t n, double *ack)
{
    grpc::ClientContext ctx;
    numbench::Doubles in;
    numbench::Ack out;
    in.mutable_v()->Add(x, x + n);
    grpc::Status s = stub->Sink(&ctx, in, &out);
    if (!s.ok()) return fail(s);
    *ack = out.sum();
    return 0;
}
