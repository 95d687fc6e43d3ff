#!/usr/bin/env bash
# netns_cluster.sh -- several "machines" on one host: network namespaces joined
# by veth pairs to a bridge of their own, made and removed as one set (root).
#
#   netns_cluster.sh up [-n NODES] [-s SLOTS] [-t TAG] [-d DIR]   make a set, print its tag
#   netns_cluster.sh down TAG                     stop its processes, remove it all
#   netns_cluster.sh exec NAMESPACE COMMAND...    run COMMAND in a member, named after it
#   netns_cluster.sh list                         the namespaces of every set
#
# A set of tag T is the namespaces numrpc-T-br (the bridge, no address),
# numrpc-T-meta, numrpc-T-client and numrpc-T-node1..NODES, each member with a
# veth "nr0" on the private subnet 10.77.0.0/24 (meta .2, client .3, node i
# .(10+i)) and loopback up.  Every link is made inside the set's namespaces,
# so the host's own network is never touched and sets of different tags do
# not see each other.  DIR (default /tmp/numrpc-netns-T, which `down`
# removes) gets `hosts`, an MPI host file naming the nodes by their
# namespaces with SLOTS each (default 1), as scripts/mpi_netns_agent.sh
# (OpenMPI's plm_rsh_agent) expects, and `cluster.env`, shell assignments of
# NETNS_TAG, NETNS_SUBNET, NETNS_IF, NETNS_NODES, NETNS_HOSTFILE, META_NS,
# META_ADDR, CLIENT_NS, CLIENT_ADDR, NODE<i>_NS and NODE<i>_ADDR.
set -euo pipefail

readonly SUBNET_PREFIX=10.77.0 SUBNET=10.77.0.0/24 IFNAME=nr0

usage() {
    sed -n '5,8s/^# \{0,1\}//p' "$0" >&2
    exit 2
}

die() {
    echo "netns_cluster: $*" >&2
    exit 1
}

[[ $(id -u) == 0 ]] || die "needs root (ip netns); run as root or skip"

# valid_tag TAG: lower-case letters and digits, at most 12 (link names stay short).
valid_tag() {
    [[ $1 =~ ^[a-z0-9]{1,12}$ ]] || die "tag '$1' must be 1-12 lower-case letters or digits"
}

# The namespaces of set TAG, bridge last (so members lose their links first).
set_namespaces() {
    ip netns list | awk -v p="numrpc-$1-" 'index($1, p) == 1 { print $1 }' |
        sort | awk '/-br$/ { br = $0; next } { print } END { if (br != "") print br }'
}

# stop_processes NS: SIGTERM to every process in NS, SIGKILL to those left
# after 2 s (by pid, as `ip netns pids` lists them).
stop_processes() {
    local ns=$1 pids i
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [[ -n $pids ]] || return 0
    kill -TERM $pids 2>/dev/null || true
    for ((i = 0; i < 20; i++)); do
        pids=$(ip netns pids "$ns" 2>/dev/null || true)
        [[ -n $pids ]] || return 0
        sleep 0.1
    done
    kill -KILL $pids 2>/dev/null || true
    sleep 0.1
}

cmd_down() {
    local tag=${1:?usage: down TAG} ns
    valid_tag "$tag"
    for ns in $(set_namespaces "$tag"); do
        stop_processes "$ns"
    done
    # Deleting a namespace deletes its veth ends, and with them their peers.
    for ns in $(set_namespaces "$tag"); do
        ip netns delete "$ns" 2>/dev/null || true
    done
    # OpenMPI's session directories of the set's host names (a job killed
    # outright leaves them).
    rm -rf "/tmp/numrpc-netns-$tag" "${TMPDIR:-/tmp}/ompi.numrpc-$tag-"*
    [[ -z $(set_namespaces "$tag") ]] || die "namespaces of $tag are left: $(set_namespaces "$tag" | tr '\n' ' ')"
}

# add_member TAG NAME ADDR: a namespace numrpc-TAG-NAME whose nr0 (ADDR/24)
# is paired with a port NAME on the set's bridge.
add_member() {
    local tag=$1 name=$2 addr=$3 ns="numrpc-$1-$2" br="numrpc-$1-br"
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip -n "$br" link add "$name" type veth peer name "$IFNAME" netns "$ns"
    ip -n "$br" link set "$name" master br0 up
    ip -n "$ns" addr add "$addr/24" dev "$IFNAME"
    ip -n "$ns" link set "$IFNAME" up
}

