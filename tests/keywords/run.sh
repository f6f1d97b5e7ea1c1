#!/bin/sh
# run.sh NNC CC RUNTIME_LIB INCLUDES PYTHON OUT — names C cannot take as
# written, compiled and run with one C compiler (tests/keywords).
#
#   1. tests/parity/c_keywords.nn (fields, a layer, hparams, params, state,
#      inputs, a label and a metric named int, short, default, case, errno,
#      main, _Bool, __x, _X, NULL, exp, m, n, ...) in float with the driver,
#      again as --prefix n, and in double; prefixes.nn (models whose prefix
#      is default_, exp_, u_foo_, argc, desc, n): every C file compiles at
#      -std=c11 -Wall -Wextra -Wpedantic -Werror, and at -std=gnu17, where
#      the headers define more (`linux`, `M_E`);
#   2. the driver of c_keywords trains for a few steps; the checkpoint's
#      tensors are named as written in the .nn (check.py names); eval
#      prints `case=`; the driver built with --prefix n loads it.
set -eu
nnc=$1 cc=$2 rtlib=$3 incs=$4 py=$5 out=$6
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../parity/c_keywords.nn
inc=""
for d in $(echo "$incs" | tr '|' ' '); do inc="$inc -I$d"; done
rm -rf "$out" && mkdir -p "$out"
"$nnc" "$src" -o "$out/m" --emit=all
"$nnc" "$src" -o "$out/n" --emit=all --prefix n
"$nnc" "$src" -o "$out/f64" --precision=f64
"$nnc" "$here/prefixes.nn" -o "$out/p" --emit=all
test -f "$out/m/m.h" && test -f "$out/n/n.h" && test -f "$out/p/default_.h" && test -f "$out/p/u_foo_.h"
for std in c11 gnu17; do
    for f in "$out"/*/*.c; do
        # shellcheck disable=SC2086
        $cc -std=$std -Wall -Wextra -Wpedantic -Werror -O1 -c $inc "$f" -o "$out/obj.o"
    done
done
for p in m n; do
    # shellcheck disable=SC2086
    $cc -std=c11 -Wall -Wextra -Wpedantic -Werror -O1 $inc "$out/$p/$p.c" "$out/$p/${p}_main.c" "$rtlib" \
        -lopenblas -lm -fopenmp -o "$out/drv_$p"
done
"$py" "$here/check.py" data "$out"
cd "$out"
./drv_m train --inputs int.npy,exp.npy --labels case.npy --save ckpt.safetensors --epochs 2 --batch 16 --quiet
"$py" "$here/check.py" names ckpt.safetensors
./drv_m eval --weights ckpt.safetensors --inputs int.npy,exp.npy --labels case.npy >eval_m.txt
"$py" "$here/check.py" eval eval_m.txt
./drv_n eval --weights ckpt.safetensors --inputs int.npy,exp.npy --labels case.npy >eval_n.txt
cmp eval_m.txt eval_n.txt
echo "ok: $cc"
