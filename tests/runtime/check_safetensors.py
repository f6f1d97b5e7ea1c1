"""safetensors interchange with an independent Python writer and reader.

The writer is the format spec done by hand: struct.pack('<Q', len), the
JSON header (with a "__metadata__" entry, tensors in another order than the
model's, data in yet another order), raw little-endian float32.  rt_probe
must load it (params w [3,4], b [3]; state s [2]).  Conversely, the file
rt_probe writes is parsed here and must hold exactly those tensors, F32,
contiguous offsets, 8-byte aligned data."""

import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

probe = sys.argv[1]

w = (np.arange(12, dtype=np.float32) * 0.5 - 1.0).reshape(3, 4)
b = np.array([1.5, -2.0, 0.25], dtype=np.float32)
s = np.array([7.0, 8.0], dtype=np.float32)


def bf16_bytes(x):
    """bfloat16 by hand: the upper half of each float32 (numpy has no bf16)"""
    return (x.astype("<f4").view("<u4") >> 16).astype("<u2").tobytes()


ENCODE = {"F32": lambda x: x.astype("<f4").tobytes(),
          "F16": lambda x: x.astype("<f2").tobytes(),
          "BF16": bf16_bytes,
          "F64": lambda x: x.astype("<f8").tobytes()}


def write_safetensors(path, tensors, metadata, order, dtypes=None):
    header, blobs, offset = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name in order:
        dt = (dtypes or {}).get(name, "F32")
        raw = ENCODE[dt](tensors[name])
        header[name] = {"dtype": dt, "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    # Header keys in yet another order than the data.
    keys = sorted(header, reverse=True)
    text = json.dumps({k: header[k] for k in keys}).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)


def read_safetensors(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", info
        lo, hi = info["data_offsets"]
        out[name] = np.frombuffer(data[base + lo:base + hi], dtype="<f4").reshape(info["shape"])
    return header, n, out


with tempfile.TemporaryDirectory() as tmp:
    tensors = {"w": w, "b": b, "s": s}
    for i, (meta, order) in enumerate([({"format": "pt", "source": "python"}, ["s", "w", "b"]),
                                       ({}, ["b", "s", "w"]),
                                       (None, ["w", "b", "s"])]):
        path = os.path.join(tmp, f"py{i}.safetensors")
        write_safetensors(path, tensors, meta, order)
        out = os.path.join(tmp, f"py{i}.npy")
        r = subprocess.run([probe, "st-load", path, out], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        got = np.load(out)
        assert np.array_equal(got, np.concatenate([w.ravel(), b, s])), got

    # PyTorch's half, bfloat16 and double tensors are converted on load:
    # w as F16 (with a subnormal half, an inf and a value that rounds), b
    # as BF16, s as F64 (0.1 rounds to the nearest float).  The expected
    # floats come from numpy's own conversions, not from nnc.
    w16 = w.copy()
    w16[0, 0], w16[0, 1], w16[0, 2] = 3e-6, -np.inf, 1.0 / 3.0
    s64 = np.array([0.1, -1e-30], dtype=np.float64)
    path = os.path.join(tmp, "mixed.safetensors")
    write_safetensors(path, {"w": w16, "b": b * 1.1, "s": s64}, {"format": "pt"}, ["b", "w", "s"],
                      {"w": "F16", "b": "BF16", "s": "F64"})
    out = os.path.join(tmp, "mixed.npy")
    r = subprocess.run([probe, "st-load", path, out], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    want_b = np.frombuffer(bf16_bytes(b * 1.1), "<u2").astype("<u4") << 16
    want = np.concatenate([w16.astype(np.float16).astype(np.float32).ravel(),
                           want_b.view("<f4"), s64.astype(np.float32)])
    got = np.load(out)
    assert np.array_equal(got, want), (got, want)
    assert got[0] != 0 and got[0] == np.float32(np.float16(3e-6)), got[0]  # a subnormal half
    assert np.isneginf(got[1]) and got[15] == np.float32(0.1), got

    # Other dtypes are refused with one line naming the tensor.
    path = os.path.join(tmp, "i64.safetensors")
    write_safetensors(path, tensors, None, ["w", "b", "s"])
    raw = open(path, "rb").read().replace(b'"dtype": "F32", "shape": [2]', b'"dtype": "I32", "shape": [2]')
    open(path, "wb").write(raw)
    r = subprocess.run([probe, "st-load", path, os.path.join(tmp, "never.npy")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "'s'" in r.stderr and "I32" in r.stderr, r.stderr

    # A Python-written file with an extra tensor is refused with one line.
    path = os.path.join(tmp, "extra.safetensors")
    write_safetensors(path, dict(tensors, extra=np.zeros(2, np.float32)), {"format": "pt"},
                      ["w", "b", "s", "extra"])
    r = subprocess.run([probe, "st-load", path, os.path.join(tmp, "never.npy")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "'extra'" in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(tmp, "never.npy"))

    # What the runtime writes, read by Python.
    path = os.path.join(tmp, "c.safetensors")
    subprocess.run([probe, "st-write", path], check=True)
    header, n, got = read_safetensors(path)
    assert (8 + n) % 8 == 0, "data section not 8-byte aligned"
    raw = open(path, "rb").read()
    assert raw[8:8 + n].decode().rstrip(" ") == raw[8:8 + n].decode().strip(), "padding"
    assert list(header) == ["w", "b", "s"], list(header)
    assert header["w"]["shape"] == [3, 4] and header["b"]["shape"] == [3]
    assert header["w"]["data_offsets"] == [0, 48] and header["b"]["data_offsets"] == [48, 60]
    assert header["s"]["data_offsets"] == [60, 68] and len(raw) == 8 + n + 68
    assert np.array_equal(got["w"], w) and np.array_equal(got["b"], b)
    assert np.array_equal(got["s"], s)
print("check_safetensors: ok")
