// orb_serve.h -- what every omniORB baseline server does around its servant:
// parse --ior-file, start the ORB on loopback, publish the IOR, serve.
#ifndef NUMRPC_APPS_CORBA_ORB_SERVE_H
#define NUMRPC_APPS_CORBA_ORB_SERVE_H

#include <omniORB4/CORBA.h>

// Serves servant (whose reference orb_serve takes over) until the process is
// killed; program names the server in its usage line.  The ORB listens on
// NUMRPC_BENCH_HOST (default 127.0.0.1), port NUMRPC_BENCH_CORBA_PORT (default
// any free one); NUMRPC_BENCH_PUBLISH=host:port makes the IOR name a delay
// proxy in front instead.  Returns the exit status (2 on a usage error).
int orb_serve(int argc, char **argv, const char *program, PortableServer::ServantBase *servant);

#endif
