// sdpa_corba_client.cc -- sdpa-corba: the CORBA baseline's client; what a user
// writes to run SDPA through omniORB (the lines between the CLIENT markers
// are the count docs/sdpa.md compares with sdpa-remote's one line).
#include <omniORB4/CORBA.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "sdpa_corba.hh"

int main(int argc, char **argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: sdpa-corba IORFILE PROBLEM.dat-s [PARAM|- [SOLUTION]]\n");
        return 2;
    }
    const char *ior_file = argv[1], *problem = argv[2];
    const char *param = argc > 3 && std::strcmp(argv[3], "-") != 0 ? argv[3] : nullptr;
    const char *solution = argc > 4 ? argv[4] : nullptr;
    auto t0 = std::chrono::steady_clock::now();
    // CLIENT BEGIN
    const char *options[][2] = {{"giopMaxMsgSize", "1073741824"}, {nullptr, nullptr}};
    CORBA::ORB_var orb = CORBA::ORB_init(argc, argv, "omniORB4", options);
    std::ifstream ior_in(ior_file);
    std::string ior((std::istreambuf_iterator<char>(ior_in)), std::istreambuf_iterator<char>());
    CORBA::Object_var obj = orb->string_to_object(ior.c_str());
    SdpaCorba::Solver_var solver = SdpaCorba::Solver::_narrow(obj);
    SdpaCorba::Bytes files[2];
    const char *paths[2] = {problem, param};
    for (int f = 0; f < 2; f++) {
        if (paths[f] == nullptr) continue;
        std::ifstream in(paths[f], std::ios::binary);
        if (!in) {
            std::fprintf(stderr, "sdpa-corba: cannot read %s\n", paths[f]);
            return 1;
        }
        std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        files[f].length(static_cast<CORBA::ULong>(bytes.size()));
        if (!bytes.empty()) std::memcpy(files[f].get_buffer(), bytes.data(), bytes.size());
    }
    SdpaCorba::Bytes_var sol;
    SdpaCorba::Result_var r;
    try {
        r = solver->solve(files[0], files[1], solution != nullptr, sol.out());
    } catch (const SdpaCorba::SolveError &e) {
        std::fprintf(stderr, "sdpa-corba: %s\n", e.message.in());
        return 1;
    } catch (const CORBA::Exception &e) {
        std::fprintf(stderr, "sdpa-corba: CORBA exception %s\n", e._name());
        return 1;
    }
    if (solution != nullptr) {
        std::ofstream out(solution, std::ios::binary);
        out.write(reinterpret_cast<const char *>(sol->get_buffer()), sol->length());
    }
    // CLIENT END
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("phase.value  = %s\nobjValPrimal = %+.16e\nobjValDual   = %+.16e\niteration    = %d\n",
                r->phase.in(), r->primal, r->dual, static_cast<int>(r->iterations));
    std::printf("solve_seconds = %.6f\nwall_seconds = %.6f\n", r->solve_seconds, wall);
    orb->destroy();
    return 0;
}
