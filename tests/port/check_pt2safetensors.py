#!/usr/bin/python3
"""check_pt2safetensors.py -- scripts/pt2safetensors.py, checked from outside.

PyTorch writes .pt files holding F32, F16, BF16, F64, I64 (and I32, U8,
BOOL) tensors; the script converts them; the results are read back with
tests/parity's safetensors reader (numpy, written apart from the script)
and compared bit for bit with the tensors PyTorch saved.  Also checked:
the file's layout (header padded to 8, data without holes, every tensor
aligned), --dtype f32, --strip-prefix/--rename/--drop and their order,
checkpoint dicts and --key, --list, --trust, and that every error is one
line on stderr with exit status 2 and no output file.  Last, a model
compiled by nnc (tests/port/tiny.nn) loads a converted DataParallel
state_dict of mixed dtypes and predicts what PyTorch predicts.

    check_pt2safetensors.py --nnc NNC --runtime-lib LIB --runtime-include DIR [--include DIR]
"""
import argparse
import collections
import contextlib
import importlib.util
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(SRC, "tests", "parity"))
import parity  # noqa: E402  (its reader, compare, driver build)
from portlib import check, failures, parse_args  # noqa: E402  (command line, failure list)
import torch  # noqa: E402

SCRIPT = os.path.join(SRC, "scripts", "pt2safetensors.py")
NP_OF = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8", "I32": "<i4", "U8": "u1",
         "BOOL": "?", "BF16": "<f4"}     # BF16: parity.st_read widens it to float32



