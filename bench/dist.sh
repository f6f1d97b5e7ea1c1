#!/usr/bin/env bash
# bench/dist.sh — data-parallel training over MPI against threads, in one run.
#
#   bench/dist.sh [--procs P] [--rounds R] [--min-time S] [--models "a b"]
#                 [--build-dir DIR] [--results FILE]
#
# Installs nnc as bench/run.sh does (CMake default build type, no -march, with
# nnc_runtime_mpi), builds each model's training-step benchmark twice as a
# user does, cc -O3 ... $(pkg-config --cflags --libs nnc) and the same with
# nnc-mpi, and times, alternating in each round (ABBA):
#   1 process  x 1 thread      the nnc build, OMP_NUM_THREADS=1
#   1 process  x P threads     the nnc build, OMP_NUM_THREADS=P
#   P processes x 1 thread     the nnc-mpi build, mpirun -np P, OMP_NUM_THREADS=1
#   P alone                    P copies of the nnc build at once, each the
#                              step of a 1/P share with no sums: the most
#                              P processes can give on this machine
# on the same global batch (each process a 1/P share).  P defaults to 2,
# the models to resnet_small and gpt_mini.  Prints the table (ms/step,
# paired speedups over 1 x 1, the time the processes waited for the
# gradients' sums), the cost of one sum (src/sum_cost.c) with the
# cost model's figures for the measured run and projected to 8-64 nodes on
# a 25 Gb/s network (src/report_dist.py), and writes bench/results-dist.md
# (or --results FILE).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

procs=2
rounds=3
min_time=3
min_iters=50
warmup=20
models="resnet_small gpt_mini"
cflags="-O3 -fno-math-errno -fno-trapping-math"
build="$here/build"
results="$here/results-dist.md"
python=/usr/bin/python3

usage() {
    sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
    exit "${1:-1}"
}
while [ $# -gt 0 ]; do
    case "$1" in
    --procs) procs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --min-time) min_time=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    -h | --help) usage 0 ;;
    *) echo "dist.sh: unknown argument '$1'" >&2; usage ;;
    esac
done
case "$procs" in '' | *[!0-9]* | 0 | 1) echo "dist.sh: --procs wants an integer >= 2" >&2; exit 1 ;; esac
case "$rounds" in '' | *[!0-9]* | 0) echo "dist.sh: --rounds wants a positive integer" >&2; exit 1 ;; esac
command -v mpirun >/dev/null || { echo "dist.sh: no mpirun (Debian: openmpi-bin)" >&2; exit 1; }
mkdir -p "$build"
build=$(cd "$build" && pwd)

# ---- 1. build ------------------------------------------------------------------
# shellcheck source=src/install.sh
. "$here/src/install.sh"
install_nnc portable ""
nnc="$build/prefix-portable/bin/nnc"
pcd=$(pc_dir portable)
[ -f "$pcd/nnc-mpi.pc" ] || { echo "dist.sh: nnc was installed without nnc-mpi (CMake found no MPI; Debian: libopenmpi-dev)" >&2; exit 1; }
cc=${CC:-cc}
warn="-std=c11 -Wall -Wextra -Wpedantic -Werror"
echo "== compiling the models; $cc $cflags ... \$(pkg-config --cflags --libs nnc) and nnc-mpi" >&2
mkdir -p "$build/gen" "$build/bin/portable" "$build/bin/mpi"
for m in $models; do
    if [ ! -f "$here/$m.nn" ] || [ ! -f "$here/$m.bench.c" ]; then echo "dist.sh: no bench/$m.nn or bench/$m.bench.c" >&2; exit 1; fi
    (cd "$here" && "$nnc" "$m.nn" -o "$build/gen/$m")
    for pc in nnc nnc-mpi; do
        out="$build/bin/portable/bench_$m"
        [ "$pc" = nnc-mpi ] && out="$build/bin/mpi/bench_$m"
        # shellcheck disable=SC2046,SC2086
        $cc $warn $cflags -I"$build/gen/$m" -I"$here/src" \
            "$here/$m.bench.c" "$here/src/harness.c" "$build/gen/$m/$m.c" \
            $(PKG_CONFIG_PATH=$pcd pkg-config --cflags --libs $pc) -o "$out"
    done
