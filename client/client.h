/* client.h -- what meta.c (the metaserver's client side) uses of the rest
 * of libnumrpc, until it includes the narrow headers itself; no other file
 * of client/ includes this. */
#ifndef NUMRPC_CLIENT_H
#define NUMRPC_CLIENT_H

#include "bind.h"
#include "callobj.h"
#include "config.h"
#include "conn.h"
#include "iface_cache.h"
#include "init.h"
#include "probe.h"

#endif
