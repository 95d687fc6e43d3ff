#!/usr/bin/env bash
# bench_meta.sh -- the metaserver's figures on heterogeneous servers made
# real: A whole, B under a 20 % CPU quota (cgroup v1), C behind a tbf-shaped
# veth in a network namespace (RATE, 400mbit by default: a LAN; 100mbit: a
# campus WAN).  Needs root.  Usage:
#   bash bench/bench_meta.sh [BUILD_DIR] [ROUNDS] [pinned|shared] [RATE]
# pinned (default, with 2 or more CPUs): A alone on CPU 0; B, C and this
# client on CPU 1, so A's capacity does not depend on what B and C run.
# shared: every process may run on every CPU (the servers then compete).
# NUMRPC_BENCH_META_TRACE=1 also prints where each rule's calls ran.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
rounds=${2:-3}
placement=${3:-pinned}
rate=${4:-400mbit}
[[ $rate =~ ^[0-9]+[mk]bit$ ]] || { echo "bench_meta: RATE is like 400mbit or 100mbit, not $rate"; exit 2; }
[[ $(nproc) -ge 2 ]] || placement=shared
if [[ $placement == pinned ]]; then pin_a=(taskset -c 0); pin_rest=(taskset -c 1)
else pin_a=(); pin_rest=(); fi
[[ $(id -u) == 0 ]] || { echo "bench_meta: needs root (cgroup, ip netns, tc)"; exit 1; }
[[ -d /sys/fs/cgroup/cpu ]] || { echo "bench_meta: no cgroup v1 cpu controller"; exit 1; }
make -C "$build/bench" numrpc-bench-meta >/dev/null
tag=$$
ns=nrbm$tag; vh=nrbh$((tag % 100000)); vn=nrbn$((tag % 100000)); sub=$((tag % 200 + 20))
hip=10.232.$sub.1; nip=10.232.$sub.2
cg=/sys/fs/cgroup/cpu/numrpc-bench-meta-$tag
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  ip link del "$vh" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  # the servers' workers leave the group a moment after their dispatcher
  for _ in $(seq 100); do rmdir "$cg" 2>/dev/null && break; [[ -d $cg ]] || break; sleep 0.05; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir "$cg"; echo 100000 > "$cg/cpu.cfs_period_us"; echo 20000 > "$cg/cpu.cfs_quota_us"
ip netns add "$ns"
ip link add "$vh" type veth peer name "$vn"
ip link set "$vn" netns "$ns"
ip addr add "$hip/24" dev "$vh"; ip link set "$vh" up
ip netns exec "$ns" ip addr add "$nip/24" dev "$vn"
ip netns exec "$ns" ip link set "$vn" up; ip netns exec "$ns" ip link set lo up
tc qdisc add dev "$vh" root tbf rate $rate burst 1mb latency 100ms
ip netns exec "$ns" tc qdisc add dev "$vn" root tbf rate $rate burst 1mb latency 100ms

waitport() { for _ in $(seq 500); do [[ -s $1 ]] && { cat "$1"; return; }; sleep 0.02; done; echo "bench_meta: $1 never written" >&2; exit 1; }
"$build/metaserver/numrpc-metaserver" --port 0 --bind 0.0.0.0 --allow-insecure --quiet --lease-ms 500 --port-file "$tmp/meta" & pids+=($!)
mport=$(waitport "$tmp/meta")
common=(--port 0 --stubs "$build/stubs/.libs" --quiet --workers 2 --blas-threads 1 --admin-socket none)
"${pin_a[@]}" "$build/server/numrpc-server" "${common[@]}" --bind 127.0.0.1 --port-file "$tmp/a" --metaserver 127.0.0.1:$mport & pids+=($!)
"${pin_rest[@]}" sh -c "echo \$\$ > $cg/cgroup.procs; exec \"$build/server/numrpc-server\" ${common[*]} --bind 127.0.0.1 --port-file $tmp/b --metaserver 127.0.0.1:$mport" & pids+=($!)
ip netns exec "$ns" "${pin_rest[@]}" "$build/server/numrpc-server" "${common[@]}" --bind 0.0.0.0 --allow-insecure --port-file "$tmp/c" --metaserver "$hip:$mport" & pids+=($!)
a=127.0.0.1:$(waitport "$tmp/a"); b=127.0.0.1:$(waitport "$tmp/b"); c=$nip:$(waitport "$tmp/c")
for _ in $(seq 300); do
  st=$("$build/cli/numrpc" status --metaserver 127.0.0.1:$mport)
  grep -q "$a" <<<"$st" && grep -q "$b" <<<"$st" && grep -q "$c" <<<"$st" && break
  sleep 0.1
done
echo "A=$a (whole)  B=$b (20% CPU quota)  C=$c ($rate tbf veth)"
if [[ $placement == pinned ]]; then echo "placement: A alone on CPU 0; B, C and the client on CPU 1"
else echo "placement: shared (every process on every CPU)"; fi
"${pin_rest[@]}" "$build/bench/numrpc-bench-meta" --meta 127.0.0.1:$mport --servers "$a,$b,$c" --rounds "$rounds"
echo; "$build/cli/numrpc" status --metaserver 127.0.0.1:$mport
