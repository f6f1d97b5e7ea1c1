"""prepare_digits: the digits split is right, reproducible and validated.

Re-derives the expected split independently (the CSV parsed with numpy, the
shuffle re-created with the Python reference RNG, nnc_rng_ref.py) and
requires the .npy files to match exactly; checks that two runs are
byte-identical; and that bad inputs (missing, not gzip, a value out of
range, a missing line) fail with exit 2, one stderr line naming the file,
and no output.

Usage: check_digits.py PREPARE_DIGITS DIGITS_CSV_GZ
"""

import gzip
import os
import subprocess
import sys
import tempfile

import numpy as np

from nnc_rng_ref import Rng, shuffle

prog, src = sys.argv[1], sys.argv[2]
OUT = ["x_train.npy", "y_train.npy", "x_test.npy", "y_test.npy", "x_train_img.npy",
       "x_test_img.npy"]

data = np.loadtxt(gzip.open(src, "rt"), delimiter=",", dtype=np.int64)
assert data.shape == (1797, 65)
perm = shuffle(Rng(42), list(range(1797)))
tr, te = perm[:1437], perm[1437:]

with tempfile.TemporaryDirectory() as tmp:
    a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
    r = subprocess.run([prog, src, a], capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    x_train, y_train = np.load(f"{a}/x_train.npy"), np.load(f"{a}/y_train.npy")
    x_test, y_test = np.load(f"{a}/x_test.npy"), np.load(f"{a}/y_test.npy")
    assert x_train.dtype == np.float32 and x_train.shape == (1437, 64)
    assert y_train.dtype == np.int32 and y_train.shape == (1437,)
    assert x_test.shape == (360, 64) and y_test.shape == (360,)
    assert np.array_equal(x_train, (data[tr, :64] / 16).astype(np.float32))
    assert np.array_equal(y_train, data[tr, 64]) and np.array_equal(y_test, data[te, 64])
    assert np.array_equal(x_test, (data[te, :64] / 16).astype(np.float32))
    img = np.load(f"{a}/x_train_img.npy")
    assert img.shape == (1437, 1, 8, 8) and np.array_equal(img.reshape(1437, 64), x_train)
    img = np.load(f"{a}/x_test_img.npy")
    assert img.shape == (360, 1, 8, 8) and np.array_equal(img.reshape(360, 64), x_test)
    assert x_train.min() == 0 and x_train.max() == 1
    assert set(y_train) == set(range(10)) and set(y_test) == set(range(10))

    subprocess.run([prog, src, b], check=True)
    for f in OUT:
        assert open(f"{a}/{f}", "rb").read() == open(f"{b}/{f}", "rb").read(), f

    # Bad inputs: exit 2, one line naming the file, nothing written.
    lines = gzip.open(src, "rt").read().splitlines()
    bad = {}
    bad["missing.csv.gz"] = None
    with open(os.path.join(tmp, "plain.csv.gz"), "w") as f:
        f.write("\n".join(lines) + "\n")
    bad["plain.csv.gz"] = "not a readable gzip file"
    for name, text, what in [
        ("range.csv.gz", lines[:5] + ["17" + lines[5][lines[5].index(","):]] + lines[6:],
         "line 6: field 1: value 17 out of range"),
        ("class.csv.gz", lines[:9] + [lines[9][:lines[9].rindex(",")] + ",10"] + lines[10:],
         "line 10: field 65: value 10 out of range"),
        ("short.csv.gz", lines[:-1], "1796 lines, expected 1797"),
        ("long.csv.gz", lines + lines[:1], "1798 lines, expected 1797"),
        ("fields.csv.gz", lines[:2] + [lines[2] + ",0"] + lines[3:], "line 3: more than 65 fields"),
        ("text.csv.gz", lines[:2] + ["x" + lines[2]] + lines[3:], "line 3: field 1 is not an integer"),
    ]:
        with gzip.open(os.path.join(tmp, name), "wt") as f:
            f.write("\n".join(text) + "\n")
        bad[name] = what
    for name, what in bad.items():
        out = os.path.join(tmp, "out_" + name)
        r = subprocess.run([prog, os.path.join(tmp, name), out], capture_output=True, text=True)
        msg = r.stderr.strip().split("\n")
        assert r.returncode == 2 and len(msg) == 1 and os.path.join(tmp, name) in msg[0], \
            (name, r.returncode, r.stderr)
        assert what is None or what in msg[0], (name, msg)
        assert not os.path.exists(out), name
    r = subprocess.run([prog], capture_output=True, text=True)
    assert r.returncode == 1 and "usage" in r.stderr
print("check_digits: ok")
