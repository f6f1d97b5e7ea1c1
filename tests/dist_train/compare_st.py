"""Compares two nnc checkpoints tensor by tensor.

    compare_st.py A B TOL     every f32 tensor of B within TOL of A, relative
                              to the tensor's largest magnitude in A; every
                              i64 tensor (a counter) equal; the same names

Prints the worst relative difference; exits 1 on a miss.  The reference A
comes from another run (one process), never from the run under test.
"""
import json
import struct
import sys

import numpy as np


def read(path):
    with open(path, "rb") as f:
        blob = f.read()
    (hlen,) = struct.unpack("<Q", blob[:8])
    head = json.loads(blob[8:8 + hlen])
    data = blob[8 + hlen:]
    out = {}
    for name, t in head.items():
        if name == "__metadata__":
            continue
        dt = {"F32": "<f4", "I64": "<i8"}[t["dtype"]]
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(data[a:b], dtype=dt).reshape(t["shape"])
    return out


def main():
    a, b, tol = read(sys.argv[1]), read(sys.argv[2]), float(sys.argv[3])
    if sorted(a) != sorted(b):
        print(f"different tensors: {sorted(set(a) ^ set(b))}")
        return 1
    worst, where, bad = 0.0, "", []
    for name in sorted(a):
        x, y = a[name], b[name]
        if x.dtype.kind == "i":
            if not np.array_equal(x, y):
                bad.append(f"{name}: {x.tolist()} vs {y.tolist()}")
            continue
        scale = max(float(np.max(np.abs(x))), 1e-30)
        rel = float(np.max(np.abs(x.astype(np.float64) - y))) / scale
        if rel > worst:
            worst, where = rel, name
        if not rel <= tol:
            bad.append(f"{name}: relative difference {rel:.3g} > {tol:g}")
    print(f"{len(a)} tensors, worst relative difference {worst:.3g} ({where or '-'})")
    for line in bad:
        print("  " + line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
