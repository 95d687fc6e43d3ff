// corba_server.cc -- numrpc-corba-server: the omniORB baseline server; serves
// ping, dcopy and the LINPACK routines with the same library numrpc uses.
#include <omniORB4/CORBA.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "numbench.hh"
#include "orb_serve.h"

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
    return orb_serve(argc, argv, "numrpc-corba-server", new SolverImpl());
}
