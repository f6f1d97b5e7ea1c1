"""Drivers of models built with `nnc --check-numerics` (docs/generated-c.md,
"Checking numerics").

fwd_div.nn divides by zero in its forward pass: train, eval, predict and
grad exit 3 with one stderr line naming the `.nn` line and column of the
`/`, the op (div), the tensor and its shape, and write nothing.
bwd_sqrt.nn has a finite forward pass (eval and predict succeed) whose
gradient is infinite (sqrt at 0): train and grad exit 3 naming the
backward pass and the line of `sqrt`.  The message is the same on 1 and 2
threads.  The digits model built with the checks trains to the same bits
as the one built without them, and stops when SGD at lr 1e30 diverges.  The expected lines and columns are read
from the .nn files here, not from the generated code.

Usage: check_numerics.py FWD_DIV BWD_SQRT DIGITS DIGITS_CHECKED DATA_DIR NN_DIR
"""

import json
import os
import re
import struct
import subprocess
import sys
import tempfile

import numpy as np

FWD, BWD, DIGITS, DIGITS_CHECKED, DATA, NN = sys.argv[1:7]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(prog, *args):
    return subprocess.run([prog] + [str(a) for a in args], capture_output=True, text=True)


def where(nn, needle):
    """(line, column) of the first `needle` in a non-comment line of nn"""
    for ln, text in enumerate(open(os.path.join(NN, nn)), 1):
        if not text.lstrip().startswith("//") and needle in text:
            return ln, text.index(needle) + 1
    raise SystemExit(f"no {needle!r} in {nn}")


