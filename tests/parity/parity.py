#!/usr/bin/python3
"""parity.py — compares nnc's generated C against a PyTorch twin.

For one case (tests/parity/<case>.nn with its twin <case>.py) it:

  1. compiles the model: `nnc <case>.nn -o gen --emit=all <NNC_ARGS>`, twice
     into two directories to check the output is byte-identical;
  2. builds the command-line driver from <prefix>.c and <prefix>_main.c with
     `-std=c11 -Wall -Wextra -Wpedantic -Werror` (and ASan+UBSan with
     --sanitize) against the runtime library;
  3. builds the twin (`build()`), fills every param and state tensor with
     seeded random values, and writes them as safetensors, and the case's
     inputs and labels as .npy;
  4. runs `drv predict`, `drv grad` and `drv eval` and compares the output,
     the loss and every param gradient, and the printed loss and metrics
     with the twin (eval mode for predict/eval, train mode for grad).

The reference is computed in float64 from the same float32 weights and
inputs (--ref-dtype float32 for PyTorch in float32), and every tensor must
satisfy the normwise relative error

    max|a - b| / max(max|b|, 1e-6) <= 1e-4        (a: nnc, b: PyTorch)
(for a gradient, the floor is also at least 1e-3 of the model's largest
gradient, so a gradient that is zero by the math is judged by float32's
precision, not by its rounding noise divided by 1e-6)

`--self-test` replaces nnc, the C compiler and the driver by a float32
PyTorch stand-in that reads and writes the same files, which checks the
twins, the file formats and this harness without a compiler.

A case's .py defines build(), inputs(gen), and for a model with a loss
labels(gen) and loss(module, inputs, labels); optionally metrics(module,
inputs, labels) -> {name: float}, NNC_ARGS (extra nnc arguments), CHECKS
(a subset of predict/grad/eval), SEED, and init_weights(module, gen).
See README.md.
"""
import argparse
import importlib.util
import json
import math
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True     # no __pycache__ in the source tree
sys.path.insert(0, HERE)

import torch  # noqa: E402  (after numpy; slow import)

TOL = 1e-4
DENOM_FLOOR = 1e-6
GRAD_SCALE_FLOOR = 1e-3


class ParityError(Exception):
    """A check that failed; the message says what and where."""


# ---- safetensors and .npy -----------------------------------------------------

# What the files of nnc and of scripts/pt2safetensors.py hold; BF16, which
# numpy lacks, is read as its 16 bits and widened to float32 (exactly).
ST_DTYPES = {"F32": np.dtype("<f4"), "I32": np.dtype("<i4"), "F64": np.dtype("<f8"),
             "F16": np.dtype("<f2"), "BF16": np.dtype("<u2"), "I64": np.dtype("<i8"),
             "I16": np.dtype("<i2"), "I8": np.dtype("i1"), "U8": np.dtype("u1"), "BOOL": np.dtype("?")}


