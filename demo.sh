#!/usr/bin/env bash
# demo.sh -- the quick start's first command: installs what is missing, builds,
# starts a metaserver and two servers on localhost, and makes real remote calls.
# ./demo.sh --secure does the same over TLS (mutual) with tokens, with a CA,
# certificates and tokens it makes for the run (scripts/demo-run.sh).
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
case "${1-}" in
  "" | --secure) ;;
  *) echo "usage: ./demo.sh [--secure]" >&2; exit 2 ;;
esac
"$top/scripts/deps.sh"
"$top/scripts/build.sh" "$top/build"
exec "$top/scripts/demo-run.sh" "$top/build" "$@"
