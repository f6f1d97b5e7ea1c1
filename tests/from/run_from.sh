#!/usr/bin/env bash
# tests/from: compile from.nn, write enc.safetensors with known values
# (and a mismatched one), and check init with both.
set -euo pipefail
nnc=$1 rtlib=$2 rtinc=$3 src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$nnc" "$src/from.nn" -o gen
cc -std=c11 -Wall -Wextra -Wpedantic -Werror -Igen -I"$rtinc" "$src/check_from.c" gen/from_file.c "$rtlib" -lopenblas -lm -fopenmp -o check
/usr/bin/python3 - <<'PY'
import json, struct
def save(path, tensors):
    header, blob = {}, b""
    for name, (shape, vals) in tensors.items():
        data = struct.pack("<%df" % len(vals), *vals)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [len(blob), len(blob) + len(data)]}
        blob += data
    h = json.dumps(header).encode()
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + blob)
save("enc.safetensors", {"weight": ([3, 4], [i * 0.5 for i in range(12)]), "bias": ([3], [0.0, -1.0, -2.0])})
save("bad.safetensors", {"weight": ([4, 3], [0.0] * 12), "bias": ([3], [0.0] * 3)})
PY
./check good
mv enc.safetensors good.safetensors && mv bad.safetensors enc.safetensors
./check bad
rm enc.safetensors
./check missing
