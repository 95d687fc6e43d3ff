#!/bin/sh
# netlab.sh -- the LAN and WAN runs: two network namespaces joined by a veth
# pair (servers in one, clients in the other); WAN = that pair shaped to
# 3 Mbit/s with tc tbf plus a user-space delay proxy (netem is not in this
# kernel).  Everything it creates is removed on exit; without root, ip or tc
# it prints what it skipped and exits 0.
# usage: netlab.sh [--quick] [--out DIR] [--no-linpack] [--lan-only | --wan-only]
#                  [--delay-ms D] [--sizes LAN_LIST] [--wan-sizes LIST] BUILD_DIR
set -u
quick=0
out=
build=
linpack=1
lan=1
wan=1
delay=10 # ms each way: a 20 ms round trip on top of the shaped link
opt_lan_sizes=
opt_wan_sizes=
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick=1 ;;
    --out) out=$2; shift ;;
    --no-linpack) linpack=0 ;;
    --lan-only) wan=0 ;;
    --wan-only) lan=0 ;;
    --delay-ms) delay=$2; shift ;;
    --sizes) opt_lan_sizes=$2; shift ;;
    --wan-sizes) opt_wan_sizes=$2; shift ;;
    -h|--help) sed -n 2,8p "$0"; exit 0 ;;
    *) build=$1 ;;
    esac
    shift
done
[ -n "$build" ] || { echo "usage: netlab.sh [--quick] [--out DIR] BUILD_DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
[ -n "$out" ] || out=$here/out
mkdir -p "$out" || exit 2

skip() {
    echo "netlab.sh: skipped: $1"
    echo "netlab.sh: skipped: veth LAN and 3 Mbit/s WAN runs (loopback runs are unaffected)"
    exit 0
}
[ "$(id -u)" = 0 ] || skip "the LAN/WAN runs need root (they create network namespaces and a veth pair)"
command -v ip >/dev/null 2>&1 || skip "no ip command (iproute2)"
command -v tc >/dev/null 2>&1 || skip "no tc command (iproute2)"

id=${NUMRPC_NETLAB_ID:-$$} # names: numrpc-srv-ID, numrpc-cli-ID, veth nrsID / nrcID
srv_ns=numrpc-srv-$id
cli_ns=numrpc-cli-$id
srv_if=nrs$id
cli_if=nrc$id
srv_ip=10.77.0.1
cli_ip=10.77.0.2
made=
cleanup() {
    for ns in $made; do ip netns del "$ns" 2>/dev/null; done
    ip link del "$srv_if" 2>/dev/null
    made=
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ip netns add "$srv_ns" 2>/dev/null || skip "cannot create a network namespace here"
made=$srv_ns
ip netns add "$cli_ns" 2>/dev/null || skip "cannot create a second network namespace"
made="$made $cli_ns"
ip link add "$srv_if" type veth peer name "$cli_if" 2>/dev/null || skip "cannot create a veth pair"
ip link set "$srv_if" netns "$srv_ns" && ip link set "$cli_if" netns "$cli_ns" &&
    ip -n "$srv_ns" addr add "$srv_ip/24" dev "$srv_if" &&
    ip -n "$cli_ns" addr add "$cli_ip/24" dev "$cli_if" &&
    ip -n "$srv_ns" link set lo up && ip -n "$cli_ns" link set lo up &&
    ip -n "$srv_ns" link set "$srv_if" up && ip -n "$cli_ns" link set "$cli_if" up ||
    skip "cannot configure the veth pair"

transfer="$build/bench/numrpc-bench-transfer --server-netns $srv_ns --host $srv_ip --placement different"
in_cli="ip netns exec $cli_ns"
status=0
if [ $quick = 1 ]; then
    lan_sizes=8,64K,1M; lan_rounds="--rounds 5"; wan_sizes=8,16K; wan_reps="--reps 2"
else
    lan_sizes=8,1K,64K,1M,8M,64M; lan_rounds="--rounds 7"; wan_sizes=8,1K,64K,1M; wan_reps="--reps 1"
fi
[ -n "$opt_lan_sizes" ] && lan_sizes=$opt_lan_sizes
[ -n "$opt_wan_sizes" ] && wan_sizes=$opt_wan_sizes

if [ $lan = 1 ]; then
    echo "== LAN: veth pair $srv_if ($srv_ns, $srv_ip) <-> $cli_if ($cli_ns, $cli_ip), servers in $srv_ns"
    $in_cli $transfer --link veth-lan --sizes $lan_sizes $lan_rounds \
        --csv "$out/lan.csv" --markdown "$out/lan.md" || status=1
    if [ $linpack = 1 ]; then
        if [ $quick = 1 ]; then lsz=100,500; rep=1; else lsz=100,200,500,1000,2000,4000; rep=5; fi
        $in_cli sh "$here/run_linpack.sh" --out "$out" --sizes $lsz --repeat $rep --threads 1 \
            --mode linpack --tag lan_ --server-netns "$srv_ns" --host "$srv_ip" "$build" ||
            status=1
    fi
fi

if [ $wan = 1 ]; then
    # 3 Mbit/s each way: one token bucket on each end's egress (1500-byte
    # frames; GSO packets are cut to frames by tbf), queue up to 400 ms.
    for side in "$srv_ns $srv_if" "$cli_ns $cli_if"; do
        set -- $side
        ip netns exec "$1" tc qdisc add dev "$2" root tbf rate 3mbit burst 15k latency 400ms ||
            { echo "netlab.sh: skipped: tc tbf is not available"; exit $status; }
    done
    echo "== WAN: the same veth pair shaped to 3 Mbit/s each way (tc tbf), +$delay ms each way (delay proxy)"
    $in_cli $transfer --link wan --delay-ms "$delay" --sizes $wan_sizes --rounds 5 $wan_reps \
        --csv "$out/wan.csv" --markdown "$out/wan.md" || status=1
    if [ $quick = 0 ]; then
        echo "== WAN buffer sweep: numrpc packet size x socket buffer x TCP_NODELAY"
        $in_cli $transfer --link wan --delay-ms "$delay" --buffer-sweep --sweep-bytes 256K \
            --sweep-packets 1K,16K,1M --sweep-bufs 0,16K,64K,4M --rounds 3 --reps 1 \
            --sweep-csv "$out/sweep_wan.csv" --markdown "$out/sweep_wan.md" || status=1
        if [ $linpack = 1 ]; then
            $in_cli sh "$here/run_linpack.sh" --out "$out" --sizes 100,200,500,1000 --repeat 1 --threads 1 \
                --mode linpack --tag wan_ --server-netns "$srv_ns" --host "$srv_ip" \
                --delay-ms "$delay" "$build" || status=1
        fi
    fi
fi
exit $status
