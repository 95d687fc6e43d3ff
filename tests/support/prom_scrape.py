#!/usr/bin/python3
# prom_scrape.py -- fetches a URL of an HTTP port (urllib) and, for a page in
# the Prometheus text format, parses it with Debian's python3-prometheus-client
# (the parser Prometheus' own Python client ships) and checks what that parser
# lets pass: a HELP and a TYPE line before each family's samples, no series
# twice, histogram buckets that only grow and end at _count.  Prints one JSON
# object: {"status": N, "body": text} for anything but a 200 answer, else
# {"status": 200, "type": content type, "samples": [{"name", "labels", "value"}],
# "families": {name: type}} or {"status": 200, "error": why}.
#
# usage: prom_scrape.py URL [--bearer NAME:SECRET | --basic NAME:SECRET]
#                           [--cafile CA] [--cert CERT --key KEY] [--raw]
import argparse
import base64
import json
import math
import re
import ssl
import sys
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

NAME = re.compile(r"^numrpc_[a-z0-9_]+$")


def fetch(args):
    req = urllib.request.Request(args.url)
    if args.bearer:
        req.add_header("Authorization", "Bearer " + args.bearer)
    if args.basic:
        req.add_header("Authorization", "Basic " + base64.b64encode(args.basic.encode()).decode())
    context = None
    if args.url.startswith("https:"):
        context = ssl.create_default_context(cafile=args.cafile)
        if args.cert:
            context.load_cert_chain(args.cert, args.key)
    try:
        with urllib.request.urlopen(req, timeout=10, context=context) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode("utf-8", "replace")


def check_layout(text):
    """The rules of the format the parser does not enforce."""
    described, typed, seen = set(), {}, set()
    current = None
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name = line.split(" ", 3)[2]
            if name in described:
                return "family %s described twice" % name
            described.add(name)
            current = None
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            if name not in described:
                return "TYPE of %s without its HELP first" % name
            typed[name] = kind
            current = name
        elif line and not line.startswith("#"):
            series = line.rsplit(" ", 1)[0]
            if series in seen:
                return "series twice: " + series
            seen.add(series)
            base = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0)
            if current is None or not base.startswith(current):
                return "sample %s outside its family" % base
    for name in typed:
        if not NAME.match(name):
            return "metric name %s: not numrpc_ and lower case" % name
    return None


def check_histogram(family):
    by_series = {}
    for s in family.samples:
        labels = {k: v for k, v in s.labels.items() if k != "le"}
        key = json.dumps(labels, sort_keys=True)
        entry = by_series.setdefault(key, {"buckets": [], "count": None})
        if s.name.endswith("_bucket"):
            entry["buckets"].append((float(s.labels["le"]), s.value))
        elif s.name.endswith("_count"):
            entry["count"] = s.value
    for key, entry in by_series.items():
        buckets = sorted(entry["buckets"])
        if not buckets or not math.isinf(buckets[-1][0]):
            return "histogram %s %s has no +Inf bucket" % (family.name, key)
        if any(b[1] < a[1] for a, b in zip(buckets, buckets[1:])):
            return "histogram %s %s: a bucket shrinks" % (family.name, key)
        if buckets[-1][1] != entry["count"]:
            return "histogram %s %s: +Inf bucket is not _count" % (family.name, key)
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("--bearer")
    p.add_argument("--basic")
    p.add_argument("--cafile")
    p.add_argument("--cert")
    p.add_argument("--key")
    p.add_argument("--raw", action="store_true", help="print the body, do not parse it")
    args = p.parse_args()
    try:
        status, ctype, body = fetch(args)
    except (OSError, ssl.SSLError) as e:
        print(json.dumps({"status": 0, "body": str(e)}))
        return 0
    if status != 200 or args.raw:
        print(json.dumps({"status": status, "type": ctype, "body": body}))
        return 0
    out = {"status": status, "type": ctype}
    try:
        families = list(text_string_to_metric_families(body))
    except Exception as e:  # the parser's own complaint, whatever its class
        out["error"] = "prometheus_client refused the page: %r" % (e,)
        print(json.dumps(out))
        return 0
    out["error"] = check_layout(body)
    for f in families:
        if f.type == "histogram" and out["error"] is None:
            out["error"] = check_histogram(f)
    out["families"] = {f.name: f.type for f in families}
    out["samples"] = [{"name": s.name, "labels": s.labels, "value": s.value} for f in families for s in f.samples]
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
