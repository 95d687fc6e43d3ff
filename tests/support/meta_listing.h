// meta_listing.h -- a server's entry in the metaserver's status JSON, read
// from its "servers" array alone (the throughput pairs name servers too).
#ifndef NUMRPC_TESTS_META_LISTING_H
#define NUMRPC_TESTS_META_LISTING_H

#include <stdexcept>
#include <string>

#include "../server/json_mini.h"

// The entry of the server labelled label in status_json's "servers" (Null
// when it is not listed, or the text is not a status).  A server the
// metaserver dropped stays named in "throughput" and "recent": a search of
// the whole text would find it there.
inline Json MetaListedServer(const std::string &status_json, const std::string &label)
{
    try {
        Json status = Json::Parse(status_json);
        for (const Json &s : status["servers"].items)
            if (s.has("server") && s["server"].str == label) return s;
    } catch (const std::runtime_error &) {
    }
    return Json();
}

inline bool MetaLists(const std::string &status_json, const std::string &label)
{
    return MetaListedServer(status_json, label).kind == Json::Object;
}

// A number of the server's entry (-1: not listed, or no such field).
inline double MetaServerNumber(const std::string &status_json, const std::string &label, const std::string &field)
{
    Json s = MetaListedServer(status_json, label);
    return s.has(field) && s[field].kind == Json::Number ? s[field].num : -1;
}

#endif
