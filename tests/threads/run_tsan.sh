#!/usr/bin/env bash
# A training step and a prediction under ThreadSanitizer, at 2 and 3
# threads: the runtime's sources and a model's generated C built by clang
# with -fsanitize=thread -fopenmp, LLVM's OpenMP runtime and its Archer
# tool (libarcher.so), which tells TSan what OpenMP's barriers and
# ordered regions synchronize.  libomp itself is not instrumented:
# ignore_noninstrumented_modules keeps its internals out of the reports,
# and tsan.supp silences one report of Archer's own (a "double lock" in
# its model of `ordered`).  Any race in nnc's code fails the test.
#   run_tsan.sh NNC REPO CBLAS_INCLUDE_DIR MODEL.nn BATCH WORKDIR [avx2]
# With avx2 the runtime is built for x86-64-v3 (its AVX2 kernels, as the
# variants run them; skipped on a CPU without AVX2 and FMA): the plain
# build runs the kernels' scalar loops only.
set -euo pipefail
nnc=$1 repo=$2 blas_inc=$3 model=$4 batch=$5 work=$6 isa=${7:-}
march=()
if [ "$isa" = avx2 ]; then
    if ! grep -qw avx2 /proc/cpuinfo || ! grep -qw fma /proc/cpuinfo; then
        echo "run_tsan.sh: this CPU has no AVX2 and FMA; skipped"
        exit 77
    fi
    march=(-march=x86-64-v3 -mtune=generic)
fi
archer=""
for f in /usr/lib/llvm-*/lib/libarcher.so; do [ -e "$f" ] && archer=$f; done
if ! command -v clang >/dev/null || [ -z "$archer" ]; then
    echo "run_tsan.sh: needs clang and LLVM's libarcher.so (Debian: libomp-dev); skipped"
    exit 77
fi
rm -rf "$work" && mkdir -p "$work" && cd "$work"
"$nnc" "$model" --emit=all -o gen >/dev/null
srcs=()
for f in "$repo"/runtime/*.c; do [ "${f##*/}" = dispatch.c ] || srcs+=("$f"); done
# The generated C's plain functions only (NNC_MULTI_ISA=0): its AVX2 and
# AVX-512 copies have the same loops and regions, and compiling all three
# under TSan took 15 of gpt_mini's 30 s.
clang -std=c11 -O1 -g "${march[@]}" -fopenmp -fsanitize=thread -D_POSIX_C_SOURCE=200809L -DNNC_MULTI_ISA=0 -I"$repo/runtime" \
    ${blas_inc:+-I"$blas_inc"} gen/*.c "${srcs[@]}" -lopenblas -lm -o drv
/usr/bin/python3 "$repo/tests/threads/model_data.py" ./drv . $((2 * batch)) 5 >args
export TSAN_OPTIONS="halt_on_error=1 ignore_noninstrumented_modules=1 suppressions=$repo/tests/threads/tsan.supp"
export OMP_TOOL_LIBRARIES=$archer
for t in 2 3; do
    # shellcheck disable=SC2046
    ./drv train $(cat args) --epochs 1 --batch "$batch" --save w.safetensors --threads "$t" --quiet
    # shellcheck disable=SC2046
    ./drv predict --weights w.safetensors $(sed 's/ --labels.*//' args) --output p.npy --threads "$t"
done
echo "run_tsan.sh: $(basename "$model")${isa:+ ($isa)}: train and predict at 2 and 3 threads, no race reported"
