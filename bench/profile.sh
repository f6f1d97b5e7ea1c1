#!/usr/bin/env bash
# bench/profile.sh — where one model's nnc training step spends its time.
#
#   bench/profile.sh [--cpu-time] [--min-time S] [--build-dir DIR]
#                    [--build native|portable] [--threads N] MODEL
#
# Needs the build of bench/run.sh (same --build-dir): the generated
# DIR/gen/MODEL/MODEL.c and the installed runtime of the build named
# (default native if run.sh installed it, else portable; native compiles
# the generated C with -march=native too).  Copies the generated C with a timer
# around every operation of train_forward and backward and every cblas_sgemm
# call (src/op_profile.py), links it with the harness as run.sh does, runs
# it on 1 thread (or --threads N: each operation's wall time, from the
# calling thread, which then includes its threads' start and join), and
# prints the operations by time (summed over layers), per-category totals
# (GEMM time vs the generated code's own loops; at 1 thread only) and the
# per-GEMM-shape rates.  --cpu-time times with the thread's CPU clock, which
# a busy machine disturbs less.  Full per-operation lines: DIR/prof/MODEL.log.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build="$here/build"
which=""
min_time=3
clock=""
threads=1
while [ $# -gt 1 ]; do
    case "$1" in
    --cpu-time) clock="-DOPPROF_CLOCK=CLOCK_THREAD_CPUTIME_ID"; shift ;;
    --min-time) min_time=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --build) which=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    *) echo "profile.sh: unknown argument '$1'" >&2; exit 1 ;;
    esac
done
[ $# -eq 1 ] || { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 1; }
m=$1
gen="$build/gen/$m/$m.c"
[ -f "$gen" ] || { echo "profile.sh: no $gen; run bench/run.sh --models $m first" >&2; exit 1; }
[ -n "$which" ] || { [ -d "$build/prefix-native" ] && which=native || which=portable; }
pc=$(find "$build/prefix-$which" -name nnc.pc 2>/dev/null | head -1)
[ -n "$pc" ] || { echo "profile.sh: no $build/prefix-$which; run bench/run.sh first" >&2; exit 1; }
flags="-O3 -fno-math-errno -fno-trapping-math"
[ "$which" = native ] && flags="$flags -march=native"
mkdir -p "$build/prof"
python=/usr/bin/python3
"$python" "$here/src/op_profile.py" "$gen" "$build/prof/$m.c" "$here/$m.nn"
# shellcheck disable=SC2046,SC2086
${CC:-cc} -std=c11 -Wall -Wextra -Wpedantic -Werror ${CFLAGS:-$flags} \
    $clock -I"$build/gen/$m" -I"$here/src" \
    -DBENCH_WRAP_SGEMM -Wl,--wrap=nnc_gemm_f32_serial -Wl,--wrap=nnc_gemm_bias_f32_serial \
    "$here/$m.bench.c" "$here/src/harness.c" "$build/prof/$m.c" \
    $(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs nnc) -o "$build/prof/bench_$m"
OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=$threads "$build/prof/bench_$m" --min-time "$min_time" \
    >/dev/null 2>"$build/prof/$m.log"
grep -v '^OP \|^CAT \|^TOTAL ' "$build/prof/$m.log"
echo
"$python" "$here/src/op_profile.py" --report "$build/prof/$m.log"
