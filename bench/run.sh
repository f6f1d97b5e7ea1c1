#!/usr/bin/env bash
# bench/run.sh — the nnc training-step benchmark, in one command.
#
#   bench/run.sh [--threads "1 N"] [--rounds R] [--min-time S] [--models "a b"]
#                [--no-native] [--cflags "FLAGS"] [--build-dir DIR]
#                [--results FILE] [--quick] [--isa avx2|generic] [--blas-env]
#                [--no-torch]
#
# Installs nnc (CMake's default build type, no -march) into a prefix under the build dir
# and builds every bench/<model>.nn as a user does: nnc, then
# cc $FLAGS ... $(pkg-config --cflags --libs nnc), linked with the harness
# (bench/src/harness.c).  Unless --no-native, the same again with the
# runtime and the generated C at -march=native (the "native" column).
# Measures the OpenBLAS sgemm rate and the CPU's FMA peak, then times the
# training step (forward + backward + Adam) of every model in nnc and in
# PyTorch at each thread count (default 1 and every core), each run in its
# own process, alternating for R rounds.  Prints the table and writes
# bench/results.md (or --results FILE).  --isa avx2 (or generic) runs
# both sides at that instruction set, as on a CPU without AVX-512: nnc
# with NNC_ISA, PyTorch with oneDNN and ATen limited to it
# (ONEDNN_MAX_CPU_ISA, ATEN_CPU_CAPABILITY).  OPENBLAS_CORETYPE is
# unset, so that OpenBLAS picks its kernels by the CPU; --blas-env keeps
# the caller's (OPENBLAS_CORETYPE=Haswell with --isa avx2: PyTorch's GEMMs
# at AVX2 too, as on a CPU without AVX-512), and results.md says so.
# --no-torch times nnc's builds alone: with the native build, the
# portable/native comparison in a third of the time.
# See bench/README.md.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

cores=$(getconf _NPROCESSORS_ONLN)
threads="1 $cores"
rounds=3
min_time=3
min_iters=50
warmup=20
models="digits_mlp mlp_big gpt_mini lenet5 resnet_small resnet18 gpt_h6 vgg_small gpt_t50 gpt_hd128 gpt_t256 cnn48 mobile_dw lstm_lm mbv2 vit_tiny mlp_bn cnn1d resnext stem96 speech1d"
# the flags README.md recommends for generated code; the native build adds -march=native
cflags="-O3 -fno-math-errno -fno-trapping-math"
native=1
torch=1
build="$here/build"
results="$here/results.md"
python=/usr/bin/python3

usage() {
    sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'
    exit "${1:-1}"
}
while [ $# -gt 0 ]; do
    case "$1" in
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --min-time) min_time=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --no-native) native=0; shift ;;
    --cflags) cflags=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --isa) isa=$2; shift 2 ;;
    --blas-env) blas_env=1; shift ;;
    --no-torch) torch=0; shift ;;
    --quick) rounds=1; min_time=0.5; min_iters=10; warmup=5; shift ;;
    -h | --help) usage 0 ;;
    *) echo "run.sh: unknown argument '$1'" >&2; usage ;;
    esac
done
# --isa: nnc's kernels by NNC_ISA; PyTorch's convolutions (oneDNN, which
# JIT-compiles for the widest ISA it finds) and ATen's kernels limited to it
torch_isa=""
case "${isa:-}" in
'') ;;
avx2) export NNC_ISA=avx2; torch_isa="ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2" ;;
generic) export NNC_ISA=generic; torch_isa="ONEDNN_MAX_CPU_ISA=SSE41 ATEN_CPU_CAPABILITY=default" ;;
*) echo "run.sh: --isa wants avx2 or generic" >&2; exit 1 ;;
esac
# thread counts: positive integers, each once, in the order given
tlist=""
for t in $threads; do
    case "$t" in '' | *[!0-9]* | 0) echo "run.sh: --threads wants positive integers" >&2; exit 1 ;; esac
    case " $tlist " in *" $t "*) ;; *) tlist="$tlist $t" ;; esac
done
threads=${tlist# }
[ -n "$threads" ] || { echo "run.sh: --threads wants positive integers" >&2; exit 1; }
case "$rounds" in '' | *[!0-9]* | 0) echo "run.sh: --rounds wants a positive integer" >&2; exit 1 ;; esac
builds="portable"
[ "$native" = 1 ] && builds="portable native"
mkdir -p "$build"
build=$(cd "$build" && pwd)

# ---- 1. build -----------------------------------------------------------------
# shellcheck source=src/install.sh
. "$here/src/install.sh"
install_nnc portable ""
[ "$native" = 1 ] && install_nnc native "-march=native"
nnc="$build/prefix-portable/bin/nnc"

