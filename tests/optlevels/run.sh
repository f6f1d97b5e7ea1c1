#!/bin/sh
# run.sh O0 O3 SAN LSAN_SUPP — see optlevels.c.  Fails on the first
# difference.
set -eu
o0=$1 o3=$2 san=$3 supp=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
"$o0" ref.bin
"$o3" o3.bin
# 1e-4, the parity tests' bound: the -O0 build runs the convolutions on
# im2col + sgemm, the -O3 one on the AVX-512 kernels, and FMA contraction
# differs; after three SGD steps they agree to ~1e-5 (measured: within
# 1e-5, not within 1e-6).  The gcc 12 miscompile gave 1e30.
"$o0" --compare ref.bin o3.bin 1e-4
"$o3" o3p.bin --poison
cmp o3.bin o3p.bin || { echo "run.sh: the poisoned arena changed the -O3 results" >&2; exit 1; }
ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$supp "$san" san.bin --poison
"$o0" --compare ref.bin san.bin 1e-4
echo "run.sh: -O0, -O3 -march=native, poisoned -O3, ASan+UBSan poisoned: all agree"
