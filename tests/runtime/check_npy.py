"""The runtime's .npy reader and writer against numpy itself.

Arrays saved by np.save (and by np.lib.format.write_array with format
versions 2.0 and 3.0) must load with the right dtype, shape and values;
what the runtime writes back must load in numpy and be byte-identical to
np.save's file for the same array; files numpy can write but the runtime
does not accept (float64, Fortran order, big-endian, bool) and damaged
files must fail with exit 2 and one stderr line naming the file."""

import io
import os
import subprocess
import sys
import tempfile

import numpy as np

probe = sys.argv[1]
rs = np.random.RandomState(1)


def copy(src, dst):
    return subprocess.run([probe, "npy-copy", src, dst], capture_output=True, text=True)


with tempfile.TemporaryDirectory() as tmp:
    def p(name):
        return os.path.join(tmp, name)

    arrays = {
        "f2": rs.randn(3, 4).astype("<f4"),
        "f4d": rs.randn(2, 3, 4, 5).astype("<f4"),
        "f0": np.array(3.5, dtype="<f4"),
        "empty": np.zeros((0, 3), dtype="<f4"),
        "i1": rs.randint(-2**31, 2**31 - 1, size=10).astype("<i4"),
        "ibig": rs.randint(0, 10, size=(1000, 7)).astype("<i4"),
    }
    for name, a in arrays.items():
        for version in (None, (1, 0), (2, 0), (3, 0)):
            src = p(f"{name}_{version}.npy")
            if version is None:
                np.save(src, a)
            else:
                with open(src, "wb") as f:
                    np.lib.format.write_array(f, a, version=version)
            r = copy(src, p("out.npy"))
            assert r.returncode == 0, (name, version, r.stderr)
            kind = "f32" if a.dtype == np.float32 else "i32"
            assert r.stdout.split() == [kind, str(a.ndim)] + [str(d) for d in a.shape], r.stdout
            back = np.load(p("out.npy"))
            assert back.dtype == a.dtype and back.shape == a.shape, (name, back.dtype, back.shape)
            assert np.array_equal(back, a), name
            buf = io.BytesIO()
            np.save(buf, a)
            with open(p("out.npy"), "rb") as f:
                assert f.read() == buf.getvalue(), f"{name}: not byte-identical to np.save"

    def reject(name, what):
        r = copy(p(name), p("never.npy"))
        lines = r.stderr.strip().split("\n")
        assert r.returncode == 2, (name, r.returncode, r.stderr)
        assert len(lines) == 1 and p(name) in lines[0] and what in lines[0], (name, r.stderr)
        assert not os.path.exists(p("never.npy"))

    np.save(p("f8.npy"), rs.randn(4))
    reject("f8.npy", "'<f8'")
    np.save(p("fortran.npy"), np.asfortranarray(rs.randn(3, 4).astype("<f4")))
    reject("fortran.npy", "Fortran")
    np.save(p("big_endian.npy"), rs.randn(4).astype(">f4"))
    reject("big_endian.npy", "'>f4'")
    np.save(p("bool.npy"), np.array([True, False]))
    reject("bool.npy", "'|b1'")
    np.save(p("i8.npy"), np.arange(5, dtype="<i8"))
    reject("i8.npy", "'<i8'")
    np.save(p("good.npy"), rs.randn(10, 3).astype("<f4"))
    data = open(p("good.npy"), "rb").read()
    open(p("trunc.npy"), "wb").write(data[:-7])
    reject("trunc.npy", "truncated data (expected 120 bytes, got 113)")
    open(p("magic.npy"), "wb").write(b"\x93NUMPX" + data[6:])
    reject("magic.npy", "bad magic")
    open(p("header.npy"), "wb").write(data[:40])
    reject("header.npy", "truncated .npy header")
print("check_npy: ok")
