#!/usr/bin/env bash
# Trains dropout.nn three times: seeds 5, 5 and 6, from the same weights.
# Same seed -> byte-identical checkpoints; another seed -> different ones
# (only the dropout masks and the shuffle depend on the seed here).
set -euo pipefail
nnc=$1 rtlib=$2 rtinc=$3 src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$nnc" "$src/dropout.nn" -o gen --emit=all
cc -std=c11 -O2 -Igen -I"$rtinc" gen/drop.c gen/drop_main.c "$rtlib" -lopenblas -lm -fopenmp -o drop
/usr/bin/python3 -c "
import numpy as np
r = np.random.default_rng(0)
np.save('x.npy', r.standard_normal((64, 6)).astype('<f4'))
np.save('y.npy', r.integers(0, 3, 64).astype('<i4'))"
./drop train --inputs x.npy --labels y.npy --epochs 0 --save w0.st --quiet > /dev/null
run() { ./drop train --inputs x.npy --labels y.npy --weights w0.st --epochs 3 --seed "$1" --save "$2" --quiet > /dev/null; }
run 5 a.st
run 5 b.st
run 6 c.st
cmp -s a.st b.st || { echo "same seed gave different weights"; exit 1; }
cmp -s a.st c.st && { echo "different seeds gave the same weights"; exit 1; }
a=a.st
cmp -s "$a" w0.st && { echo "training did not change the weights"; exit 1; }
# grad is one batch and no shuffle: only the dropout mask depends on --seed
./drop grad --weights w0.st --inputs x.npy --labels y.npy --seed 5 --output g5a.st
./drop grad --weights w0.st --inputs x.npy --labels y.npy --seed 5 --output g5b.st
./drop grad --weights w0.st --inputs x.npy --labels y.npy --seed 6 --output g6.st
cmp -s g5a.st g5b.st || { echo "same seed gave different dropout gradients"; exit 1; }
cmp -s g5a.st g6.st && { echo "different seeds gave the same dropout masks"; exit 1; }
echo "dropout training: reproducible for a seed, different across seeds"
