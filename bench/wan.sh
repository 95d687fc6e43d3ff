#!/bin/sh
# wan.sh -- the emulated-WAN runs: latency (a delay proxy adds 10 ms each way,
# no root needed) and rate (a private namespace's loopback shaped to 3 Mbit/s
# with tc tbf; needs root, ip and tc, else skipped with a note).
# usage: wan.sh [--out DIR] [--rate-only] BUILD_DIR
set -u
out=
build=
rate_only=0
while [ $# -gt 0 ]; do
    case "$1" in
    --out) out=$2; shift ;;
    --rate-only) rate_only=1 ;;
    *) build=$1 ;;
    esac
    shift
done
[ -n "$build" ] || { echo "usage: wan.sh [--out DIR] BUILD_DIR" >&2; exit 2; }
[ -n "$out" ] || out=$(cd "$(dirname "$0")" && pwd)/out
mkdir -p "$out"
if [ $rate_only = 0 ]; then
    echo "== emulated WAN latency: every connection through a delay proxy, +10 ms each way (20 ms round trip)"
    "$build/bench/numrpc-bench-transfer" --placement different --sizes 8,64K --rounds 5 --reps 5 \
        --delay-ms 10 --csv "$out/wan_latency.csv" --markdown "$out/wan_latency.md"
fi
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
    echo "wan.sh: skipped: the WAN emulation needs root, ip and tc (it creates a network namespace)"
    exit 0
fi
ns=numrpc-wan-$$
if ! ip netns add "$ns" 2>/dev/null; then
    echo "wan.sh: skipped: cannot create a network namespace here"
    exit 0
fi
trap 'ip netns del "$ns" 2>/dev/null' EXIT INT TERM
# Every packet, both directions, crosses lo's token bucket: 3 Mbit/s, 1500-byte
# frames (tbf drops frames larger than its burst).
ip -n "$ns" link set lo mtu 1500 up
ip netns exec "$ns" tc qdisc add dev lo root tbf rate 3mbit burst 8kb latency 200ms || {
    echo "wan.sh: skipped: tc tbf is not available"
    exit 0
}
echo "== emulated WAN rate: loopback of namespace $ns shaped to 3 Mbit/s (tc tbf)"
ip netns exec "$ns" "$build/bench/numrpc-bench-transfer" --placement different \
    --sizes 8,16K,64K --rounds 5 --reps 2 \
    --csv "$out/wan.csv" --markdown "$out/wan.md"