def st_write(path, tensors):
    """Writes [(name, array)] as safetensors: an 8-byte little-endian header
    length, the JSON header (padded with spaces to a multiple of 8), then the
    raw little-endian float32 data in the given order (int64 arrays, as
    BatchNorm's num_batches_tracked, as I64)."""
    header, blobs, off = {}, [], 0
    for name, a in tensors:
        i64 = np.asarray(a).dtype == np.int64
        a = np.asarray(a, dtype="<i8" if i64 else "<f4")
        b = a.tobytes(order="C")
        header[name] = {"dtype": "I64" if i64 else "F32", "shape": list(a.shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def _no_duplicates(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise ValueError("duplicate tensor name %r" % k)
        d[k] = v
    return d


def st_read(path):
    """Reads a safetensors file into {name: ndarray}, in header order,
    validating sizes and offsets; raises ParityError naming the file."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ParityError("%s: cannot read: %s" % (path, e))
    if len(data) < 8:
        raise ParityError("%s: shorter than the 8-byte header length" % path)
    (n,) = struct.unpack("<Q", data[:8])
    if 8 + n > len(data):
        raise ParityError("%s: header length %d past the end of the file" % (path, n))
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"),
                            object_pairs_hook=_no_duplicates)
    except (ValueError, UnicodeDecodeError) as e:
        raise ParityError("%s: bad JSON header: %s" % (path, e))
    if not isinstance(header, dict):
        raise ParityError("%s: header is not a JSON object" % path)
    base, out = 8 + n, {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dt = ST_DTYPES[info["dtype"]]
            shape = [int(d) for d in info["shape"]]
            b, e = (int(o) for o in info["data_offsets"])
        except (KeyError, TypeError, ValueError) as ex:
            raise ParityError("%s: tensor %r: malformed entry %r (%s)" % (path, name, info, ex))
        count = int(np.prod(shape)) if shape else 1
        if e - b != count * dt.itemsize or b < 0 or base + e > len(data):
            raise ParityError("%s: tensor %r: offsets [%d, %d] do not fit shape %s / file size %d"
                              % (path, name, b, e, shape, len(data)))
        a = np.frombuffer(data[base + b:base + e], dtype=dt).reshape(shape).copy()
        if info["dtype"] == "BF16":
            a = (a.astype("<u4") << 16).view("<f4")
        out[name] = a
    return out


def npy_read(path, what):
    """np.load, with an error naming the file; checks C order and dtype."""
    try:
        a = np.load(path, allow_pickle=False)
    except Exception as e:  # noqa: BLE001 — any reader error is a failure
        raise ParityError("%s: %s: cannot read .npy: %s" % (what, path, e))
    if a.dtype not in (np.dtype("<f4"), np.dtype("<i4")):
        raise ParityError("%s: %s: dtype %s, expected <f4 or <i4" % (what, path, a.dtype.str))
    return a


def to_numpy(t):
    """A case tensor as the array the driver reads: float32 or int32."""
    if t.dtype == torch.float32:
        return t.detach().cpu().numpy().astype("<f4")
    if t.dtype == torch.int32:
        return t.detach().cpu().numpy().astype("<i4")
    raise ParityError("case tensors must be float32 or int32, got %s" % t.dtype)


# ---- comparison ---------------------------------------------------------------

def compare(name, got, want, tol, report, floor=DENOM_FLOOR):
    """Normwise relative error of got (nnc) against want (PyTorch); appends a
    result line to report and returns the error (inf on a shape mismatch or
    a non-finite value that the reference does not have)."""
    got = np.asarray(got)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        report.append(("FAIL", name, "shape %s, expected %s" % (list(got.shape), list(want.shape))))
        return math.inf
    g = np.atleast_1d(got.astype(np.float64))
    shape = got.shape
    want = np.atleast_1d(want)
    if g.size == 0:
        report.append(("ok", name, 0.0))
        return 0.0
    finite_mismatch = np.isfinite(g) != np.isfinite(want)
    diff = np.abs(g - want)
    diff[finite_mismatch] = np.inf
    both_nonfinite = ~np.isfinite(g) & ~np.isfinite(want)
    diff[both_nonfinite & (np.nan_to_num(g) == np.nan_to_num(want))] = 0.0
    denom = max(float(np.nanmax(np.abs(np.where(np.isfinite(want), want, 0.0)))), floor)
    i = int(np.nanargmax(np.where(np.isnan(diff), np.inf, diff)))
    maxdiff = float(diff.flat[i]) if not np.isnan(diff.flat[i]) else math.inf
    err = maxdiff / denom
    if err <= tol:
        report.append(("ok", name, err))
        return err
    idx = np.unravel_index(i, shape) if shape else ()
    k = 6
    report.append(("FAIL", name,
                    "rel err %.3g > %.1g: max |diff| %.6g at %s (nnc %.8g, torch %.8g), max |torch| %.6g\n"
                    "        nnc   first: %s\n        torch first: %s"
                    % (err, tol, maxdiff, list(int(j) for j in idx), g.flat[i], want.flat[i],
                       denom, fmt_first(g, k), fmt_first(want, k))))
    return err


def fmt_first(a, k):
    v = a.reshape(-1)[:k]
    s = " ".join("%.7g" % x for x in v)
    return "[" + s + (" ..." if a.size > k else "") + "]"


# ---- running things --------------------------------------------------------------

class Runner:
    def __init__(self, verbose, env):
        self.verbose = verbose
        self.env = env

    def run(self, argv, cwd, what, timeout=300):
        if self.verbose:
            print("  $ (cd %s && %s)" % (shlex.quote(cwd), " ".join(shlex.quote(a) for a in argv)),
                  flush=True)
        t0 = time.time()
        try:
            p = subprocess.run(argv, cwd=cwd, env=self.env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise ParityError("%s: timed out after %ds: %s" % (what, timeout, " ".join(argv)))
        except OSError as e:
            raise ParityError("%s: cannot run %s: %s" % (what, argv[0], e))
        out = p.stdout.decode("utf-8", "replace")
        err = p.stderr.decode("utf-8", "replace")
        if self.verbose:
            print("    exit %d in %.2fs" % (p.returncode, time.time() - t0))
        if self.verbose and p.returncode == 0:
            for line in (out + err).splitlines()[:60]:
                print("    | " + line)
        if p.returncode != 0:
            raise ParityError("%s failed (exit status %d): %s\n%s%s"
                              % (what, p.returncode, " ".join(shlex.quote(a) for a in argv),
                                 indent(out), indent(err)))
        return out, err


def indent(s, limit=80):
    lines = s.rstrip("\n").splitlines()
    if not lines:
        return ""
    if len(lines) > limit:
        lines = lines[:limit] + ["... (%d more lines)" % (len(lines) - limit)]
    return "".join("    | %s\n" % l for l in lines)


def snake_case(name):
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    s = re.sub(r"(?<=[A-Z])([A-Z][a-z])", r"_\1", s)
    return s.lower()


def model_name(nn_path):
    src = open(nn_path, encoding="utf-8").read()
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    src = re.sub(r"//[^\n]*", " ", src)
    names = re.findall(r"\bmodel\s+([A-Za-z_][A-Za-z0-9_]*)", src)
    if len(names) != 1:
        raise ParityError("%s: expected exactly one model declaration, found %d" % (nn_path, len(names)))
    return names[0]


# ---- the case ---------------------------------------------------------------------

def load_case(name_or_path):
    if name_or_path.endswith(".nn") or os.sep in name_or_path:
        base = os.path.splitext(os.path.abspath(name_or_path))[0]
    else:
        base = os.path.join(HERE, name_or_path)
    nn_path, py_path = base + ".nn", base + ".py"
    for p in (nn_path, py_path):
        if not os.path.exists(p):
            raise ParityError("case %r: %s not found" % (name_or_path, p))
    name = os.path.basename(base)
    spec = importlib.util.spec_from_file_location("parity_case_" + name, py_path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for fn in ("build", "inputs"):
        if not hasattr(mod, fn):
            raise ParityError("%s: no %s()" % (py_path, fn))
    return name, nn_path, mod


def default_init(module, gen):
    """Seeded non-trivial values: a param of rank >= 2 ~ N(0, 1/fan_in) (fan
    in as PyTorch: dim 1 times the receptive field), everything else
    (1-D params, state) ~ N(0, 0.25)."""
    with torch.no_grad():
        for _, t in module.state_dict(keep_vars=True).items():
            if not t.is_floating_point():
                continue
            if isinstance(t, torch.nn.Parameter) and t.dim() >= 2:
                fan_in = t.shape[1] * int(np.prod(t.shape[2:]))
                std = 1.0 / math.sqrt(fan_in)
            else:
                std = 0.5
            t.copy_(torch.randn(t.shape, generator=gen, dtype=torch.float32) * std)


class Case:
    """The torch side of one case: weights, inputs, labels, references."""

    def __init__(self, name, nn_path, mod, ref_dtype):
        self.name, self.nn_path, self.mod = name, nn_path, mod
        self.ref_dtype = ref_dtype
        self.seed = getattr(mod, "SEED", 1234)
        self.nnc_args = list(getattr(mod, "NNC_ARGS", []))
        self.has_loss = hasattr(mod, "loss")
        default_checks = ["predict", "grad", "eval"] if self.has_loss else ["predict"]
        self.checks = list(getattr(mod, "CHECKS", default_checks))
        for c in self.checks:
            if c not in ("predict", "grad", "eval"):
                raise ParityError("%s: unknown check %r in CHECKS" % (name, c))
        if not self.has_loss and set(self.checks) - {"predict"}:
            raise ParityError("%s: grad/eval checks need loss()" % name)

        torch.manual_seed(self.seed)
        module = mod.build()
        gen = torch.Generator().manual_seed(self.seed)
        (getattr(mod, "init_weights", None) or default_init)(module, gen)
        self.state_dict = {k: v.detach().clone() for k, v in module.state_dict().items()}
        for k, v in self.state_dict.items():
            if v.dtype not in (torch.float32, torch.int64):
                raise ParityError("%s: state_dict entry %s is %s, not float32 (or int64, a counter)"
                                  % (name, k, v.dtype))
        self.param_names = [n for n, _ in module.named_parameters()]
        self.frozen = {n for n, p in module.named_parameters() if not p.requires_grad}
        self.state_names = [k for k in self.state_dict if k not in set(self.param_names)]

        gen = torch.Generator().manual_seed(self.seed + 1)
        self.inputs = list(mod.inputs(gen))
        self.labels = list(mod.labels(gen)) if hasattr(mod, "labels") else []
        if self.has_loss and not self.labels:
            # The spec's driver takes --labels for grad/eval; a loss without
            # labels is allowed by the language but not exercised here.
            raise ParityError("%s: a model with a loss needs labels(gen) here" % name)
        self.np_inputs = [to_numpy(t) for t in self.inputs]
        self.np_labels = [to_numpy(t) for t in self.labels]

    # -- the reference in ref_dtype ------------------------------------------------
    def _module(self, dtype):
        m = self.mod.build()
        m.load_state_dict(self.state_dict, strict=True)
        return m.to(dtype)

    def _args(self, arrays, dtype):
        out = []
        for a in arrays:
            t = torch.from_numpy(a.copy())
            out.append(t.to(dtype) if t.is_floating_point() else t)
        return out

    def ref_predict(self, dtype=None, module=None):
        dtype = dtype or self.ref_dtype
        m = module if module is not None else self._module(dtype)
        m.eval()
        with torch.no_grad():
            y = m(*self._args(self.np_inputs, dtype))
        if y.is_floating_point():
            return y.to(torch.float64).numpy()
        return y.to(torch.int64).numpy()

    def ref_grad(self, dtype=None, module=None):
        dtype = dtype or self.ref_dtype
        m = module if module is not None else self._module(dtype)
        m.train()
        m.zero_grad(set_to_none=True)
        torch.manual_seed(self.seed + 2)
        loss = self.mod.loss(m, self._args(self.np_inputs, dtype), self._args(self.np_labels, dtype))
        if loss.dim() != 0:
            raise ParityError("%s: loss() must return a scalar tensor, got shape %s"
                              % (self.name, list(loss.shape)))
        loss.backward()
        grads = {}
        for n, p in m.named_parameters():
            g = p.grad if p.grad is not None else torch.zeros_like(p)
            grads[n] = g.detach().to(torch.float64).numpy()
        return float(loss.item()), grads

    def ref_eval(self, dtype=None, module=None):
        dtype = dtype or self.ref_dtype
        m = module if module is not None else self._module(dtype)
        m.eval()
        with torch.no_grad():
            xs, ys = self._args(self.np_inputs, dtype), self._args(self.np_labels, dtype)
            vals = {"loss": float(self.mod.loss(m, xs, ys).item())}
            if hasattr(self.mod, "metrics"):
                for k, v in self.mod.metrics(m, xs, ys).items():
                    vals[k] = float(v)
        return vals

    # -- files ---------------------------------------------------------------------
    def write_files(self, d):
        st_write(os.path.join(d, "weights.safetensors"),
                 [(k, v.numpy()) for k, v in self.state_dict.items()])
        xs, ys = [], []
        for i, a in enumerate(self.np_inputs):
            xs.append("x%d.npy" % i)
            np.save(os.path.join(d, xs[-1]), a)
        for i, a in enumerate(self.np_labels):
            ys.append("y%d.npy" % i)
            np.save(os.path.join(d, ys[-1]), a)
        return "weights.safetensors", ",".join(xs), ",".join(ys)


# ---- the self-test stand-in for nnc + cc + driver ----------------------------------

class FakeDriver:
    """Does what `drv predict|grad|eval` does, with the float32 twin, through
    the same files: weights via st_read (strict load: names and shapes must
    match the twin), arrays via np.load, outputs via np.save and st_write."""

    def __init__(self, case):
        self.case = case

    def __call__(self, argv, cwd):
        cmd, opts = argv[0], {}
        it = iter(argv[1:])
        for a in it:
            opts[a.lstrip("-")] = next(it)
        c = self.case
        sd = {k: torch.from_numpy(v) for k, v in st_read(os.path.join(cwd, opts["weights"])).items()}
        m = c.mod.build()
        m.load_state_dict(sd, strict=True)

        def arrays(key):
            return [np.load(os.path.join(cwd, p)) for p in opts[key].split(",")] if opts.get(key) else []

        saved = c.np_inputs, c.np_labels
        c.np_inputs, c.np_labels = arrays("inputs"), arrays("labels")
        try:
            if cmd == "predict":
                y = c.ref_predict(torch.float32, m)
                y = y.astype("<f4") if y.dtype.kind == "f" else y.astype("<i4")
                np.save(os.path.join(cwd, opts["output"]), y)
                return ""
            if cmd == "grad":
                loss, grads = c.ref_grad(torch.float32, m)
                st_write(os.path.join(cwd, opts["output"]),
                         [(n, g) for n, g in grads.items()] + [("loss", np.array(loss))])
                return ""
            if cmd == "eval":
                return "".join("%s=%.9g\n" % kv for kv in c.ref_eval(torch.float32, m).items())
            raise ParityError("fake driver: unknown command %s" % cmd)
        finally:
            c.np_inputs, c.np_labels = saved


# ---- one case end to end --------------------------------------------------------------

def run_case(name_or_path, args, runner):
    t0 = time.time()
    name, nn_path, mod = load_case(name_or_path)
    case = Case(name, nn_path, mod, getattr(torch, args.ref_dtype))
    tmp = tempfile.mkdtemp(prefix="nnc_parity_%s_" % name)
    report, notes = [], []
    try:
        if args.keep or args.verbose:
            print("  [%s] work dir %s" % (name, tmp))
        weights, xs, ys = case.write_files(tmp)
        if args.self_test:
            fake = FakeDriver(case)

            def drv(argv, what):
                return fake(argv, tmp)
        else:
            exe = build_driver(case, args, runner, tmp, notes)

            def drv(argv, what):
                isa = runner.env.get("NNC_ISA") if args.isa else None
                out, _ = runner.run([exe] + argv, tmp, what + (" (NNC_ISA=%s)" % isa if isa else ""))
                return out

        # --isa: the same driver under each NNC_ISA in turn, against one
        # reference: the instruction set is picked at run time, so one build
        # serves them all (the comparisons are named [isa] name)
        isas = args.isa.split(",") if args.isa else [None]
        for isa in isas:
            if isa:
                runner.env["NNC_ISA"] = isa
            tag = "[%s] " % isa if len(isas) > 1 else ""
            mark = len(report)
            if "predict" in case.checks:
                drv(["predict", "--weights", weights, "--inputs", xs, "--output", "out.npy"],
                    "drv predict")
                got = npy_read(os.path.join(tmp, "out.npy"), "predict output")
                want = case.ref_predict()
                want_dtype = "<f4" if want.dtype.kind == "f" else "<i4"
                if got.dtype.str != want_dtype:
                    report.append(("FAIL", "predict", "output dtype %s, expected %s"
                                   % (got.dtype.str, want_dtype)))
                compare("predict", got, want, args.tol, report)

            if "grad" in case.checks:
                drv(["grad", "--weights", weights, "--inputs", xs, "--labels", ys,
                     "--output", "grads.safetensors"], "drv grad")
                got = st_read(os.path.join(tmp, "grads.safetensors"))
                want_loss, want_grads = case.ref_grad()
                if "loss" not in got:
                    report.append(("FAIL", "grad:loss", "no tensor `loss` in the grad file"))
                else:
                    gl = got.pop("loss")
                    if gl.size != 1:
                        report.append(("FAIL", "grad:loss", "shape %s, expected a scalar" % list(gl.shape)))
                    else:
                        if gl.shape != ():
                            notes.append("grad file's `loss` has shape %s, not []" % list(gl.shape))
                        compare("grad:loss", gl.reshape(()), want_loss, args.tol, report)
                # A gradient that the math makes zero (attention's key bias:
                # softmax ignores a per-row constant) is only float32 rounding
                # noise, so each tensor is measured against at least
                # GRAD_SCALE_FLOOR of the model's largest gradient.
                scale = max([float(np.max(np.abs(np.asarray(g)))) for g in want_grads.values()
                             if np.asarray(g).size] + [0.0])
                gfloor = max(DENOM_FLOOR, GRAD_SCALE_FLOOR * scale)
                for n in case.param_names:
                    if n in got:
                        compare("grad:" + n, got.pop(n), want_grads[n], args.tol, report,
                                DENOM_FLOOR if n in case.frozen else gfloor)
                    elif n in case.frozen:
                        notes.append("frozen %s not in the grad file" % n)
                    else:
                        report.append(("FAIL", "grad:" + n, "missing from the grad file"))
                for n in got:
                    what = "a state tensor" if n in case.state_names else "not a param of the model"
                    report.append(("FAIL", "grad:" + n, "unexpected tensor in the grad file (%s)" % what))

            if "eval" in case.checks:
                out = drv(["eval", "--weights", weights, "--inputs", xs, "--labels", ys], "drv eval")
                got = {}
                for line in out.splitlines():
                    mm = re.match(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(\S+)\s*$", line)
                    if mm:
                        try:
                            got[mm.group(1)] = float(mm.group(2))
                        except ValueError:
                            report.append(("FAIL", "eval:" + mm.group(1), "not a number: %r" % line))
                for k, v in case.ref_eval().items():
                    if k not in got:
                        report.append(("FAIL", "eval:" + k, "no `%s=<v>` line in eval's stdout:\n%s"
                                       % (k, indent(out))))
                    else:
                        compare("eval:" + k, got[k], v, args.tol, report)
            if case.state_names and case.np_labels and not args.self_test and "grad" in case.checks:
                # the state after one training step: SGD with lr 0 leaves the
                # params as they are, and the whole file is one batch, so the
                # running statistics are updated exactly once, as by one
                # train-mode forward in PyTorch
                n = case.np_inputs[0].shape[0]
                drv(["train", "--weights", weights, "--inputs", xs, "--labels", ys, "--epochs", "1",
                     "--batch", str(n), "--optimizer", "sgd", "--lr", "0", "--quiet",
                     "--save", "step.safetensors"], "drv train (one step)")
                after = st_read(os.path.join(tmp, "step.safetensors"))
                dtype = case.ref_dtype
                m = case._module(dtype)
                m.train()
                torch.manual_seed(case.seed + 2)
                with torch.no_grad():
                    case.mod.loss(m, case._args(case.np_inputs, dtype), case._args(case.np_labels, dtype))
                sd = m.state_dict()
                for k in case.state_names:
                    if k not in after:
                        report.append(("FAIL", "step:" + k, "state tensor missing from the saved checkpoint"))
                    else:
                        compare("step:" + k, after[k], sd[k].to(torch.float64).numpy(), args.tol, report)
            for r in range(mark, len(report)):
                report[r] = (report[r][0], tag + report[r][1]) + tuple(report[r][2:])
    except ParityError as e:
        report.append(("FAIL", "error", str(e)))
    finally:
        if args.keep:
            print("  [%s] kept %s" % (name, tmp))
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    fails = [r for r in report if r[0] == "FAIL"]
    errs = [r[2] for r in report if r[0] == "ok"]
    worst = max(errs) if errs else 0.0
    if args.verbose:
        for r in report:
            if r[0] == "ok":
                print("  ok    %-40s rel err %.3g" % (r[1], r[2]))
    for n in notes:
        print("  note: [%s] %s" % (name, n))
    for r in fails:
        print("  FAIL  [%s] %s: %s" % (name, r[1], r[2]))
    mode = "self-test" if args.self_test else (args.cc + (" +asan/ubsan" if args.sanitize else ""))
    compared = sum(1 for r in report if r[1] != "error")
    print("%s %s: %d values compared (%s), worst rel err %.2g, %s, %.1fs"
          % ("FAIL" if fails else "ok  ", name, compared, "+".join(case.checks), worst, mode,
             time.time() - t0), flush=True)
    return not fails


def build_driver(case, args, runner, tmp, notes):
    gen, gen2 = os.path.join(tmp, "gen"), os.path.join(tmp, "gen2")
    os.makedirs(gen)
    os.makedirs(gen2)
    nn_path = os.path.abspath(case.nn_path)
    runner.run([args.nnc, nn_path, "-o", gen, "--emit=all"] + case.nnc_args, tmp, "nnc", timeout=120)
    runner.run([args.nnc, nn_path, "-o", gen2, "--emit=all"] + case.nnc_args, tmp, "nnc (again)",
               timeout=120)

    prefix = snake_case(model_name(nn_path))
    files = ["%s.h" % prefix, "%s.c" % prefix, "%s_main.c" % prefix]
    present = sorted(os.listdir(gen))
    for f in files:
        if f not in present:
            raise ParityError("nnc did not write %s (prefix %s); it wrote: %s"
                              % (f, prefix, " ".join(present) or "nothing"))
    if present != sorted(os.listdir(gen2)):
        raise ParityError("nnc is not deterministic: two runs wrote different file sets")
    for f in present:
        with open(os.path.join(gen, f), "rb") as a, open(os.path.join(gen2, f), "rb") as b:
            if a.read() != b.read():
                raise ParityError("nnc is not deterministic: %s differs between two runs" % f)
    for f in files:
        with open(os.path.join(gen, f), encoding="utf-8", errors="replace") as fh:
            first = fh.readline()
        if "nnc" not in first or os.path.basename(nn_path) not in first:
            notes.append("%s: first line does not name nnc and %s: %r"
                         % (f, os.path.basename(nn_path), first.strip()))

    exe = os.path.join(tmp, "drv")
    cmd = [args.cc, "-std=c11"] + args.opt.split() + ["-g", "-Wall", "-Wextra", "-Wpedantic", "-Werror"]
    if args.sanitize:
        cmd += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer",
                "-fno-sanitize-recover=all"]
    cmd += ["-I" + args.runtime_include] + ["-I" + d for d in args.include]
    cmd += [os.path.join(gen, files[1]), os.path.join(gen, files[2]), args.runtime_lib,
            "-lopenblas", "-lm", "-fopenmp", "-o", exe]
    runner.run(cmd, tmp, "%s (generated C)" % args.cc, timeout=300)
    return exe


def all_cases():
    return sorted(f[:-3] for f in os.listdir(HERE)
                  if f.endswith(".nn") and os.path.exists(os.path.join(HERE, f[:-3] + ".py")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", action="append", default=[],
                    help="a case name (tests/parity/<name>.nn) or a path to a .nn; repeatable")
    ap.add_argument("--all", action="store_true", help="every case in tests/parity")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--nnc", help="the nnc executable")
    ap.add_argument("--runtime-lib", help="libnnc_runtime.a")
    ap.add_argument("--runtime-include", help="directory of nnc_runtime.h")
    ap.add_argument("--include", action="append", default=[], help="extra -I directory")
    ap.add_argument("--cc", default="gcc", help="C compiler for the generated code (gcc, clang)")
    ap.add_argument("--sanitize", action="store_true", help="build the driver with ASan and UBSan")
    ap.add_argument("--opt", default="-O1",
                    help="optimization flags for the generated code (default -O1; the native cases: "
                         "-O3 -march=native, where gcc 12 has miscompiled generated loops)")
    ap.add_argument("--isa", default="",
                    help="comma-separated NNC_ISA values (avx512,avx2,generic): run the checks "
                         "under each, with one build and one reference")
    ap.add_argument("--tol", type=float, default=TOL, help="normwise relative tolerance (1e-4)")
    ap.add_argument("--ref-dtype", choices=["float64", "float32"], default="float64",
                    help="dtype of the PyTorch reference (default float64)")
    ap.add_argument("--self-test", action="store_true",
                    help="no nnc: a float32 PyTorch stand-in plays the driver")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--verbose", "-v", action="store_true", help="print commands and every comparison")
    args = ap.parse_args()

    if args.list:
        print("\n".join(all_cases()))
        return 0
    cases = all_cases() if args.all else args.case
    if not cases:
        ap.error("give --case NAME (repeatable) or --all")
    if not args.self_test:
        missing = [o for o in ("nnc", "runtime_lib", "runtime_include") if not getattr(args, o)]
        if missing:
            ap.error("need --%s (or --self-test)" % ", --".join(m.replace("_", "-") for m in missing))
        for p in (args.nnc, args.runtime_lib):
            if not os.path.exists(p):
                ap.error("%s does not exist (build it first)" % p)

    torch.set_num_threads(1)
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    if args.sanitize:
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1")
        env.setdefault("LSAN_OPTIONS", "suppressions=" + os.path.join(HERE, "lsan.supp"))
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    runner = Runner(args.verbose, env)

    passed = failed = 0
    for c in cases:
        try:
            ok = run_case(c, args, runner)
        except ParityError as e:
            print("FAIL %s: %s" % (c, e), flush=True)
            ok = False
        passed += ok
        failed += not ok
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
