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


def write_safetensors(path, tensors, metadata, order):
    header, blobs, offset = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name in order:
        raw = tensors[name].astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape),
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
