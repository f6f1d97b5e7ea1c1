#!/usr/bin/env bash
# gather_elements with out-of-range indices: NaN in generated code (under
# ASan), exit 2 in the driver.
set -euo pipefail
nnc=$1 rtlib=$2 rtinc=$3 src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$nnc" "$src/gather.nn" -o gen --emit=all
cc -std=c11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -Igen -I"$rtinc" \
   "$src/nan_gather.c" gen/gather.c "$rtlib" -lopenblas -lm -fopenmp -o nan_gather
./nan_gather
cc -std=c11 -O1 -Igen -I"$rtinc" gen/gather.c gen/gather_main.c "$rtlib" -lopenblas -lm -fopenmp -o drv
/usr/bin/python3 -c "
import numpy as np
np.save('x.npy', np.arange(8, dtype='<f4').reshape(2, 4))
np.save('ok.npy', np.array([[0, 3, 1], [2, 2, 0]], dtype='<i4'))
np.save('bad.npy', np.array([[0, 3, 1], [2, 4, 0]], dtype='<i4'))
np.save('neg.npy', np.array([[0, -1, 1], [2, 2, 0]], dtype='<i4'))
np.save('y.npy', np.zeros((2, 3), dtype='<f4'))"
./drv train --inputs x.npy,ok.npy --labels y.npy --epochs 0 --save w.st --quiet > /dev/null
./drv predict --weights w.st --inputs x.npy,ok.npy --output out.npy
/usr/bin/python3 -c "
import numpy as np
assert (np.load('out.npy') == [[0, 3, 1], [6, 6, 4]]).all(), np.load('out.npy')"
for f in bad neg; do
    set +e
    ./drv predict --weights w.st --inputs x.npy,$f.npy --output out_$f.npy > out.txt 2> err.txt
    rc=$?
    set -e
    cat err.txt
    [ "$rc" -eq 2 ] || { echo "expected exit 2 for $f.npy, got $rc"; exit 1; }
    grep -q "$f.npy" err.txt || { echo "the message does not name $f.npy"; exit 1; }
    [ ! -e out_$f.npy ] || { echo "predict wrote an output for $f.npy"; exit 1; }
done
echo "out-of-range indices: rejected with exit 2"
