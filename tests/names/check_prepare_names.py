"""prepare_names: the names data is right, reproducible and validated.

Re-derives the expected sequences and split independently (the names read
in Python, the shuffle re-created with the reference RNG,
tests/runtime/nnc_rng_ref.py) and requires the .npy files to match exactly;
checks the layout's properties directly (start token, the ids <-> labels
shift, one end token, -100 padding, the 90/10 partition), that two runs are
byte-identical, that CRLF lines and long names are handled, and that bad
inputs fail with exit 2, one stderr line naming the file, and no output.

Usage: check_prepare_names.py PREPARE_NAMES NAMES_TXT
"""

import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "runtime"))
from nnc_rng_ref import Rng, shuffle  # noqa: E402

prog, src = sys.argv[1], sys.argv[2]
CTX = 16
OUT = ["ids_train.npy", "y_train.npy", "ids_test.npy", "y_test.npy", "vocab.txt"]


def run(path, out):
    return subprocess.run([prog, path, out], capture_output=True, text=True)


def expected(names):
    """(vocab, ids, labels) for names in file order, by the documented rule."""
    vocab = ["."] + sorted(set("".join(names)))
    tok = {c: i for i, c in enumerate(vocab)}
    ids = np.zeros((len(names), CTX), np.int32)
    y = np.full((len(names), CTX), -100, np.int32)
    for r, name in enumerate(names):
        seq = [0] + [tok[c] for c in name] + [0]      # start, characters, end
        seq = seq[:CTX + 1]
        ids[r, :len(seq) - 1] = seq[:-1]
        y[r, :len(seq) - 1] = seq[1:]
    return vocab, ids, y


def load(d):
    a = {f: np.load(os.path.join(d, f)) for f in OUT if f.endswith(".npy")}
    vocab = open(os.path.join(d, "vocab.txt")).read().split("\n")
    assert vocab[-1] == "", "vocab.txt ends with a newline"
    return a, vocab[:-1]


def check_split(d, names):
    """The output in d is the documented transformation of names."""
    a, vocab = load(d)
    n = len(names)
    test = n // 10
    train = n - test
    v, ids, y = expected(names)
    perm = shuffle(Rng(42), list(range(n)))
    assert vocab == v, (vocab, v)
    for f in OUT[:4]:
        assert a[f].dtype == np.int32, f
    assert a["ids_train.npy"].shape == (train, CTX) and a["y_train.npy"].shape == (train, CTX)
    assert a["ids_test.npy"].shape == (test, CTX) and a["y_test.npy"].shape == (test, CTX)
    assert np.array_equal(a["ids_train.npy"], ids[perm[:train]])
    assert np.array_equal(a["y_train.npy"], y[perm[:train]])
    assert np.array_equal(a["ids_test.npy"], ids[perm[train:]])
    assert np.array_equal(a["y_test.npy"], y[perm[train:]])
    return a, vocab


