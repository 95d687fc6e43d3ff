// sdpa_corba_server.cc -- sdpa-corba-server: SDPA behind omniORB, writing the
// shipped files to a private directory and solving with stubs/sdpa_solve.cc.
#include <omniORB4/CORBA.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "sdpa_corba.hh"
#include "orb_serve.h"
#include "sdpa_solve.h"

namespace {

bool write_bytes(const std::string &path, const SdpaCorba::Bytes &b)
{
    FILE *fp = std::fopen(path.c_str(), "wb");
    if (fp == nullptr) return false;
    bool ok = std::fwrite(b.get_buffer(), 1, b.length(), fp) == b.length();
    return std::fclose(fp) == 0 && ok;
}

SdpaCorba::Bytes *read_bytes(const std::string &path)
{
    SdpaCorba::Bytes *out = new SdpaCorba::Bytes();
    FILE *fp = std::fopen(path.c_str(), "rb");
    if (fp == nullptr) return out;
    std::fseek(fp, 0, SEEK_END);
    long n = std::ftell(fp);
    std::rewind(fp);
    out->length(n > 0 ? static_cast<CORBA::ULong>(n) : 0);
    if (n > 0 && std::fread(out->get_buffer(), 1, static_cast<size_t>(n), fp) != static_cast<size_t>(n))
        out->length(0);
    std::fclose(fp);
    return out;
}

class SolverImpl : public POA_SdpaCorba::Solver {
  public:
    SdpaCorba::Result *solve(const SdpaCorba::Bytes &problem, const SdpaCorba::Bytes &param,
                             CORBA::Boolean want_solution, SdpaCorba::Bytes_out solution) override
    {
        const char *tmp = std::getenv("TMPDIR");
        std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/sdpa-corba-XXXXXX";
        if (mkdtemp(&dir[0]) == nullptr) throw SdpaCorba::SolveError("no temporary directory");
        std::string prob = dir + "/problem.dat-s", par = dir + "/param", sol = dir + "/solution";
        sdpa_result r;
        int rc = -1;
        if (write_bytes(prob, problem) && (param.length() == 0 || write_bytes(par, param)))
            rc = sdpa_solve_isolated(prob.c_str(), nullptr, param.length() ? par.c_str() : nullptr,
                                     want_solution ? sol.c_str() : nullptr, &r);
        else
            std::snprintf(r.message, sizeof r.message, "cannot stage the files");
        solution = want_solution && rc == 0 ? read_bytes(sol) : new SdpaCorba::Bytes();
        unlink(prob.c_str());
        unlink(par.c_str());
        unlink(sol.c_str());
        rmdir(dir.c_str());
        if (rc != 0) throw SdpaCorba::SolveError(r.message);
        SdpaCorba::Result *out = new SdpaCorba::Result();
        out->primal = r.primal;
        out->dual = r.dual;
        std::string phase(r.phase_name);
        out->phase = CORBA::string_dup(phase.substr(0, phase.find(' ')).c_str());
        out->phase_code = r.phase;
        out->iterations = r.iterations;
        out->solve_seconds = r.solve_seconds;
        return out;
    }
};

}  // namespace

int main(int argc, char **argv)
{
    return orb_serve(argc, argv, "sdpa-corba-server", new SolverImpl());
}
