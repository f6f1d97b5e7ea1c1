#!/usr/bin/env bash
set -euo pipefail
nnc=$1 rtlib=$2 rtinc=$3 src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$nnc" "$src/ids.nn" -o gen --emit=all
cc -std=c11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -Igen -I"$rtinc" \
   "$src/nan_rows.c" gen/ids.c "$rtlib" -lopenblas -lm -fopenmp -o nan_rows
./nan_rows
cc -std=c11 -O1 -Igen -I"$rtinc" gen/ids.c gen/ids_main.c "$rtlib" -lopenblas -lm -fopenmp -o drv
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

# The loss over a data set run in chunks (train's final loss, in chunks of
# --batch) is the mean over every label but -100, as one pass gives it:
# chunks with more ignored labels weigh less, a chunk of -100 only nothing.
/usr/bin/python3 -c "
import numpy as np
np.save('ids7.npy', np.array([[0,1,4],[2,3,0],[1,1,1],[4,3,2],[0,0,0],[2,2,4],[3,1,0]], dtype='<i4'))
np.save('y7.npy', np.array([[1,2,3],[-100,-100,-100],[4,-100,-100],[0,1,2],[3,-100,1],[2,2,2],[-100,0,-100]], dtype='<i4'))"
./drv train --inputs ids7.npy --labels y7.npy --epochs 0 --batch 2 --save w7.st --quiet > train7.txt
./drv eval --weights w7.st --inputs ids7.npy --labels y7.npy > eval7.txt
/usr/bin/python3 - <<'PY'
def loss(f):
    return float([l for l in open(f) if l.startswith('loss=')][0].split('=')[1])
a, b = loss('train7.txt'), loss('eval7.txt')
print('chunked loss', a, 'one pass', b)
assert abs(a - b) <= 1e-6 * abs(b), 'chunked loss differs from the one-pass loss'
PY
