// corba_server.cc -- numrpc-corba-server: the omniORB baseline server; serves
// ping, dcopy and the LINPACK routines with the same library numrpc uses.
#include <omniORB4/CORBA.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "numbench.hh"

extern "C" {
#include "linpack_lapack.h"
void dcopy_(const int *n, const double *x, const int *incx, double *y, const int *incy);
}

namespace {

class SolverImpl : public POA_NumBench::Solver {
  public:
    void ping() override {}

    void dcopy(const NumBench::DoubleSeq &x, NumBench::DoubleSeq_out y) override
    {
        int n = static_cast<int>(x.length()), one = 1;
        NumBench::DoubleSeq *out = new NumBench::DoubleSeq(x.length());
        out->length(x.length());
        dcopy_(&n, x.get_buffer(), &one, out->get_buffer(), &one);
        y = out;
    }

    CORBA::Double sink(const NumBench::DoubleSeq &x) override
    {
        CORBA::ULong n = x.length();
        return n ? x[0] + x[n / 2] + x[n - 1] : 0.0;
    }

    void linpack(const NumBench::DoubleSeq &a, CORBA::Long lda, CORBA::Long n,
                 NumBench::LongSeq_out ipvt, NumBench::DoubleSeq &b, CORBA::Long &info) override
    {
        // a is in and discarded after the call, as in numrpc's worker: factor
        // it where the ORB received it instead of paying for a copy.
        double *work = const_cast<double *>(a.get_buffer());
        NumBench::LongSeq *piv = new NumBench::LongSeq(static_cast<CORBA::ULong>(n));
        piv->length(static_cast<CORBA::ULong>(n));
        int l = lda, m = n, i = 0;
        linpack_(work, &l, &m, reinterpret_cast<int *>(piv->get_buffer()),
                 b.get_buffer(), &i);
        info = i;
        ipvt = piv;
    }

    void dgefa(NumBench::DoubleSeq &a, CORBA::Long lda, CORBA::Long n,
               NumBench::LongSeq_out ipvt, CORBA::Long &info) override
    {
        NumBench::LongSeq *piv = new NumBench::LongSeq(static_cast<CORBA::ULong>(n));
        piv->length(static_cast<CORBA::ULong>(n));
        int l = lda, m = n, i = 0;
        dgefa_(a.get_buffer(), &l, &m, reinterpret_cast<int *>(piv->get_buffer()), &i);
        info = i;
        ipvt = piv;
    }

    void dgesl(const NumBench::DoubleSeq &a, CORBA::Long lda, CORBA::Long n,
               const NumBench::LongSeq &ipvt, NumBench::DoubleSeq &b, CORBA::Long job) override
    {
        int l = lda, m = n, j = job;
        dgesl_(const_cast<double *>(a.get_buffer()), &l, &m,
               reinterpret_cast<int *>(const_cast<CORBA::Long *>(ipvt.get_buffer())),
               b.get_buffer(), &j);
    }
};

}  // namespace

int main(int argc, char **argv)
{
    std::string ior_file;
    for (int i = 1; i + 1 < argc; i++)
        if (std::strcmp(argv[i], "--ior-file") == 0) ior_file = argv[i + 1];
    if (ior_file.empty()) {
        std::fprintf(stderr, "usage: numrpc-corba-server --ior-file FILE [-ORB options]\n");
        return 2;
    }
    // Loopback (or env NUMRPC_BENCH_HOST[:port], e.g. a veth address), any
    // free port, messages as large as the benchmarks need.  A benchmark that
    // puts a delay proxy in front sets NUMRPC_BENCH_PUBLISH=host:port, the
    // proxy's address, which the IOR then names.
    const char *host = std::getenv("NUMRPC_BENCH_HOST");
    const char *publish = std::getenv("NUMRPC_BENCH_PUBLISH");
    std::string end_point = std::string("giop:tcp:") + (host && *host ? host : "127.0.0.1") + ":";
    if (const char *port = std::getenv("NUMRPC_BENCH_CORBA_PORT")) end_point += port;
    std::string publish_point = publish ? std::string("giop:tcp:") + publish : "";
    const char *options[][2] = {{"endPoint", end_point.c_str()},
                                {"giopMaxMsgSize", "1073741824"},
                                {publish ? "endPointPublish" : nullptr, publish_point.c_str()},
                                {nullptr, nullptr}};
    CORBA::ORB_var orb = CORBA::ORB_init(argc, argv, "omniORB4", options);
    CORBA::Object_var obj = orb->resolve_initial_references("RootPOA");
    PortableServer::POA_var poa = PortableServer::POA::_narrow(obj);
    SolverImpl *servant = new SolverImpl();
    PortableServer::ObjectId_var id = poa->activate_object(servant);
    CORBA::Object_var ref = poa->id_to_reference(id.in());
    CORBA::String_var ior = orb->object_to_string(ref);
    {
        std::ofstream out(ior_file + ".tmp");
        out << ior.in() << "\n";
    }
    std::rename((ior_file + ".tmp").c_str(), ior_file.c_str());
    servant->_remove_ref();
    poa->the_POAManager()->activate();
    orb->run();
    return 0;
}
