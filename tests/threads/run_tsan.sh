#!/usr/bin/env bash
# A training step and a prediction under ThreadSanitizer, at 2 and 3
# threads: the runtime's sources and a model's generated C built by clang
# with -fsanitize=thread -fopenmp, LLVM's OpenMP runtime and its Archer
# tool (libarcher.so), which tells TSan what OpenMP's barriers and
# ordered regions synchronize.  libomp itself is not instrumented:
# ignore_noninstrumented_modules keeps its internals out of the reports,
# and tsan.supp silences one report of Archer's own (a "double lock" in
# its model of `ordered`).  Any race in nnc's code fails the test.
#   run_tsan.sh NNC REPO MODEL.nn BATCH WORKDIR
set -euo pipefail
nnc=$1 repo=$2 model=$3 batch=$4 work=$5
archer=$(ls /usr/lib/llvm-*/lib/libarcher.so 2>/dev/null | head -1 || true)
if ! command -v clang >/dev/null || [ -z "$archer" ]; then
    echo "run_tsan.sh: needs clang and LLVM's libarcher.so (Debian: libomp-dev); skipped"
    exit 77
fi
rm -rf "$work" && mkdir -p "$work" && cd "$work"
"$nnc" "$model" --emit=all -o gen >/dev/null
blas_inc=$(dirname "$(echo '#include <cblas.h>' | cc -E -H -x c - 2>&1 >/dev/null | grep 'cblas.h$' | head -1 | sed 's/^\.* //')")
srcs=$(ls "$repo"/runtime/*.c | grep -v '/dispatch.c$')
# shellcheck disable=SC2086
clang -std=c11 -O1 -g -fopenmp -fsanitize=thread -D_POSIX_C_SOURCE=200809L -I"$repo/runtime" -I"$blas_inc" \
    gen/*.c $srcs -lopenblas -lm -o drv
/usr/bin/python3 - "$batch" <<'PY'
import re, subprocess, sys
import numpy as np
batch = int(sys.argv[1])
info = subprocess.run(["./drv", "info"], capture_output=True, text=True, check=True).stdout
rng = np.random.default_rng(5)
ins, labs = [], []
for line in info.splitlines():
    m = re.match(r"^(input|label) \S+ (f32|i32) \[([^\]]*)\](?: values in \[(-?\d+), (-?\d+)\))?", line)
    if not m:
        continue
    shape = [2 * batch] + [int(d) for d in m.group(3).split(",")[1:]]
    a = (rng.standard_normal(shape).astype(np.float32) if m.group(2) == "f32"
         else rng.integers(int(m.group(4)), int(m.group(5)), size=shape).astype(np.int32))
    f = "%s%d.npy" % (m.group(1), len(ins) + len(labs))
    np.save(f, a)
    (ins if m.group(1) == "input" else labs).append(f)
open("args", "w").write("--inputs %s%s" % (",".join(ins), " --labels " + ",".join(labs) if labs else ""))
PY
export TSAN_OPTIONS="halt_on_error=1 ignore_noninstrumented_modules=1 suppressions=$repo/tests/threads/tsan.supp"
export OMP_TOOL_LIBRARIES=$archer
for t in 2 3; do
    # shellcheck disable=SC2046
    ./drv train $(cat args) --epochs 1 --batch "$batch" --save w.safetensors --threads "$t" --quiet
    ./drv predict --weights w.safetensors $(sed 's/ --labels.*//' args) --output p.npy --threads "$t"
done
echo "run_tsan.sh: $(basename "$model"): train and predict at 2 and 3 threads, no race reported"
