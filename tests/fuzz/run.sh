#!/usr/bin/env bash
# run.sh [--time SECONDS] [--merge] [target...] — builds the
# libFuzzer targets (clang, ASan + UBSan) in build-fuzz/ and runs each on a
# copy of its committed corpus (tests/fuzz/corpus/<target>/) for SECONDS
# (default 60), with its dictionary.  Prints per target the execs/s, the
# coverage (cov: and ft:) and any crash, timeout or leak, whose reproducer
# is left in build-fuzz/findings/<target>/.  Exits 1 if any target found one.
#
# --merge: minimize the run's new inputs into the committed corpus.
# The runs never write into the repository otherwise.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
all=(fuzz_compiler fuzz_safetensors fuzz_npy fuzz_driver_args fuzz_onnx)
time=60 merge=0 targets=()
while [ $# -gt 0 ]; do
  case $1 in
    --time) time=$2; shift 2 ;;
    --time=*) time=${1#--time=}; shift ;;
    --merge) merge=1; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    fuzz_*) targets+=("$1"); shift ;;
    *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

build=${NNC_FUZZ_BUILD:-$root/build-fuzz}
if ! command -v clang >/dev/null; then
  echo "run.sh: clang is needed (scripts/install-deps.sh --test)" >&2
  exit 2
fi
mkdir -p "$build"
CC=clang cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNNC_FUZZ=ON \
  -DNNC_OPENMP=OFF -DNNC_ISA_VARIANTS=OFF >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 2; }
# fuzz_onnx exists only in a build with NNC_ONNX (protobuf-c and onnx.proto)
if ! grep -q '^NNC_ONNX:BOOL=ON' "$build/CMakeCache.txt"; then
  kept=()
  for t in "${targets[@]}"; do
    if [ "$t" = fuzz_onnx ]; then
      echo "fuzz_onnx: skipped (NNC_ONNX is OFF: protobuf-c-compiler, libprotobuf-c-dev, libonnx-dev)"
    else
      kept+=("$t")
    fi
  done
  targets=("${kept[@]}")
  [ ${#targets[@]} -gt 0 ] || exit 0
fi
cmake --build "$build" -j2 --target "${targets[@]}" >"$build/build.log" 2>&1 ||
  { tail -50 "$build/build.log"; exit 2; }

# the longest input each target gets: a few .nn files; a checkpoint or an
# array a little bigger than the seeds; a long command line
declare -A max_len=([fuzz_compiler]=16384 [fuzz_safetensors]=4096 [fuzz_npy]=4096 [fuzz_driver_args]=1024
  [fuzz_onnx]=16384)
# fuzz_onnx also starts from every node test of the ONNX test data (Debian:
# libonnx-testdata), read from there rather than copied into the repository
onnx_data=${NNC_ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}
work=$(mktemp -d "${TMPDIR:-/tmp}/nnc-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
for t in "${targets[@]}"; do
  corpus=$work/$t
  mkdir -p "$corpus" "$build/findings/$t"
  cp "$here/corpus/$t/"* "$corpus/" 2>/dev/null || true
  if [ "$t" = fuzz_onnx ] && [ -d "$onnx_data/node" ]; then
    for f in "$onnx_data"/node/*/model.onnx; do
      d=${f%/model.onnx}
      cp "$f" "$corpus/node_${d##*/}.onnx"
    done
  fi
  log=$build/findings/$t.log
  rc=0
  "$build/tests/fuzz/$t" -max_total_time="$time" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
    -max_len="${max_len[$t]}" -dict="$here/$t.dict" -close_fd_mask=3 \
    -artifact_prefix="$build/findings/$t/" "$corpus" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1 || true) # (none if it stopped at once)
  if [ "$rc" -ne 0 ]; then
    failed=1
    echo "$t: FAILED (exit $rc) after ${execs:-?} runs; ${cov:-no coverage line}"
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)|Test unit written' "$log" | head -8 | sed 's/^/  /'
    echo "  log: $log"
  else
    echo "$t: ok, ${execs:-?} runs in ${time}s, ${secs:-?} execs/s, $cov"
  fi
  if [ "$merge" = 1 ]; then
    "$build/tests/fuzz/$t" -merge=1 -max_len="${max_len[$t]}" -timeout=10 -close_fd_mask=3 \
      "$here/corpus/$t" "$corpus" >>"$log" 2>&1
    echo "  merged: $(ls "$here/corpus/$t" | wc -l) seeds in tests/fuzz/corpus/$t"
  fi
done
exit $failed
