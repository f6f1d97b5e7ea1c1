#!/bin/bash
# Runs every case in tests/sweep/cases (or the ones named) with gcc and with
# clang + ASan/UBSan; logs in tests/sweep/logs/<case>.<variant>.log.
# usage: tests/sweep/run.sh [-j JOBS] [case ...]
# RUNTIME_LIB=build/tests/parity/libnnc_runtime_native.a sweeps the direct
# convolution kernels (the default build's runtime takes the column path
# unless built for AVX-512: nnc_conv_direct_ok()).
cd "$(dirname "$0")/../.." || exit 1
J=2
if [ "$1" = "-j" ]; then J=$2; shift 2; fi
B=$PWD/build
mkdir -p tests/sweep/logs
if [ $# -eq 0 ]; then set -- $(ls ${CASEDIR:-tests/sweep/cases}/*.nn | xargs -n1 basename | sed 's/\.nn$//'); fi
export B RUNTIME_LIB=${RUNTIME_LIB:-$B/libnnc_runtime.a}
export CASEDIR=${CASEDIR:-tests/sweep/cases}
export OPENBLAS_NUM_THREADS=1
export ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$PWD/tests/parity/lsan.supp UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for c in "$@"; do echo "$c gcc"; echo "$c asan"; done | xargs -P "$J" -L1 bash -c '
  c=$0; v=$1
  if [ $v = gcc ]; then extra="--cc gcc"; else extra="--cc clang --sanitize"; fi
  /usr/bin/python3 tests/parity/parity.py --nnc $B/nnc --runtime-lib $RUNTIME_LIB \
     --runtime-include $PWD/runtime --include /usr/include/x86_64-linux-gnu $extra \
     --case ${CASEDIR:-tests/sweep/cases}/$c.nn > tests/sweep/logs/$c.$v.log 2>&1
  echo "$(tail -2 tests/sweep/logs/$c.$v.log | head -1)  [$v]"'
