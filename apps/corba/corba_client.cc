// corba_client.cc -- the omniORB baseline client behind corba_client.h: what
// a CORBA user writes to make the calls numrpc makes in one line each.
#include "corba_client.h"

#include <omniORB4/CORBA.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "numbench.hh"

namespace {

CORBA::ORB_var orb;
NumBench::Solver_var solver;
std::string last_error;

int fail(const CORBA::Exception &e)
{
    last_error = e._name();
    return -1;
}

// Puts the reply's sequence into the caller's memory unless the ORB already
// unmarshalled into it.
template <typename Seq, typename T>
void copy_back(const Seq &seq, T *dst, size_t n)
{
    if (reinterpret_cast<const T *>(seq.get_buffer()) != dst)
        std::memcpy(dst, seq.get_buffer(), n * sizeof(T));
}

}  // namespace

extern "C" int corba_client_open(const char *ior_file, char *err, size_t errlen)
{
    std::ifstream in(ior_file);
    std::string ior;
    if (!(in >> ior)) {
        std::snprintf(err, errlen, "cannot read an IOR from %s", ior_file);
        return -1;
    }
    try {
        int argc = 0;
        const char *options[][2] = {{"giopMaxMsgSize", "1073741824"}, {nullptr, nullptr}};
        // BEGIN client setup (CORBA)
        if (CORBA::is_nil(orb)) orb = CORBA::ORB_init(argc, nullptr, "omniORB4", options);
        CORBA::Object_var obj = orb->string_to_object(ior.c_str());
        solver = NumBench::Solver::_narrow(obj);
        // END client setup (CORBA)
        if (CORBA::is_nil(solver)) {
            std::snprintf(err, errlen, "the IOR in %s is not a NumBench::Solver", ior_file);
            return -1;
        }
    } catch (const CORBA::Exception &e) {
        std::snprintf(err, errlen, "CORBA %s", e._name());
        return -1;
    }
    return 0;
}

extern "C" void corba_client_close(void)
{
    // The ORB stays for the life of the process: omniORB cannot be
    // initialised again after destroy(), and a benchmark reconnects.
    solver = NumBench::Solver::_nil();
}

extern "C" const char *corba_last_error(void)
{
    return last_error.c_str();
}

extern "C" int corba_ping(void)
{
    try {
        solver->ping();
    } catch (const CORBA::Exception &e) {
        return fail(e);
    }
    return 0;
}

extern "C" int corba_dcopy(const double *x, double *y, size_t n)
{
    try {
        NumBench::DoubleSeq xs(static_cast<CORBA::ULong>(n), static_cast<CORBA::ULong>(n),
                               const_cast<double *>(x), false);
        NumBench::DoubleSeq_var ys;
        solver->dcopy(xs, ys.out());
        copy_back(ys.in(), y, n);
    } catch (const CORBA::Exception &e) {
        return fail(e);
    }
    return 0;
}

extern "C" int corba_sink(const double *x, size_t n, double *ack)
{
    try {
        NumBench::DoubleSeq xs(static_cast<CORBA::ULong>(n), static_cast<CORBA::ULong>(n),
                               const_cast<double *>(x), false);
        *ack = solver->sink(xs);
    } catch (const CORBA::Exception &e) {
        return fail(e);
    }
    return 0;
}

extern "C" int corba_linpack(const double *a, int lda, int n, int *ipvt, double *b, int *info)
{
    try {
        // BEGIN remote call (CORBA)
        const CORBA::ULong na = static_cast<CORBA::ULong>(lda) * static_cast<CORBA::ULong>(n);
        NumBench::DoubleSeq as(na, na, const_cast<double *>(a), false);
        NumBench::DoubleSeq bs(static_cast<CORBA::ULong>(n), static_cast<CORBA::ULong>(n), b, false);
        NumBench::LongSeq_var ps;
        CORBA::Long inf = 0;
        solver->linpack(as, lda, n, ps.out(), bs, inf);
        copy_back(bs, b, static_cast<size_t>(n));
        copy_back(ps.in(), reinterpret_cast<CORBA::Long *>(ipvt), static_cast<size_t>(n));
        *info = inf;
        // END remote call (CORBA)
    } catch (const CORBA::Exception &e) {
        return fail(e);
    }
    return 0;
}

extern "C" int corba_dgefa(double *a, int lda, int n, int *ipvt, int *info)
{
    try {
        const CORBA::ULong na = static_cast<CORBA::ULong>(lda) * static_cast<CORBA::ULong>(n);
        NumBench::DoubleSeq as(na, na, a, false);
        NumBench::LongSeq_var ps;
        CORBA::Long inf = 0;
        solver->dgefa(as, lda, n, ps.out(), inf);
        copy_back(as, a, na);
        copy_back(ps.in(), reinterpret_cast<CORBA::Long *>(ipvt), static_cast<size_t>(n));
        *info = inf;
    } catch (const CORBA::Exception &e) {
        return fail(e);
    }
    return 0;
}

extern "C" int corba_dgesl(const double *a, int lda, int n, const int *ipvt, double *b, int job)
{
    try {
        const CORBA::ULong na = static_cast<CORBA::ULong>(lda) * static_cast<CORBA::ULong>(n);
        NumBench::DoubleSeq as(na, na, const_cast<double *>(a), false);
        NumBench::LongSeq ps(static_cast<CORBA::ULong>(n), static_cast<CORBA::ULong>(n),
                             reinterpret_cast<CORBA::Long *>(const_cast<int *>(ipvt)), false);
        NumBench::DoubleSeq bs(static_cast<CORBA::ULong>(n), static_cast<CORBA::ULong>(n), b, false);
        solver->dgesl(as, lda, n, ps, bs, job);
        copy_back(bs, b, static_cast<size_t>(n));
    } catch (const CORBA::Exception &e) {
        return fail(e);
    }
    return 0;
}
