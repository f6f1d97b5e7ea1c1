#!/usr/bin/env bash
# Trains frozen.nn with the driver (adamw, whose default weight decay is
# 0.01) and checks that enc.* is bit-identical afterwards and head.* moved.
set -euo pipefail
nnc=$1 rtlib=$2 rtinc=$3 src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$nnc" "$src/frozen.nn" -o gen --emit=all
cc -std=c11 -O2 -Igen -I"$rtinc" gen/partly.c gen/partly_main.c "$rtlib" -lopenblas -lm -fopenmp -o partly
/usr/bin/python3 -c "
import numpy as np
r = np.random.default_rng(0)
np.save('x.npy', r.standard_normal((40, 4)).astype('<f4'))
np.save('y.npy', r.integers(0, 3, 40).astype('<i4'))"
./partly train --inputs x.npy --labels y.npy --epochs 0 --save before.safetensors --quiet >/dev/null
./partly train --inputs x.npy --labels y.npy --epochs 3 --optimizer adamw --lr 0.01 \
    --weights before.safetensors --save after.safetensors --quiet >/dev/null
/usr/bin/python3 - <<'PY'
import json, struct, sys
def load(p):
    b = open(p, 'rb').read()
    n = struct.unpack('<Q', b[:8])[0]
    h = json.loads(b[8:8 + n])
    return {k: b[8 + n + v['data_offsets'][0]: 8 + n + v['data_offsets'][1]] for k, v in h.items() if k != '__metadata__'}
a, b = load('before.safetensors'), load('after.safetensors')
ok = True
for k in sorted(a):
    same = a[k] == b[k]
    want = k.startswith('enc.')
    print(f'{k}: {"unchanged" if same else "changed"} ({"frozen" if want else "trainable"})')
    ok &= same == want
sys.exit(0 if ok else 1)
PY
