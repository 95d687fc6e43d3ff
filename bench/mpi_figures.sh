#!/usr/bin/env bash
# mpi_figures.sh -- issue 19's figures in one run: dgesv through the MPI path (pdgesv on 1, 2 and 4 ranks)
# against the single-process LAPACK path and local LAPACK, split and beside the model (bench/mpi_figures.py).
# usage: bench/mpi_figures.sh [BUILD_DIR=build] [ROUNDS=3] [SIZES=1000,2000,4000,6000,8000]
#   (about 80 s a round at these sizes on 2 cores; sizes up to 2000 are called 5 times a round)
#   Starts on 127.0.0.1: two servers of the LAPACK path (--blas-threads 1 and 2) and three with resident
#   MPI jobs of 1, 2 and 4 ranks (--oversubscribe; grids 1x1, 1x2, 2x2; block 64), every BLAS on one
#   thread per process (OPENBLAS_NUM_THREADS=1); measures the MPI link with a ping-pong of two ranks and
#   a fresh mpirun's start and end (the engine alone, three times each); then every size of every round
#   on every path in turn, each solution checked against local LAPACK's. Writes the table to stdout,
#   the rows to $OUT.csv and the plot to $OUT.png (OUT=docs/benchmarks/mpi by default).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
rounds=${2:-3}
sizes=${3:-1000,2000,4000,6000,8000}
out=${OUT:-$top/docs/benchmarks/mpi}
[[ $rounds =~ ^[1-9]$ && $sizes =~ ^[0-9]+(,[0-9]+)*$ ]] || { sed -n 4,11p "$0" >&2; exit 2; }
engine="$build/mpi/numrpc-mpi-engine"
for f in "$engine" "$build/bench/numrpc-bench-mpi-pingpong" "$build/stubs/.libs/scalapack.so"; do
    [[ -e $f ]] || { echo "$(basename "$0"): $f missing: build with OpenMPI and ScaLAPACK first" >&2; exit 1; }
done
. "$top/bench/servers.sh"
bench_setup mpi-figures
export OPENBLAS_NUM_THREADS=1
mpirun=(mpirun --oversubscribe)
[[ $(id -u) -eq 0 ]] && mpirun+=(--allow-run-as-root)
bench_machine
echo "== versions: $(mpirun --version 2>&1 | head -1); ScaLAPACK $(dpkg-query -W -f='${Version}' libscalapack-openmpi2.2 2>/dev/null || echo '?')"

# The MPI link between two ranks (shared memory on one machine): t_m and t_v of the model.
link=$(timeout 120 "${mpirun[@]}" -np 2 "$build/bench/numrpc-bench-mpi-pingpong" 30 | sed -n 's/^t_m=\([^ ]*\) t_v=\(.*\)$/\1,\2/p')
[[ -n $link ]] || { echo "$(basename "$0"): the ping-pong gave no figures" >&2; exit 1; }
echo "== MPI link (ping-pong, 2 ranks): t_m,t_v = $link s"

# A fresh mpirun of the engine: seconds until rank 0's socket appears (the job is ready), then until
# mpirun has ended after SIGTERM -- what a job started per call would add to each call.
fresh=""
for ranks in 1 2 4; do
    grid=$([[ $ranks == 1 ]] && echo 1x1 || { [[ $ranks == 2 ]] && echo 1x2 || echo 2x2; })
    starts=(); stops=()
    for i in 1 2 3; do
        d="$tmp/fresh.$ranks.$i"; mkdir "$d"
        t0=$(date +%s.%N)
        "${mpirun[@]}" -np "$ranks" "$engine" --socket "$d/engine.sock" --serving "$d/serving" --grid "$grid" \
            --block 64 --max-bytes 1000000 >"$d/log" 2>&1 &
        job=$!
        for _ in $(seq 3000); do [[ -S $d/engine.sock ]] && break; sleep 0.005; done
        [[ -S $d/engine.sock ]] || { echo "$(basename "$0"): a fresh job of $ranks ranks did not start:" >&2; cat "$d/log" >&2; exit 1; }
        t1=$(date +%s.%N)
        kill -TERM "$job"; wait "$job" || true
        t2=$(date +%s.%N)
        starts+=("$(echo "$t1 - $t0" | bc)"); stops+=("$(echo "$t2 - $t1" | bc)")
    done
    median() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
    fresh+="$ranks=$(median "${starts[@]}"),$(median "${stops[@]}");"
done
echo "== fresh mpirun, ranks=start,end seconds (medians of 3): $fresh"

http_args() { echo --http-port 0 --http-port-file "$tmp/$1.http"; }
bench_server lapack1 --blas-threads 1
bench_server lapack2 --blas-threads 2
for ranks in 1 2 4; do
    grid=$([[ $ranks == 1 ]] && echo 1x1 || { [[ $ranks == 2 ]] && echo 1x2 || echo 2x2; })
    bench_server "mpi$ranks" --blas-threads 1 --mpi-ranks "$ranks" --mpi-grid "$grid" --mpi-block 64 \
        --mpi-args --oversubscribe --mpi-engine "$engine" $(http_args "mpi$ranks")
done
paths=(--lapack "1=127.0.0.1:$(cat "$tmp/lapack1.port")" --lapack "2=127.0.0.1:$(cat "$tmp/lapack2.port")")
for ranks in 1 2 4; do
    for _ in $(seq 100); do [[ -s $tmp/mpi$ranks.http ]] && break; sleep 0.1; done
    paths+=(--mpi "$ranks=127.0.0.1:$(cat "$tmp/mpi$ranks.port")=http://127.0.0.1:$(cat "$tmp/mpi$ranks.http")/metrics")
done

mkdir -p "$(dirname "$out")"
cd "$tmp"
PYTHONPATH="$top/python" NUMRPC_LIB="$build/client/.libs/libnumrpc.so" timeout 3600 /usr/bin/python3 \
    "$top/bench/mpi_figures.py" "${paths[@]}" --sizes "$sizes" --rounds "$rounds" --link "$link" \
    --fresh "$fresh" --block 64 --csv "$out.csv" --plot "$out.png"