with tempfile.TemporaryDirectory() as tmp:
    names = open(src).read().split("\n")
    assert names[-1] == ""
    names = names[:-1]
    assert len(names) == 8422 and max(map(len, names)) == 15

    a_dir, b_dir = os.path.join(tmp, "a"), os.path.join(tmp, "b")
    r = run(src, a_dir)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert "8422 names" in r.stdout and "0 cut" in r.stdout and "vocabulary 28" in r.stdout, r.stdout
    a, vocab = check_split(a_dir, names)
    assert vocab == [".", "-"] + [chr(c) for c in range(ord("a"), ord("z") + 1)]
    assert a["ids_train.npy"].shape == (7580, CTX) and a["ids_test.npy"].shape == (842, CTX)

    # The layout's properties, stated directly.
    for split in ("train", "test"):
        ids, y = a[f"ids_{split}.npy"], a[f"y_{split}.npy"]
        assert (ids[:, 0] == 0).all(), "every sequence starts with the start token"
        assert ids.min() >= 0 and ids.max() < len(vocab)
        # the input is the labels shifted right by one (padding ids are 0)
        assert np.array_equal(ids[:, 1:], np.where(y[:, :-1] < 0, 0, y[:, :-1]))
        kept = y != -100
        lengths = kept.sum(axis=1)                      # characters + the end token
        assert (lengths >= 2).all()
        # labels: characters, one end token, then only -100
        assert np.array_equal(kept, np.arange(CTX)[None, :] < lengths[:, None])
        assert np.array_equal(np.argmax(y == 0, axis=1), lengths - 1)
        assert ((y == 0).sum(axis=1) == 1).all()
        assert (y[kept] >= 0).all() and (y[kept] < len(vocab)).all()
    # the two splits are a partition of the names
    decoded = []
    for split in ("train", "test"):
        ids, y = a[f"ids_{split}.npy"], a[f"y_{split}.npy"]
        for row in y:
            decoded.append("".join(vocab[t] for t in row if t > 0))
    assert sorted(decoded) == sorted(names)

    # Deterministic: a second run writes the same bytes.
    r = run(src, b_dir)
    assert r.returncode == 0, r.stderr
    for f in OUT:
        assert open(os.path.join(a_dir, f), "rb").read() == \
            open(os.path.join(b_dir, f), "rb").read(), f

    # A small file: CRLF lines, its own vocabulary, a name longer than the
    # context (cut: 15 characters in, 16 labels, no end token), no final
    # newline.
    small = ["zoe", "al-bert", "x" * 20, "Bo", "amy", "abcdefghijklmno", "q", "jo", "ann", "eve"]
    path = os.path.join(tmp, "small.txt")
    with open(path, "wb") as f:
        f.write("\r\n".join(small).encode())
    r = run(path, os.path.join(tmp, "small"))
    assert r.returncode == 0, r.stderr
    assert "10 names (longest 20 characters, 1 cut to 15), vocabulary " in r.stdout, r.stdout
    assert "9 train, 1 test" in r.stdout, r.stdout
    a, vocab = check_split(os.path.join(tmp, "small"), small)
    assert vocab[:3] == [".", "-", "B"]
    x = vocab.index("x")
    both = {tuple(row): lab for row, lab in zip(
        np.concatenate([a["ids_train.npy"], a["ids_test.npy"]]).tolist(),
        np.concatenate([a["y_train.npy"], a["y_test.npy"]]).tolist())}
    assert both[tuple([0] + [x] * 15)] == [x] * 16

    # Bad inputs: exit 2, one line naming the file, nothing written.
    def text(*parts):
        return b"".join(p.encode() + b"\n" for p in parts)

    bad = {"missing.txt": (None, "cannot open")}
    for name, data, what in [
        ("empty.txt", b"", "0 names, need at least 10"),
        ("nine.txt", text(*small[:9]), "9 names, need at least 10"),
        ("blank.txt", text(*small[:4], "", *small[4:]), "line 5: empty name"),
        ("dot.txt", text("ann", "bo.b", *small), "line 2: column 3: byte 0x2e"),
        ("space.txt", text("mary ann", *small), "line 1: column 5: byte 0x20"),
        ("utf8.txt", text("ann", "zo\u00eb", *small), "line 2: column 3: byte 0xc3"),
        ("nul.txt", text("ann", "b\x00b", *small), "line 2: column 2: byte 0x00"),
    ]:
        with open(os.path.join(tmp, name), "wb") as f:
            f.write(data)
        bad[name] = (data, what)
    for name, (_, what) in bad.items():
        out = os.path.join(tmp, "out_" + name)
        r = run(os.path.join(tmp, name), out)
        msg = r.stderr.strip().split("\n")
        assert r.returncode == 2 and len(msg) == 1 and os.path.join(tmp, name) in msg[0], \
            (name, r.returncode, r.stderr)
        assert what in msg[0], (name, msg)
        assert not os.path.exists(out), name
    # a directory is not a names file
    r = run(tmp, os.path.join(tmp, "out_dir"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and tmp in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(tmp, "out_dir"))
    r = subprocess.run([prog], capture_output=True, text=True)
    assert r.returncode == 1 and "usage" in r.stderr
print("check_prepare_names: ok")
