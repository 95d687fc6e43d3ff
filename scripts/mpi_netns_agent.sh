#!/usr/bin/env bash
# mpi_netns_agent.sh -- OpenMPI's remote-launch agent (plm_rsh_agent) for the
# namespaces of scripts/netns_cluster.sh: runs the command on the named "node".
#
# mpirun calls it as it would call ssh: `AGENT [options] HOST WORD...`, the
# words forming one shell command (orted and its arguments, quoted for a
# shell).  HOST is a namespace of a netns_cluster.sh set, as its host file
# names them (e.g. numrpc-c1234-node2); options (ssh's, from plm_rsh_args) are
# ignored.  Like ssh it exits 255 when it cannot reach the host.
set -u

while [[ ${1-} == -* ]]; do
    shift
done
host=${1-}
[[ -n $host ]] && shift
if [[ -z $host || $# == 0 ]]; then
    echo "mpi_netns_agent: usage: $0 [options] HOST COMMAND..." >&2
    exit 255
fi
# The words are one command line for a shell, as ssh hands them on.
exec "$(dirname "$0")/netns_cluster.sh" exec "$host" /bin/sh -c "$*"
