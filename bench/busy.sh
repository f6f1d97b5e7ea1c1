#!/usr/bin/env bash
# bench/busy.sh — how busy nnc's threads are in one model's training step.
#
#   bench/busy.sh [--build-dir DIR] [--build native|portable] [--threads "1 N"]
#                 [--min-time S] MODEL
#
# Needs perf (Debian: linux-perf) and the build of bench/run.sh (same
# --build-dir).  Runs the model's bench program under `perf record` (4 kHz
# samples of every thread) at each thread count and prints, per step: the
# wall time (mean), the CPU time in nnc's own code and libraries (the
# work), in libgomp (threads spinning while they wait for a region or a
# barrier) and in the kernel; and how busy the threads were, work / (T x
# wall).  On a machine whose speed drifts, work at T threads against work
# at 1 tells whether threads make more work (cache traffic between cores)
# and busy tells how much of the T cores' time the step used, figures that
# a ratio of wall times taken minutes apart cannot separate.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build="$here/build"
which=portable
threads="1 $(nproc)"
min_time=3
while [ $# -gt 1 ]; do
    case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --build) which=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --min-time) min_time=$2; shift 2 ;;
    *) echo "busy.sh: unknown argument '$1'" >&2; exit 1 ;;
    esac
done
[ $# -eq 1 ] || { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 1; }
m=$1
bin="$build/bin/$which/bench_$m"
[ -x "$bin" ] || { echo "busy.sh: no $bin; run bench/run.sh --models $m first" >&2; exit 1; }
command -v perf >/dev/null || { echo "busy.sh: needs perf (Debian: linux-perf)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-8s %7s %12s %13s %13s %11s %6s\n' threads "wall ms" "work ms CPU" "libgomp ms" "kernel ms" "work/1T" busy
work1=""
for t in $threads; do
    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=$t perf record -q -F 4000 -o "$tmp/p.data" \
        "$bin" --min-time "$min_time" 2>"$tmp/out.txt" >/dev/null
    steps=$(($(grep -o '[0-9]* warm-up' "$tmp/out.txt" | cut -d' ' -f1) + $(grep -o '[0-9]* timed steps' "$tmp/out.txt" | cut -d' ' -f1)))
    wall=$(grep -o 'mean [0-9.]* ms' "$tmp/out.txt" | cut -d' ' -f2)
    # samples by shared object: libgomp's are spinning, [kernel.kallsyms] the OS
    read -r work gomp kern < <(perf report -i "$tmp/p.data" -n --no-children --sort dso -g none 2>/dev/null |
        awk -v s="$steps" '$1 ~ /%$/ && NF >= 3 {
            if ($3 ~ /libgomp/) g += $2; else if ($3 ~ /kernel/) k += $2; else w += $2 }
            END { printf "%.4f %.4f %.4f\n", w / s / 4, g / s / 4, k / s / 4 }')
    [ -n "$work1" ] || work1=$work
    awk -v t="$t" -v wall="$wall" -v w="$work" -v g="$gomp" -v k="$kern" -v w1="$work1" 'BEGIN {
        printf "%-8s %7.3f %12.3f %13.3f %13.3f %10.2fx %5.0f%%\n", t, wall, w, g, k, w / w1, 100 * w / (t * wall) }'
done
