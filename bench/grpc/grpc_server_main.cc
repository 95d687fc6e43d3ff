// grpc_server_main.cc -- numrpc-grpc-server: the gRPC baseline server of the
// transfer benchmark; writes its port to the file named on the command line.
#include <cstdio>
#include <cstring>

#include "grpc_baseline.h"

int main(int argc, char **argv)
{
    if (argc != 3 || std::strcmp(argv[1], "--port-file") != 0) {
        std::fprintf(stderr, "usage: numrpc-grpc-server --port-file FILE\n");
        return 2;
    }
    return grpc_baseline_serve(argv[2]) == 0 ? 0 : 1;
}