cmd_up() {
    local nodes=3 slots=1 tag="" dir="" opt i
    OPTIND=1
    while getopts "n:s:t:d:" opt; do
        case $opt in
            n) nodes=$OPTARG ;;
            s) slots=$OPTARG ;;
            t) tag=$OPTARG ;;
            d) dir=$OPTARG ;;
            *) usage ;;
        esac
    done
    [[ $nodes =~ ^[0-9]+$ && $nodes -ge 1 && $nodes -le 200 ]] || die "-n wants 1 to 200 nodes, got '$nodes'"
    [[ $slots =~ ^[0-9]+$ && $slots -ge 1 ]] || die "-s wants a positive number of slots, got '$slots'"
    tag=${tag:-$(printf 'c%d%04x' $$ $((RANDOM)) | cut -c1-12)}
    valid_tag "$tag"
    [[ -z $(set_namespaces "$tag") ]] || die "a set tagged $tag exists already"
    dir=${dir:-/tmp/numrpc-netns-$tag}
    # Whatever was made is removed again if a step fails.
    trap 'cmd_down "$tag" >/dev/null 2>&1 || true' EXIT
    ip netns add "numrpc-$tag-br"
    ip -n "numrpc-$tag-br" link set lo up
    ip -n "numrpc-$tag-br" link add br0 type bridge
    ip -n "numrpc-$tag-br" link set br0 up
    add_member "$tag" meta "$SUBNET_PREFIX.2"
    add_member "$tag" client "$SUBNET_PREFIX.3"
    for ((i = 1; i <= nodes; i++)); do
        add_member "$tag" "node$i" "$SUBNET_PREFIX.$((10 + i))"
    done
    mkdir -p "$dir"
    {
        echo "NETNS_TAG=$tag"
        echo "NETNS_SUBNET=$SUBNET"
        echo "NETNS_IF=$IFNAME"
        echo "NETNS_NODES=$nodes"
        echo "NETNS_HOSTFILE=$dir/hosts"
        echo "META_NS=numrpc-$tag-meta META_ADDR=$SUBNET_PREFIX.2"
        echo "CLIENT_NS=numrpc-$tag-client CLIENT_ADDR=$SUBNET_PREFIX.3"
        for ((i = 1; i <= nodes; i++)); do
            echo "NODE${i}_NS=numrpc-$tag-node$i NODE${i}_ADDR=$SUBNET_PREFIX.$((10 + i))"
        done
    } >"$dir/cluster.env"
    for ((i = 1; i <= nodes; i++)); do
        echo "numrpc-$tag-node$i slots=$slots"
    done >"$dir/hosts"
    trap - EXIT
    echo "$tag"
}

# cmd_exec NAMESPACE COMMAND...: COMMAND in the member's network namespace and
# in a UTS namespace whose host name is the member's name, as on a machine of
# its own (OpenMPI names its session directories in /tmp by host name, so
# nodes that shared one name would remove each other's).
cmd_exec() {
    local ns=${1-}
    # Exit 255 (as ssh does) when the member cannot be reached.
    if [[ ! $ns =~ ^numrpc-[a-z0-9]{1,12}-[a-z0-9]+$ || $# -lt 2 ]]; then
        echo "netns_cluster: usage: exec NAMESPACE COMMAND... (NAMESPACE numrpc-TAG-MEMBER)" >&2
        exit 255
    fi
    shift
    if ! ip netns list | awk '{ print $1 }' | grep -qxF -- "$ns"; then
        echo "netns_cluster: no namespace $ns (ip netns list)" >&2
        exit 255
    fi
    exec ip netns exec "$ns" unshare --uts /bin/sh -c 'hostname "$0" && exec "$@"' "$ns" "$@"
}

case ${1-} in
    up) shift && cmd_up "$@" ;;
    down) shift && cmd_down "$@" ;;
    exec) shift && cmd_exec "$@" ;;
    list) ip netns list | awk '$1 ~ /^numrpc-[a-z0-9]+-(br|meta|client|node[0-9]+)$/ { print $1 }' ;;
    *) usage ;;
esac
