#!/usr/bin/env bash
# netns_test.sh -- machines simulated with network namespaces (scripts/netns_cluster.sh):
# MPI ranks placed on three nodes by the launch agent, their data counted on the veth
# links; a server on node1 (its MPI job on node1 and node2) joined to a metaserver in
# its own namespace, called from a client's (dgesv, pdgesv); the host's network
# untouched and nothing left behind.  Skips (77) without root or namespaces.
set -euo pipefail
: "${TOP_BUILDDIR:?}" "${TOP_SRCDIR:?}"
skip() {
    echo "netns_test: SKIP: $1"
    exit 77
}
[[ $(id -u) == 0 ]] || skip "needs root to make network namespaces (ip netns)"
for tool in ip unshare mpirun; do
    command -v "$tool" >/dev/null || skip "no $tool in PATH"
done
unshare --net true 2>/dev/null || skip "cannot make a network namespace here (no CAP_SYS_ADMIN)"

b=$TOP_BUILDDIR cluster=$TOP_SRCDIR/scripts/netns_cluster.sh agent=$TOP_SRCDIR/scripts/mpi_netns_agent.sh
tmp=$(mktemp -d) tag=""
host_links() { ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | sort; }
links_before=$(host_links)
# ours_on_host: host links the set could have made (its names, or a peer in
# one of its namespaces).  Other sessions may add links of their own meanwhile.
ours_on_host() {
    comm -13 <(echo "$links_before") <(host_links) | grep -xE 'nr0|br0|meta|client|node[0-9]+' || true
    ip -o link show | grep -o "link-netns numrpc-$tag-[a-z0-9]*" || true
}
cleanup() {
    [[ -z $tag ]] || "$cluster" down "$tag" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $1"
    for f in "$tmp"/*.out "$tmp"/*.log; do
        [[ -s $f ]] && { echo "== $f" && tail -n 30 "$f"; }
    done
    exit 1
}

tag=$("$cluster" up -n 3 -s 2 -d "$tmp/cluster" 2>"$tmp/up.log") || fail "netns_cluster.sh up"
# NETNS_SUBNET, NETNS_IF, NETNS_HOSTFILE, NODE<i>_NS, NODE<i>_ADDR, META_*, CLIENT_*
. "$tmp/cluster/cluster.env"
[[ -z $(ours_on_host) ]] || fail "the set touched the host's links: $(ours_on_host | tr '\n' ' ')"

# rx_tx NS: the bytes received and sent on NS's link to the bridge.
rx_tx() {
    ip netns exec "$1" cat "/sys/class/net/$NETNS_IF/statistics/rx_bytes" \
        "/sys/class/net/$NETNS_IF/statistics/tx_bytes" | tr '\n' ' '
}
# grew_by BEFORE AFTER BYTES WHAT: both counters grew by at least BYTES.
grew_by() {
    local rx0 tx0 rx1 tx1
    read -r rx0 tx0 <<<"$1"
    read -r rx1 tx1 <<<"$2"
    ((rx1 - rx0 >= $3 && tx1 - tx0 >= $3)) || fail "$4: received $((rx1 - rx0)), sent $((tx1 - tx0)) bytes, want $3 each"
    echo "$4: received $((rx1 - rx0)), sent $((tx1 - tx0)) bytes" >>"$tmp/links.out"
}

# 1. Four ranks mapped by node over node1..3 from node1: each says where it runs,
# an Allreduce and a message of 8 MiB to every rank and back.
mib=8
declare -A before
for i in 1 2 3; do
    ns=NODE${i}_NS
    before[$i]=$(rx_tx "${!ns}")
done
# In the sanitizer build, OpenMPI's own allocations left at exit are not ours.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    "$cluster" exec "$NODE1_NS" timeout 60 mpirun --allow-run-as-root --hostfile "$NETNS_HOSTFILE" \
    --map-by node -np 4 --mca plm_rsh_agent "$agent" --mca oob_tcp_if_include "$NETNS_SUBNET" \
    --mca btl self,vader,tcp --mca btl_tcp_if_include "$NETNS_SUBNET" \
    "$b/tests/mpi/netns_ranks" "$NETNS_SUBNET" "$mib" >"$tmp/ranks.out" 2>&1 || fail "mpirun exited $?"
grep -qx "netns_ranks: ok" "$tmp/ranks.out" || fail "the MPI job's checks"
for r in 0 1 2 3; do
    node=$(((r % 3) + 1)) ns=NODE$(((r % 3) + 1))_NS addr=NODE$(((r % 3) + 1))_ADDR
    grep -qx "rank $r host ${!ns} addr ${!addr}" "$tmp/ranks.out" ||
        fail "rank $r does not run in node$node (${!ns}, ${!addr})"
done
# Ranks 1 and 2 are alone on node2 and node3: 8 MiB came in and went out of each.
for i in 2 3; do
    ns=NODE${i}_NS
    grew_by "${before[$i]}" "$(rx_tx "${!ns}")" $((mib << 20)) "node$i's link during the MPI job"
done

# 2. A metaserver in its namespace, a server on node1 joined to it, a client in
# a third namespace placed by the metaserver.  Fixed ports: the namespaces are ours.
"$cluster" exec "$META_NS" "$b/metaserver/numrpc-metaserver" --bind "$META_ADDR" --port 7900 \
    --allow-insecure --quiet >"$tmp/metaserver.log" 2>&1 &
# The server's MPI job: 4 ranks by the host file's slots (node1 2, node2 2),
# started on node2 through the agent.
server_mpi=(--mpi-ranks 4 --mpi-hostfile "$NETNS_HOSTFILE" --mpi-agent "$agent" --mpi-engine "$b/mpi/numrpc-mpi-engine"
    --mpi-args "--mca mpi_yield_when_idle 1")
"$cluster" exec "$NODE1_NS" "$b/server/numrpc-server" --bind "$NODE1_ADDR" --port 7800 \
    --allow-insecure --stubs "$b/stubs/.libs" --blas-threads 1 --workers 2 --admin-socket none \
    --metaserver "$META_ADDR:7900" --quiet ${server_mpi[@]+"${server_mpi[@]}"} >"$tmp/server.log" 2>&1 &
server="$NODE1_ADDR:7800"
numrpc=$b/cli/numrpc
for _ in $(seq 300); do
    "$cluster" exec "$CLIENT_NS" "$numrpc" status --metaserver "$META_ADDR:7900" >"$tmp/meta.out" 2>&1 &&
        grep -q "^$server " "$tmp/meta.out" && break
    sleep 0.1
done
grep -q "^$server " "$tmp/meta.out" || fail "the server on node1 did not join the metaserver"
"$cluster" exec "$META_NS" "$numrpc" status "$server" >"$tmp/status.out" 2>&1 ||
    fail "the server is not reachable from the metaserver's namespace"
grep -q "^numrpc-server .* at $server:" "$tmp/status.out" || fail "the server's status from the metaserver's namespace"

# solve ROUTINE: a client in its own namespace solves n = 300 through the
# metaserver; the result equals local LAPACK's, the server is node1's and the
# matrix crossed the client's link.
n=300
solve() {
    local was
    was=$(rx_tx "$CLIENT_NS")
    NUMRPC_METASERVER="$META_ADDR:7900" "$cluster" exec "$CLIENT_NS" "$b/tests/mpi/netns_dgesv" "$1" "$n" \
        >"$tmp/$1.out" 2>&1 || fail "$1 from the client's namespace"
    grep -q "^$1 n=$n on $server: info 0, .*: ok$" "$tmp/$1.out" || fail "$1 was not solved on $server"
    grew_by "$was" "$(rx_tx "$CLIENT_NS")" $((8 * n * n)) "the client's link during $1"
}
solve dgesv
# The same call on the MPI path: the ranks on node2 receive their blocks of
# the matrix (half of it on a 2x2 grid) over node2's link.
was=$(rx_tx "$NODE2_NS")
solve pdgesv
grew_by "$was" "$(rx_tx "$NODE2_NS")" $((8 * n * n / 4)) "node2's link during pdgesv"

# 3. Down: nothing of the set is left, and the host's links are as they were.
"$cluster" down "$tag" >"$tmp/down.log" 2>&1 || fail "netns_cluster.sh down"
left=$(ip netns list | awk -v p="numrpc-$tag-" 'index($1, p) == 1' | tr '\n' ' ')
[[ -z $left ]] || fail "namespaces left after down: $left"
[[ -z $(ours_on_host) ]] || fail "links of the set are left on the host: $(ours_on_host | tr '\n' ' ')"
tag=""
cat "$tmp/ranks.out" "$tmp"/*gesv.out "$tmp/links.out"
echo "4 ranks on 3 namespaces over TCP; dgesv and pdgesv (4 ranks on node1 and node2) from a client namespace; nothing left after down"
echo "netns_test: 3 passed, 0 failed"
