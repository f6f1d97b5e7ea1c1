"""Helpers of run.sh (tests/keywords), with Python's standard library only.

  check.py data DIR        writes DIR/int.npy, DIR/exp.npy, DIR/case.npy:
                           inputs and labels for tests/parity/c_keywords.nn
  check.py names FILE      checks that the safetensors FILE holds exactly
                           the model's params and state, named as written in
                           the .nn (`default.weight`, `short.case`, `_X.bias`),
                           with their shapes; the optimizer's `nnc:train/`
                           tensors are skipped
  check.py eval OUT        checks that the driver's eval output OUT prints
                           the loss and the metric `case` as written
"""
import json
import random
import struct
import sys

# c_keywords.nn's tensors, written out by hand from the model: the field
# names are those of the source, never the C member names
EXPECTED = {
    "default.weight": [6, 5], "default.bias": [6],
    "default_.weight": [6, 5], "default_.bias": [6],
    "short.case": [4, 6], "short.errno": [4], "short.static": [4],
    "errno.weight": [3, 4], "errno.bias": [3],
    "main.0.weight": [4, 4], "main.0.bias": [4],
    "main.1.weight": [4, 4], "main.1.bias": [4],
    "_Bool.weight": [3], "_Bool.bias": [3],
    "__x.weight": [3, 3], "__x.bias": [3],
    "_X.weight": [3, 3], "_X.bias": [3],
    "m.weight": [3, 3], "m.bias": [3],
    "n.weight": [3, 3], "n.bias": [3],
    "out.weight": [3, 3], "out.bias": [3],
    "y0.weight": [3, 3], "y0.bias": [3],
}


def npy(path, descr, shape, values):
    head = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % d for d in shape))
    head += " " * (-(len(head) + 11) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode())
        f.write(struct.pack("<%d%s" % (len(values), descr[-2]), *values))


def data(d):
    rng = random.Random(7)
    n = 64
    npy(d + "/int.npy", "<f4", [n, 5], [rng.gauss(0, 1) for _ in range(n * 5)])
    npy(d + "/exp.npy", "<f4", [n, 3], [rng.gauss(0, 1) for _ in range(n * 3)])
    npy(d + "/case.npy", "<i4", [n], [rng.randrange(3) for _ in range(n)])


def names(path):
    with open(path, "rb") as f:
        (hlen,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(hlen))
    got = {k: v["shape"] for k, v in header.items()
           if k != "__metadata__" and not k.startswith("nnc:train/")}
    if got != EXPECTED:
        missing = sorted(set(EXPECTED) - set(got))
        extra = sorted(set(got) - set(EXPECTED))
        shapes = sorted(k for k in set(got) & set(EXPECTED) if got[k] != EXPECTED[k])
        sys.exit("FAIL %s: missing %s, unexpected %s, shapes differ %s" % (path, missing, extra, shapes))
    print("%s: %d tensors named as written" % (path, len(got)))


def eval_out(path):
    lines = open(path).read().split()
    keys = [ln.split("=")[0] for ln in lines if "=" in ln]
    if keys != ["loss", "case"]:
        sys.exit("FAIL %s: eval printed %s, expected loss= and case=" % (path, lines))
    print("%s: %s" % (path, " ".join(lines)))


if __name__ == "__main__":
    {"data": data, "names": names, "eval": eval_out}[sys.argv[1]](sys.argv[2])