def script():
    """The script as a module, so that most runs skip a second import of
    torch (1.5 s each); run(argv) is what its command line does."""
    spec = importlib.util.spec_from_file_location("pt2safetensors", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


PT2ST = script()


def convert(tmp, argv, expect=0, process=False):
    """Runs the script (in this process, or as a program with process=True);
    checks its exit status, and on an error that the message is one line
    naming the script.  Returns (stdout, stderr)."""
    if process:
        p = subprocess.run([sys.executable, SCRIPT] + argv, cwd=tmp, capture_output=True, text=True,
                           timeout=120)
        rc, out, err = p.returncode, p.stdout, p.stderr
    else:
        out, err, cwd = io.StringIO(), io.StringIO(), os.getcwd()
        os.chdir(tmp)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    rc = PT2ST.run(argv)
                except SystemExit as e:          # argparse's usage errors and --help
                    rc = e.code
        finally:
            os.chdir(cwd)
        out, err = out.getvalue(), err.getvalue()
    what = "pt2safetensors.py " + " ".join(argv)
    check(rc == expect, "%s: exit %s, expected %d; stderr: %s" % (what, rc, expect, err.strip()))
    if expect != 0:
        lines = err.splitlines()
        check(len(lines) == 1 and lines[0].startswith("pt2safetensors.py: error: "),
              "%s: the error should be one line 'pt2safetensors.py: error: ...', got %r" % (what, err))
    return out, err


def header(path):
    """The raw header, and the data section's size, for the layout checks."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    return n, json.loads(data[8:8 + n]), len(data) - 8 - n


def expected(t):
    """What the file must hold for a tensor: its dtype and numpy values."""
    if t.dtype == torch.bfloat16:
        return "BF16", t.float().numpy()
    d = {torch.float32: "F32", torch.float16: "F16", torch.float64: "F64", torch.int64: "I64",
         torch.int32: "I32", torch.uint8: "U8", torch.bool: "BOOL"}[t.dtype]
    return d, t.contiguous().numpy()


def check_file(path, want, what):
    """path holds exactly the tensors of want ({name: tensor}), in its order,
    with their dtypes, shapes and bits, laid out as safetensors requires."""
    if not check(os.path.exists(path), "%s: %s was not written" % (what, path)):
        return
    n, hdr, size = header(path)
    check(n % 8 == 0, "%s: header length %d is not a multiple of 8" % (what, n))
    check(hdr.get("__metadata__") == {"format": "pt"}, "%s: __metadata__ %r" % (what, hdr.get("__metadata__")))
    names = [k for k in hdr if k != "__metadata__"]
    check(names == list(want), "%s: names %s, expected %s" % (what, names, list(want)))
    spans = sorted(tuple(hdr[k]["data_offsets"]) for k in names)
    pos = 0
    for b, e in spans:
        check(b == pos, "%s: the data section has a hole or overlap at byte %d" % (what, b))
        pos = e
    check(pos == size, "%s: the data section is %d bytes, the tensors %d" % (what, size, pos))
    try:
        got = parity.st_read(path)
    except parity.ParityError as e:
        check(False, "%s: %s" % (what, e))
        return
    for k, t in want.items():
        if k not in hdr:
            continue
        dt, a = expected(t)
        info = hdr[k]
        check(info["dtype"] == dt, "%s: %s has dtype %s, expected %s" % (what, k, info["dtype"], dt))
        check(info["shape"] == list(t.shape), "%s: %s has shape %s, expected %s"
              % (what, k, info["shape"], list(t.shape)))
        check(info["data_offsets"][0] % t.element_size() == 0,
              "%s: %s starts at byte %d of the data, not aligned to its %d-byte elements"
              % (what, k, info["data_offsets"][0], t.element_size()))
        g = got[k]
        ok = g.shape == a.shape and g.dtype == np.dtype(NP_OF[dt]) and g.tobytes() == a.astype(g.dtype).tobytes()
        check(ok, "%s: %s: values differ from PyTorch's (got %s %s %s, expected %s %s)"
              % (what, k, g.dtype, g.shape, g.reshape(-1)[:4], a.dtype, a.reshape(-1)[:4]))


def mixed():
    """A state_dict of every dtype, with a scalar, an empty tensor, a
    non-contiguous view, special values and PyTorch-like names."""
    g = torch.Generator().manual_seed(18)
    w = torch.randn(4, 3, generator=g)
    special = torch.tensor([0.0, -0.0, float("inf"), -float("inf"), 1e-40, 65504.0, 3.1e38])
    return collections.OrderedDict([
        ("conv.weight", torch.randn(2, 3, 3, 3, generator=g)),                          # F32
        ("conv.bias", torch.randn(2, generator=g).half()),                              # F16
        ("bn.weight", (torch.randn(5, generator=g) * 100).to(torch.bfloat16)),          # BF16
        ("bn.bias", torch.randn(5, generator=g, dtype=torch.float64)),                  # F64
        ("bn.num_batches_tracked", torch.tensor(1234567890123, dtype=torch.int64)),     # I64 scalar
        ("fc.weight", w.t()),                                                           # a transposed view
        ("ids", torch.tensor([3, -1, 2**40], dtype=torch.int64)),
        ("i32", torch.tensor([-7, 9], dtype=torch.int32)),
        ("u8", torch.tensor([0, 255, 7], dtype=torch.uint8)),
        ("mask", torch.tensor([True, False, True])),
        ("scalar", torch.tensor(2.5)),
        ("empty", torch.zeros(0, 4)),
        ("special16", special.half()),
        ("special32", special),
        ("special_bf16", special.to(torch.bfloat16)),
    ])


def check_round_trip(tmp):
    sd = mixed()
    torch.save(sd, os.path.join(tmp, "mixed.pt"))
    convert(tmp, ["mixed.pt", "mixed.safetensors"], process=True)
    check_file(os.path.join(tmp, "mixed.safetensors"), sd, "keep")

    # --dtype f32: floating tensors as PyTorch's .float(), integers unchanged
    convert(tmp, ["--dtype=f32", "mixed.pt", "f32.safetensors"])
    want = collections.OrderedDict((k, v.float() if v.is_floating_point() else v) for k, v in sd.items())
    check_file(os.path.join(tmp, "f32.safetensors"), want, "--dtype f32")

    # the legacy (pre-zip) format of torch.save
    torch.save(sd, os.path.join(tmp, "legacy.pt"), _use_new_zipfile_serialization=False)
    convert(tmp, ["legacy.pt", "legacy.safetensors"])
    check_file(os.path.join(tmp, "legacy.safetensors"), sd, "legacy format")

    # --list: one line per tensor, as written
    out, _ = convert(tmp, ["--list", "mixed.pt"], process=True)
    rows = [line.split(None, 2) for line in out.splitlines()]
    want_rows = [[k, expected(v)[0], str(list(v.shape))] for k, v in sd.items()]
    check(rows == want_rows, "--list printed %r, expected %r" % (rows, want_rows))


def check_names(tmp):
    g = torch.Generator().manual_seed(3)
    t = {k: torch.randn(2, generator=g) for k in ("a", "b", "c", "d", "e")}
    sd = collections.OrderedDict([
        ("module.features.0.weight", t["a"]),
        ("module.features.1.running_mean", t["b"]),
        ("module.features.1.num_batches_tracked", torch.tensor(5)),
        ("module.features10.weight", t["c"]),
        ("module.classifier.weight", t["d"]),
        ("head.module.bias", t["e"]),
    ])
    torch.save(sd, os.path.join(tmp, "dp.pt"))
    # strip, then rename a whole component (features10 keeps its name),
    # then a rename that sees the first one's result; drop by the new names
    convert(tmp, ["--strip-prefix", "module.", "--rename", "features.=backbone.", "--rename=backbone.0.=stem.",
                  "--drop", "num_batches_tracked$", "--drop", "^classifier\\.", "dp.pt", "dp.safetensors"])
    want = collections.OrderedDict([
        ("stem.weight", t["a"]),
        ("backbone.1.running_mean", t["b"]),
        ("features10.weight", t["c"]),
        ("head.module.bias", t["e"]),
    ])
    check_file(os.path.join(tmp, "dp.safetensors"), want, "renames")
    # renames apply in the order given: renaming first, then stripping
    # `module.` leaves names that only the later rule produced alone
    out, _ = convert(tmp, ["--rename", "head.=module.head.", "--strip-prefix", "module.", "--list", "dp.pt"])
    names = [line.split()[0] for line in out.splitlines()]
    check(names == ["features.0.weight", "features.1.running_mean", "features.1.num_batches_tracked",
                    "features10.weight", "classifier.weight", "head.module.bias"],
          "renames in order: got %s" % names)


def check_containers(tmp):
    g = torch.Generator().manual_seed(4)
    sd = collections.OrderedDict([("fc.weight", torch.randn(3, 2, generator=g)),
                                  ("fc.bias", torch.randn(3, generator=g))])
    for i, (obj, extra) in enumerate([
            ({"state_dict": sd, "epoch": 3}, []),
            ({"epoch": 3, "model_state_dict": sd, "optimizer_state_dict": {"state": {}}}, []),
            ({"model": sd, "step": 100}, []),
            ({"ema": sd, "model": {"fc.weight": torch.zeros(1)}, "n": 1}, ["--key", "ema"]),
            ({"model": sd, "args": argparse.Namespace(lr=1)}, ["--trust"]),
            (torch.nn.ModuleDict({"fc": torch.nn.Linear(2, 3)}), ["--trust"])]):
        f = "ckpt%d.pt" % i
        if isinstance(obj, torch.nn.Module):
            with torch.no_grad():
                obj["fc"].weight.copy_(sd["fc.weight"])
                obj["fc"].bias.copy_(sd["fc.bias"])
        torch.save(obj, os.path.join(tmp, f))
        convert(tmp, extra + [f, f + ".safetensors"])
        check_file(os.path.join(tmp, f + ".safetensors"), sd, "container %d (%s)" % (i, f))


def check_errors(tmp):
    """Each error: exit 2, one line, and no output file (an existing one
    stays as it was)."""
    g = torch.Generator().manual_seed(5)
    a = torch.randn(2, generator=g)
    saves = {
        "plain.pt": {"a": a, "module.a": a},
        "tensor.pt": a,
        "object.pt": {"model": {"a": a}, "args": argparse.Namespace(lr=1)},
        "nontensor.pt": {"a": a, "version": 2},
        "complex.pt": {"a": torch.zeros(2, dtype=torch.complex64)},
        "nokey.pt": {"epoch": 1, "weights": {"a": a}},
    }
    for f, obj in saves.items():
        torch.save(obj, os.path.join(tmp, f))
    with open(os.path.join(tmp, "text.pt"), "w") as fh:
        fh.write("not a checkpoint\n")
    with open(os.path.join(tmp, "zip.pt"), "wb") as fh:
        fh.write(b"PK\x03\x04 truncated")
    cases = [
        ["missing.pt", "out.safetensors"],
        ["text.pt", "out.safetensors"],
        ["zip.pt", "out.safetensors"],
        ["tensor.pt", "out.safetensors"],
        ["object.pt", "out.safetensors"],                  # needs --trust
        ["nontensor.pt", "out.safetensors"],
        ["complex.pt", "out.safetensors"],
        ["nokey.pt", "out.safetensors"],
        ["--key", "nope", "nokey.pt", "out.safetensors"],
        ["--strip-prefix", "module.", "plain.pt", "out.safetensors"],    # two tensors named a
        ["--rename", "a=__metadata__", "plain.pt", "out.safetensors"],
        ["--drop", ".", "plain.pt", "out.safetensors"],                  # nothing left
        ["--rename", "module.", "plain.pt", "out.safetensors"],          # no '='
        ["--rename", "=x", "plain.pt", "out.safetensors"],
        ["--drop", "(", "plain.pt", "out.safetensors"],
        ["--dtype", "f16", "plain.pt", "out.safetensors"],
        ["plain.pt"],                                       # no output, no --list
        ["plain.pt", "plain.pt"],                           # would overwrite its input
        ["plain.pt", "no/such/dir/out.safetensors"],
        [],
    ]
    for i, argv in enumerate(cases):
        # a few as programs: the exit status and stderr are the process's
        convert(tmp, argv, expect=2, process=i in (0, 4, 12, len(cases) - 1))
        check(not os.path.exists(os.path.join(tmp, "out.safetensors")),
              "pt2safetensors.py %s: wrote out.safetensors despite the error" % " ".join(argv))
    # a failed conversion leaves an existing output as it was
    with open(os.path.join(tmp, "keep.safetensors"), "wb") as fh:
        fh.write(b"old")
    convert(tmp, ["--drop", ".", "plain.pt", "keep.safetensors"], expect=2)
    with open(os.path.join(tmp, "keep.safetensors"), "rb") as fh:
        check(fh.read() == b"old", "a failed conversion changed the existing output")
    left = [f for f in os.listdir(tmp) if f.startswith(".pt2safetensors.")]
    check(not left, "temporary files left behind: %s" % left)


class Tiny(torch.nn.Module):
    """tiny.nn's twin."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(6, 8)
        self.norm = torch.nn.LayerNorm(8)
        self.fc2 = torch.nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(self.norm(torch.tanh(self.fc1(x))))


def check_driver(tmp, args):
    """A DataParallel state_dict in mixed dtypes, converted, loads into the
    model nnc compiled from tiny.nn; predict matches PyTorch run on the
    same (rounded) weights; --dtype f32's file gives the same bits."""
    torch.manual_seed(7)
    m = Tiny()
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape) * 0.7)
    dtypes = {"fc1.weight": torch.float16, "fc1.bias": torch.bfloat16, "norm.weight": torch.float64,
              "norm.bias": torch.float64, "fc2.weight": torch.float32, "fc2.bias": torch.float16}
    dp = torch.nn.DataParallel(m)          # on the CPU it only wraps: names get `module.`
    sd = collections.OrderedDict((k, v.to(dtypes[k[len("module."):]])) for k, v in dp.state_dict().items())
    torch.save(sd, os.path.join(tmp, "tiny.pt"))
    convert(tmp, ["--strip-prefix", "module.", "tiny.pt", "tiny.safetensors"])
    convert(tmp, ["--strip-prefix", "module.", "--dtype", "f32", "tiny.pt", "tiny32.safetensors"])

    runner = parity.Runner(False, dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    case = types.SimpleNamespace(nn_path=os.path.join(HERE, "tiny.nn"), nnc_args=[])
    bargs = types.SimpleNamespace(nnc=args.nnc, cc="gcc", opt="-O1", sanitize=False,
                                  runtime_include=args.runtime_include, include=args.include,
                                  runtime_lib=args.runtime_lib)
    notes = []
    try:
        exe = parity.build_driver(case, bargs, runner, tmp, notes)
        x = torch.randn(5, 6, generator=torch.Generator().manual_seed(8))
        np.save(os.path.join(tmp, "x.npy"), x.numpy().astype("<f4"))
        for w in ("tiny.safetensors", "tiny32.safetensors"):
            runner.run([exe, "predict", "--weights", w, "--inputs", "x.npy", "--output", w + ".npy"],
                       tmp, "predict with " + w)
        ref = Tiny().double()
        ref.load_state_dict({k[len("module."):]: v.double() for k, v in sd.items()}, strict=True)
        with torch.no_grad():
            want = ref(x.double()).numpy()
        report = []
        got = np.load(os.path.join(tmp, "tiny.safetensors.npy"))
        err = parity.compare("predict", got, want, parity.TOL, report)
        check(report[-1][0] == "ok", "tiny.nn predict from mixed dtypes: %s" % (report[-1][2],))
        got32 = np.load(os.path.join(tmp, "tiny32.safetensors.npy"))
        check(got32.tobytes() == got.tobytes(),
              "tiny.nn: --dtype f32's file predicts other bits than the mixed one (nnc's conversion on "
              "load differs from PyTorch's .float())")
        print("tiny.nn predict from F16/BF16/F64/F32 weights: rel err %.2g" % err)
    except parity.ParityError as e:
        check(False, "tiny.nn driver: %s" % e)


def main():
    args = parse_args(__doc__)
    torch.set_num_threads(1)
    tmp = tempfile.mkdtemp(prefix="nnc_pt2st_")
    try:
        for step in (check_round_trip, check_names, check_containers, check_errors):
            step(tmp)
        check_driver(tmp, args)
    finally:
        if args.keep:
            print("kept " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print("%s: %d failures" % ("FAIL" if failures else "ok", len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