def write_st(path, tensors):
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        b = np.ascontiguousarray(a, "<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def stopped(r, prog, nn, needle, rest, what):
    """r exited 3 with one line: '<prog>: <path>/<nn>:<line>:<col>: <rest>'"""
    line, col = where(nn, needle)
    lines = r.stderr.splitlines()
    pat = re.escape(os.path.basename(prog)) + r": (.*)" + re.escape(f"{nn}:{line}:{col}: ") + "(.*)$"
    m = re.match(pat, lines[0]) if len(lines) == 1 else None
    check(r.returncode == 3 and m is not None and re.fullmatch(rest, m.group(2)) is not None,
          f"{what}: exit {r.returncode}, stderr {r.stderr!r}, expected {nn}:{line}:{col}: {rest}")


rng = np.random.default_rng(3)
with tempfile.TemporaryDirectory() as tmp:
    P = lambda f: os.path.join(tmp, f)
    n = 300
    x = (rng.random((n, 4)) + 0.25).astype(np.float32)  # positive: x / (x - x) = +inf
    y = rng.standard_normal((n, 2)).astype(np.float32)
    np.save(P("x.npy"), x)
    np.save(P("y.npy"), y)
    w = {"fc1.weight": rng.standard_normal((8, 4)), "fc1.bias": np.zeros(8),
         "fc2.weight": rng.standard_normal((2, 8)), "fc2.bias": np.zeros(2)}
    write_st(P("w.st"), w)
    before = sorted(os.listdir(tmp))
    data = ["--inputs", P("x.npy"), "--labels", P("y.npy")]

    # ---- the forward pass
    fwd_msg = r"non-finite value \(inf\) at \[0\]\[0\] of z \(f32\[%d,4\]\) from div, in the forward pass"
    r = run(FWD, "train", *data, "--save", P("t.st"), "--batch", 32, "--quiet")
    stopped(r, FWD, "fwd_div.nn", "/ (x - x)", fwd_msg % 32, "fwd_div train")
    r = run(FWD, "eval", *data, "--weights", P("w.st"))
    stopped(r, FWD, "fwd_div.nn", "/ (x - x)", fwd_msg % n, "fwd_div eval")
    check(r.stdout == "", "fwd_div eval prints no results")
    r = run(FWD, "predict", "--inputs", P("x.npy"), "--weights", P("w.st"), "--output", P("p.npy"))
    stopped(r, FWD, "fwd_div.nn", "/ (x - x)", fwd_msg % n, "fwd_div predict")
    r = run(FWD, "grad", *data, "--weights", P("w.st"), "--output", P("g.st"))
    stopped(r, FWD, "fwd_div.nn", "/ (x - x)", fwd_msg % n, "fwd_div grad")
    msgs = [run(FWD, "train", *data, "--save", P("t.st"), "--batch", n, "--quiet", "--threads", t).stderr
            for t in (1, 2)]
    check(msgs[0] == msgs[1] and msgs[0], f"fwd_div: the same message on 1 and 2 threads: {msgs}")
    r = run(FWD, "info")
    check(r.returncode == 0 and "check-numerics yes\n" in r.stdout, "info says the checks are built in")

    # ---- the backward pass only
    bwd_msg = r"non-finite value \((-?inf|nan)\) at \[\d+\]\[\d+\] of d_\w+ \(f32\[%d,8\]\) from \w+, in the backward pass"
    r = run(BWD, "train", *data, "--save", P("t.st"), "--batch", 32, "--quiet")
    stopped(r, BWD, "bwd_sqrt.nn", "sqrt(", bwd_msg % 32, "bwd_sqrt train")
    r = run(BWD, "grad", *data, "--weights", P("w.st"), "--output", P("g.st"))
    stopped(r, BWD, "bwd_sqrt.nn", "sqrt(", bwd_msg % n, "bwd_sqrt grad")
    r = run(BWD, "eval", *data, "--weights", P("w.st"))
    check(r.returncode == 0 and r.stdout.startswith("loss="), f"bwd_sqrt eval runs through: {r.stderr!r}")
    msgs = [run(BWD, "grad", *data, "--weights", P("w.st"), "--output", P("g.st"), "--threads", t).stderr
            for t in (1, 2)]
    check(msgs[0] == msgs[1] and msgs[0], f"bwd_sqrt: the same message on 1 and 2 threads: {msgs}")
    check(sorted(os.listdir(tmp)) == before, f"nothing written: {sorted(os.listdir(tmp))}")

    # ---- a healthy model: the same bits with and without the checks
    common = ["train", "--inputs", os.path.join(DATA, "x_train.npy"), "--labels", os.path.join(DATA, "y_train.npy"),
              "--epochs", 2, "--batch", 64, "--seed", 4, "--quiet", "--val-split", 0.1]
    ra = run(DIGITS, *common, "--save", P("a.st"))
    rb = run(DIGITS_CHECKED, *common, "--save", P("b.st"))
    check(ra.returncode == 0 and rb.returncode == 0, f"digits trains: {ra.stderr!r} {rb.stderr!r}")
    check(ra.stdout == rb.stdout and ra.stdout, f"the same results: {ra.stdout!r} {rb.stdout!r}")
    check(os.path.exists(P("a.st")) and open(P("a.st"), "rb").read() == open(P("b.st"), "rb").read(),
          "the checked build trains to the same bits")
    r = run(DIGITS, "info")
    check(r.returncode == 0 and "check-numerics" not in r.stdout, "an unchecked build says nothing of checks")
    # a run that diverges (SGD at lr 1e30) stops at its first overflow
    r = run(DIGITS_CHECKED, *common, "--save", P("c.st"), "--optimizer", "sgd", "--lr", "1e30")
    lines = r.stderr.splitlines()
    check(r.returncode == 3 and len(lines) == 1 and re.search(
        r"digits\.nn:\d+:\d+: non-finite value \((-?inf|nan)\) at (\[\d+\])+ of \w+ \(f32\[[\d,]+\]\) from \w+, in the "
        r"(forward|backward|eval) pass$", lines[0]) is not None and not os.path.exists(P("c.st")),
          f"a diverging run: exit {r.returncode}, {r.stderr!r}")

print("FAILED" if failures else "ok")
sys.exit(1 if failures else 0)
