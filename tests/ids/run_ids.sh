#!/usr/bin/env bash
set -euo pipefail
nnc=$1 rtlib=$2 rtinc=$3 src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$nnc" "$src/ids.nn" -o gen --emit=all
cc -std=c11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -Igen -I"$rtinc" \
   "$src/nan_rows.c" gen/ids.c "$rtlib" -lopenblas -lm -o nan_rows
./nan_rows
cc -std=c11 -O1 -Igen -I"$rtinc" gen/ids.c gen/ids_main.c "$rtlib" -lopenblas -lm -o drv
/usr/bin/python3 -c "
import numpy as np
np.save('ok.npy', np.array([[0, 1, 4], [2, 3, 0]], dtype='<i4'))
np.save('bad.npy', np.array([[0, 1, 4], [2, 5, 0]], dtype='<i4'))
np.save('y.npy', np.array([[1, 2, 3], [4, 0, -100]], dtype='<i4'))"
./drv train --inputs ok.npy --labels y.npy --epochs 0 --save w.st --quiet > /dev/null
./drv eval --weights w.st --inputs ok.npy --labels y.npy > /dev/null
set +e
./drv eval --weights w.st --inputs bad.npy --labels y.npy > out.txt 2> err.txt
rc=$?
set -e
cat err.txt
[ "$rc" -eq 2 ] || { echo "expected exit 2, got $rc"; exit 1; }
grep -q "bad.npy" err.txt || { echo "the message does not name the file"; exit 1; }
[ ! -s out.txt ] || { echo "eval printed results for a bad file"; exit 1; }
echo "out-of-range ids: rejected with exit 2"
