#!/usr/bin/env bash
# bench/run.sh — the nnc training-step benchmark, in one command.
#
#   bench/run.sh [--threads N] [--rounds R] [--min-time S] [--models "a b"]
#                [--cflags "FLAGS"] [--build-dir DIR] [--results FILE] [--quick]
#
# Builds nnc and its runtime (CMake, Release), compiles bench/<model>.nn
# through nnc and links each with the harness (bench/src/harness.c), measures
# the OpenBLAS sgemm rate, then times the training step (forward + backward +
# Adam) of every model in nnc and in PyTorch, each side in its own process,
# alternating sides for R rounds, with the same thread count on both sides.
# Prints the table and writes bench/results.md (or --results FILE).
# See bench/README.md.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

threads=1
rounds=3
min_time=3
models="digits_mlp mlp_big gpt_mini lenet5 resnet_small resnet18 gpt_h6 vgg_small"
cflags="-O3 -march=native -fno-math-errno -fno-trapping-math"
build="$here/build"
results="$here/results.md"
python=/usr/bin/python3

usage() {
sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit "${1:-1}"
}
while [ $# -gt 0 ]; do
    case "$1" in
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --min-time) min_time=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --cflags) cflags=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --quick) rounds=1; min_time=0.5; shift ;;
    -h | --help) usage 0 ;;
    *) echo "run.sh: unknown argument '$1'" >&2; usage ;;
    esac
done
case "$threads" in '' | *[!0-9]* | 0) echo "run.sh: --threads wants a positive integer" >&2; exit 1 ;; esac
case "$rounds" in '' | *[!0-9]* | 0) echo "run.sh: --rounds wants a positive integer" >&2; exit 1 ;; esac
mkdir -p "$build"
build=$(cd "$build" && pwd)

# ---- 1. build ---------------------------------------------------------------
echo "== building nnc and the runtime (Release) into $build/cmake" >&2
# the runtime (optimizer, I/O) gets the same target flags as the generated C
arch=$(for f in $cflags; do case "$f" in -march=* | -mtune=* | -mavx* | -mfma) printf '%s ' "$f" ;; esac; done)
cmake -S "$repo" -B "$build/cmake" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS="$arch" -DBUILD_TESTING=OFF >"$build/cmake.log" 2>&1 ||
    { cat "$build/cmake.log" >&2; exit 1; }
cmake --build "$build/cmake" --target nnc nnc_runtime >>"$build/cmake.log" 2>&1 ||
    { tail -40 "$build/cmake.log" >&2; exit 1; }
nnc="$build/cmake/nnc"
runtime="$build/cmake/libnnc_runtime.a"

# cblas.h: the directory CMake found for the runtime
cblas_inc=$(sed -n 's/^CBLAS_INCLUDE_DIR:PATH=//p' "$build/cmake/CMakeCache.txt")
cc=${CC:-cc}
warn="-std=c11 -Wall -Wextra -Wpedantic -Werror"

echo "== compiling the models with nnc; harness and generated C with $cc $cflags" >&2
mkdir -p "$build/gen" "$build/bin"
for m in $models; do
    [ -f "$here/$m.nn" ] || { echo "run.sh: no model bench/$m.nn" >&2; exit 1; }
    [ -f "$here/$m.bench.c" ] || { echo "run.sh: no glue bench/$m.bench.c" >&2; exit 1; }
    (cd "$here" && "$nnc" "$m.nn" -o "$build/gen/$m")
    # shellcheck disable=SC2086
    $cc $warn $cflags -I"$build/gen/$m" -I"$repo/runtime" -I"$cblas_inc" -I"$here/src" \
        -DBENCH_WRAP_SGEMM -Wl,--wrap=cblas_sgemm \
        "$here/$m.bench.c" "$here/src/harness.c" "$build/gen/$m/$m.c" \
        "$runtime" -lopenblas -lm -o "$build/bin/bench_$m"
done
# shellcheck disable=SC2086
$cc $warn -O2 -I"$cblas_inc" "$here/src/sgemm_peak.c" -lopenblas -o "$build/bin/sgemm_peak"

# ---- 2. threads: the same for both sides, through the environment ------------
export OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads MKL_NUM_THREADS=$threads
# Debian's torch runs its own ops on libgomp threads and its GEMMs on
# OpenBLAS's pthreads; with libgomp's default spin-waiting, idle OpenMP
# workers keep the cores busy while OpenBLAS's threads need them, and
# PyTorch's multi-threaded steps get several times slower (measured: 83 vs
# 23 ms for mlp_big on 2 threads).  Passive waiting is the fair setting; it
# does nothing for nnc (no OpenMP) nor at 1 thread.  Override by setting it.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}

# ---- 3. measure ---------------------------------------------------------------
raw="$build/raw.txt"
log="$build/log.txt"
: >"$raw"
: >"$log"
{
    echo "META date=$(date -u '+%Y-%m-%dT%H:%M:%SZ')"
    echo "META threads=$threads"
    echo "META omp_wait_policy=$OMP_WAIT_POLICY"
    echo "META rounds=$rounds"
    echo "META min_time=$min_time"
    echo "META cflags=$cflags"
    echo "META cc=$($cc --version | head -1)"
    echo "META cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
    echo "META cores=$(getconf _NPROCESSORS_ONLN)"
    echo "META virt=$(grep -qw hypervisor /proc/cpuinfo && echo ', virtual machine')"
    echo "META kernel=$(uname -sr)"
    echo "META openblas=$(sed -n 's/^#define OPENBLAS_VERSION *//p' "$cblas_inc/openblas_config.h" 2>/dev/null | tr -d '"' | sed 's/ *OpenBLAS *//; s/ *$//' | head -1)"
    echo "META torch=$($python -c 'import torch; print(torch.__version__)' 2>/dev/null)"
    echo "META git=$(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)"
    echo "META load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} >>"$raw"

steps="--min-time $min_time"
# run_side LABEL CMD...: runs one measurement; its RESULT line goes to $raw,
# its human-readable report to the terminal and to $log.
run_side() {
    echo "== round $r/$rounds: $1" >&2
    shift
    "$@" 2>"$build/side.err" | sed "s/^/ROUND=$r /" >>"$raw" ||
        { cat "$build/side.err" >&2; exit 1; }
    tee -a "$log" <"$build/side.err" >&2
}
for r in $(seq 1 "$rounds"); do
    echo "== round $r/$rounds: sgemm peak ($threads thread(s))" >&2
    "$build/bin/sgemm_peak" --min-time "$(awk "BEGIN{print $min_time/3}")" |
        sed "s/^/ROUND=$r /" | tee -a "$raw" >&2
    for m in $models; do
        # nnc first in odd rounds, PyTorch first in even ones (ABBA), so
        # that a steady drift of the machine's speed favours neither side
        for side in $(if [ $((r % 2)) = 1 ]; then echo nnc torch; else echo torch nnc; fi); do
            if [ "$side" = nnc ]; then
                # shellcheck disable=SC2086
                run_side "$m, nnc" "$build/bin/bench_$m" $steps
            else
                # shellcheck disable=SC2086
                run_side "$m, PyTorch" "$python" "$here/src/torch_bench.py" "$m" $steps
            fi
        done
    done
done
echo "META load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$raw"

# ---- 4. report -------------------------------------------------------------------
"$python" "$here/src/report.py" "$raw" "$results"
