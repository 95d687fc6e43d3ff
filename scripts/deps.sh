#!/usr/bin/env bash
# deps.sh -- installs the Debian 12 packages numrpc needs that this machine
# lacks (checked one by one; apt-get runs only if something is missing).
set -euo pipefail

packages=(
  g++ make autoconf automake libtool pkg-config flex bison
  libtirpc-dev libssl-dev openssl libopenblas-dev liblapack-dev googletest libgtest-dev gfortran
  omniidl libomniorb4-dev libgrpc++-dev libprotobuf-dev protobuf-compiler-grpc gnuplot-nox iproute2
  sdpa libsdpa-dev
  libfftw3-dev libsuperlu-dev
  clang-14 libclang-rt-14-dev
  python3-venv python3-setuptools python3-wheel python3-numpy python3-scipy python3-pytest
  libmicrohttpd-dev python3-prometheus-client chromium
  libseccomp-dev
  openmpi-bin libopenmpi-dev libscalapack-openmpi-dev
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "installing: nothing missing (${#packages[@]} Debian packages present)"
  exit 0
fi

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/steps.sh"
log="$top/build/logs/apt.log"
echo "installing with apt (its output: $log): ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "deps: need root (or sudo) to install ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
step "$log" "installing: apt-get update" $sudo apt-get update -q
step "$log" "installing: ${#missing[@]} packages" $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