cc=${CC:-cc}
warn="-std=c11 -Wall -Wextra -Wpedantic -Werror"
build_flags() { if [ "$1" = native ]; then echo "$cflags -march=native"; else echo "$cflags"; fi; }

echo "== compiling the models with nnc; each build with $cc FLAGS ... \$(pkg-config --cflags --libs nnc)" >&2
mkdir -p "$build/gen"
for m in $models; do
    [ -f "$here/$m.nn" ] || { echo "run.sh: no model bench/$m.nn" >&2; exit 1; }
    [ -f "$here/$m.bench.c" ] || { echo "run.sh: no glue bench/$m.bench.c" >&2; exit 1; }
    (cd "$here" && "$nnc" "$m.nn" -o "$build/gen/$m")
    for b in $builds; do
        mkdir -p "$build/bin/$b"
        # shellcheck disable=SC2046,SC2086
        $cc $warn $(build_flags $b) -I"$build/gen/$m" -I"$here/src" \
            -DBENCH_WRAP_SGEMM -Wl,--wrap=nnc_gemm_f32_serial -Wl,--wrap=nnc_gemm_bias_f32_serial \
            "$here/$m.bench.c" "$here/src/harness.c" "$build/gen/$m/$m.c" \
            $(PKG_CONFIG_PATH=$(pc_dir $b) pkg-config --cflags --libs nnc) -o "$build/bin/$b/bench_$m"
    done
done
# cblas.h: the directory CMake found for the runtime
cblas_inc=$(sed -n 's/^CBLAS_INCLUDE_DIR:PATH=//p' "$build/cmake-portable/CMakeCache.txt")
# shellcheck disable=SC2086
$cc $warn -O2 -I"$cblas_inc" "$here/src/sgemm_peak.c" -lopenblas -o "$build/bin/sgemm_peak"
# shellcheck disable=SC2086
$cc $warn -O2 "$here/src/fma_peak.c" -pthread -o "$build/bin/fma_peak"
# shellcheck disable=SC2086
$cc $warn -O2 "$here/src/cpu_probe.c" -pthread -o "$build/bin/cpu_probe"

# ---- 2. threads ----------------------------------------------------------------
# Set per run through the environment.  nnc at N threads: OMP_NUM_THREADS=N,
# its own OpenMP threads for its kernels, GEMMs (split by nnc over
# single-threaded OpenBLAS) and generated loops, with libgomp's default
# waiting, as a user gets it.  PyTorch (Debian's: its own kernels on libgomp
# threads, its GEMMs in OpenBLAS, which torch.set_num_threads does not
# reach) runs at N threads in the fastest of (torch N, BLAS 1), (torch 1,
# BLAS N), (torch N, BLAS N), per model.  For PyTorch, idle libgomp workers
# spin by default and starve OpenBLAS's threads (its mlp_big step on 2
# threads measured 83 instead of 23 ms): passive waiting is its fair
# setting (torch_wait).
torch_wait=${OMP_WAIT_POLICY:-PASSIVE}
[ "${blas_env:-0}" = 1 ] || unset OPENBLAS_CORETYPE 2>/dev/null || true
# torch_modes T: "torch threads x BLAS threads" combinations tried at T threads
torch_modes() {
    if [ "$torch" = 0 ]; then return; fi
    if [ "$1" = 1 ]; then echo "1x1"; else echo "${1}x1 1x${1} ${1}x${1}"; fi
}
# the FMA peak at 1 core, every core and each thread count asked for
fma_counts=$(for t in 1 $threads $cores; do echo "$t"; done | sort -nu | tr '\n' ' ')
fma_counts=${fma_counts% }

