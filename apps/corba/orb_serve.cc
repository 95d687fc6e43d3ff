// orb_serve.cc -- the ORB set-up the omniORB baseline servers share: options
// from the benchmark's environment, the IOR written atomically, the loop.
#include "orb_serve.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

int orb_serve(int argc, char **argv, const char *program, PortableServer::ServantBase *servant)
{
    std::string ior_file;
    for (int i = 1; i + 1 < argc; i++)
        if (std::strcmp(argv[i], "--ior-file") == 0) ior_file = argv[i + 1];
    if (ior_file.empty()) {
        std::fprintf(stderr, "usage: %s --ior-file FILE [-ORB options]\n", program);
        servant->_remove_ref();
        return 2;
    }
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