done

# what one sum costs (the cost model's a and b)
# shellcheck disable=SC2046,SC2086
$cc $warn -O2 "$here/src/sum_cost.c" $(PKG_CONFIG_PATH=$pcd pkg-config --cflags --libs nnc-mpi) -o "$build/bin/mpi/sum_cost"

# ---- 2. measure ------------------------------------------------------------------
# mpirun as root (CI, containers) needs Open MPI's consent; more processes
# than cores need --oversubscribe (and then measure nothing useful).
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
cores=$(getconf _NPROCESSORS_ONLN)
over=""
[ "$procs" -gt "$cores" ] && over="--oversubscribe"
raw="$build/raw-dist.txt"
: >"$raw"
{
    echo "META date=$(date -u '+%Y-%m-%dT%H:%M:%SZ')"
    echo "META procs=$procs"
    echo "META rounds=$rounds"
    echo "META min_time=$min_time"
    echo "META cflags=$cflags"
    echo "META cc=$($cc --version | head -1)"
    echo "META mpi=$(mpirun --version 2>/dev/null | head -1)"
    echo "META cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
    echo "META cores=$cores"
    echo "META git=$(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)"
    echo "META load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} >>"$raw"
steps="--min-time $min_time --min-iters $min_iters --warmup $warmup"
for r in $(seq 1 "$rounds"); do
    echo "META load_round$r=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$raw"
    echo "== round $r/$rounds: one sum across $procs processes, 1 to 2^20 floats" >&2
    mpirun -np "$procs" $over "$build/bin/mpi/sum_cost" --min-time 0.3 | sed "s/^/ROUND=$r /" >>"$raw"
    for m in $models; do
        runs="1x1 1x$procs ${procs}x1 alone"
        [ $((r % 2)) = 0 ] && runs="alone ${procs}x1 1x$procs 1x1"
        for run in $runs; do
            p=${run%x*} t=${run#*x}
            if [ "$run" = alone ]; then
                echo "== round $r/$rounds: $m, $procs copies at once, each a 1/$procs share alone" >&2
                pids=""
                for i in $(seq 1 "$procs"); do
                    # shellcheck disable=SC2086
                    OMP_NUM_THREADS=1 "$build/bin/portable/bench_$m" $steps --share "$procs" \
                        >"$build/alone.$i" 2>"$build/alone.$i.err" &
                    pids="$pids $!"
                done
                # shellcheck disable=SC2086
                wait $pids || { cat "$build"/alone.*.err >&2; exit 1; }
                for i in $(seq 1 "$procs"); do sed "s/^/ROUND=$r CONF=alone COPY=$i /" "$build/alone.$i"; done >>"$raw"
                continue
            fi
            echo "== round $r/$rounds: $m, $p process(es) x $t thread(s)" >&2
            # shellcheck disable=SC2086
            if [ "$p" = 1 ]; then
                env OMP_NUM_THREADS="$t" "$build/bin/portable/bench_$m" $steps
            else
                mpirun -np "$p" $over -x OMP_NUM_THREADS="$t" "$build/bin/mpi/bench_$m" $steps
            fi 2>"$build/side.err" | sed "s/^/ROUND=$r CONF=$run /" >>"$raw" ||
                { cat "$build/side.err" >&2; exit 1; }
            grep -E '^ +(phases|waiting|[0-9]+ warm-up)' "$build/side.err" >&2 || true
        done
    done
done
echo "META load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$raw"

# ---- 3. report ---------------------------------------------------------------------
"$python" "$here/src/report_dist.py" "$raw" "$results" "$build/gen"