# ---- 3. measure ---------------------------------------------------------------
raw="$build/raw.txt"
log="$build/log.txt"
: >"$raw"
: >"$log"
{
    echo "META date=$(date -u '+%Y-%m-%dT%H:%M:%SZ')"
    echo "META threads=$threads"
    echo "META builds=$builds"
    echo "META omp_wait_policy=PyTorch $torch_wait, nnc ${OMP_WAIT_POLICY:-default}"
    echo "META rounds=$rounds"
    echo "META coretype=${OPENBLAS_CORETYPE:-}"
    echo "META min_time=$min_time"
    echo "META min_iters=$min_iters"
    echo "META warmup=$warmup"
    echo "META cflags_portable=$(build_flags portable)"
    echo "META cflags_native=$(build_flags native)"
    echo "META runtime_portable=CMake default build type (RelWithDebInfo; runtime -O3)"
    echo "META runtime_native=CMake default build type, CMAKE_C_FLAGS=-march=native"
    echo "META cc=$($cc --version | head -1)"
    echo "META cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
    echo "META cores=$cores"
    echo "META virt=$(grep -qw hypervisor /proc/cpuinfo && echo ', virtual machine')"
    echo "META kernel=$(uname -sr)"
    echo "META openblas=$(sed -n 's/^#define OPENBLAS_VERSION *//p' "$cblas_inc/openblas_config.h" 2>/dev/null | tr -d '"' | sed 's/ *OpenBLAS *//; s/ *$//' | head -1)"
    echo "META torch=$($python -c 'import torch; print(torch.__version__)' 2>/dev/null)"
    echo "META git=$(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)"
    echo "META load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "META torch_isa=${torch_isa:-unlimited}"
} >>"$raw"

steps="--min-time $min_time --min-iters $min_iters --warmup $warmup"
# run_side TAGS LABEL CMD...: runs one measurement; its stdout lines go to
# $raw prefixed with ROUND=r and TAGS, its report to the terminal and $log.
run_side() {
    local tags=$1
    echo "== round $r/$rounds: $2" >&2
    shift 2
    "$@" 2>"$build/side.err" | sed "s/^/ROUND=$r${tags:+ $tags} /" >>"$raw" ||
        { cat "$build/side.err" >&2; exit 1; }
    tee -a "$log" <"$build/side.err" >&2
}
# probe MODEL WHEN: the core-to-core round trip now (src/cpu_probe.c), into
# $raw, before and after each model's runs of a round: the 2-core VM of
# bench/README.md has a slow mode (330-390 ns against 56-76) that slows
# multi-thread runs by up to 1.5x, and comes and goes within a run
probe() {
    [ "$cores" -ge 2 ] || return 0
    local ns
    ns=$("$build/bin/cpu_probe" 2>/dev/null | sed -n 's/.*round trip CPU 0 <-> 1: \([0-9]*\) ns.*/\1/p')
    [ -z "$ns" ] || echo "ROUND=$r PROBE model=$1 when=$2 rt_ns=$ns" >>"$raw"
}
for r in $(seq 1 "$rounds"); do
    echo "META load_round$r=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$raw"
    for t in $threads; do
        run_side "TH=$t" "sgemm peak ($t thread(s))" \
            env OPENBLAS_NUM_THREADS="$t" "$build/bin/sgemm_peak" --min-time "$(awk "BEGIN{print $min_time/3}")"
        grep "^ROUND=$r TH=$t SGEMM" "$raw" >&2 || true
    done
    # shellcheck disable=SC2086
    run_side "" "FMA peak ($fma_counts thread(s))" \
        "$build/bin/fma_peak" --min-time "$(awk "BEGIN{print $min_time/6}")" $fma_counts
    grep "^ROUND=$r FMA" "$raw" >&2 || true
    for m in $models; do
        # every run of this model this round: nnc's builds and PyTorch's
        # modes at each thread count; in odd rounds in this order, in even
        # ones reversed (ABBA), so that a steady drift favours none
        runs=""
        for t in $threads; do
            for b in $builds; do runs="$runs nnc:$b:$t"; done
            for mode in $(torch_modes "$t"); do runs="$runs torch:$mode:$t"; done
        done
        # shellcheck disable=SC2086
        [ $((r % 2)) = 0 ] && runs=$(printf '%s\n' $runs | tac | tr '\n' ' ')
        probe "$m" before
        for run in $runs; do
            IFS=: read -r side conf t <<<"$run"
            if [ "$side" = nnc ]; then
                # shellcheck disable=SC2086
                run_side "CONF=$conf TH=$t" "$m, nnc $conf, $t thread(s)" \
                    env OMP_NUM_THREADS="$t" "$build/bin/$conf/bench_$m" $steps
            else
                tt=${conf%x*} bt=${conf#*x}
                # shellcheck disable=SC2086
                run_side "CONF=torch-$conf TH=$t" "$m, PyTorch torch $tt x BLAS $bt threads" \
                    env $torch_isa OPENBLAS_NUM_THREADS="$bt" OMP_NUM_THREADS="$tt" MKL_NUM_THREADS="$tt" OMP_WAIT_POLICY="$torch_wait" \
                    "$python" "$here/src/torch_bench.py" "$m" --threads "$tt" $steps
            fi
        done
        probe "$m" after
    done
done
echo "META load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$raw"

# ---- 4. report -------------------------------------------------------------------
"$python" "$here/src/report.py" "$raw" "$results"
