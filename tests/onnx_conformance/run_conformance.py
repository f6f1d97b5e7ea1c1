#!/usr/bin/python3
"""ONNX's backend conformance tests through `nnc import` (see README.md).

    run_conformance.py --nnc NNC --runtime-include DIR --runtime-lib LIB
                       [--include DIR] --data DATA --expected FILE
                       [--subset FILE] [--jobs 2] [--filter REGEX]
                       [--update] [--report FILE]

For every test directory DATA/GROUP/TEST (model.onnx and test_data_set_K/
{input_J,output_J}.pb, Debian's libonnx-testdata): `nnc import`, `nnc
--emit=all`, the driver built by gcc, `predict` on every data set, and
the first output compared with output_0.pb at ONNX's backend tolerance
(onnx/backend/test/runner: rtol 1e-3, atol 1e-7), or exactly when it is
an integer or bool tensor (the model's i32 output).  Each test ends as
`pass` or as a failure with a reason (a short key: `unsupported-op:Erf`,
`import-unsupported`, `compile`, `mismatch`, ...).

The expected file lists every test that is expected not to pass, one a
line: `GROUP/TEST  REASON  # what the runner saw`.  The run fails when a
test fails that is not listed, fails for another reason than listed, or
passes while listed; --update rewrites the file from the run instead
(for the tests run; lines of other tests are kept).

Two rewrites make the tests importable, both what a user of a fixed-shape
model would do (README.md, "What the runner changes"):
  - a model of an opset below 13 is upgraded with onnx.version_converter;
  - the inputs that are data stay inputs and the others (weights, axes,
    shapes, indices) become initializers: first with the output's first
    axis as the batch (dim_param 'N') of the inputs that carry it; when
    that import fails, or no input carries it, or the output is 0-d, as
    a fixed-shape model (every float input an input of its own shape).

Exits 77 (ctest: skipped) when numpy, onnx or the data is missing.
"""
import argparse
import collections
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import onnx
    from onnx import numpy_helper, version_converter
except ImportError as e:  # pragma: no cover
    print(f"skipped: numpy or the onnx Python package is missing ({e}; Debian: python3-onnx)")
    sys.exit(77)

RTOL, ATOL = 1e-3, 1e-7  # onnx/backend/test/runner/__init__.py
GROUPS = ["node", "pytorch-converted", "pytorch-operator", "simple"]
OPSET_MIN = 13
FLOAT_TYPES = {np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16)}


class Fail(Exception):
    def __init__(self, reason, detail=""):
        super().__init__(reason)
        self.reason = reason
        self.detail = detail


def first_error(text):
    """The first line of nnc's stderr that says error, shortened."""
    for line in text.splitlines():
        if "error" in line:
            # without the temporary directory's name, so that notes stay put
            line = re.sub(r"^nnc: error: '?[^ ']*model\.onnx'?: ", "", line.strip())
            return line[:300]
    return (text.strip().splitlines() or [""])[0][:300]


def run(cmd, cwd, what, reason, timeout=300, env=None):
    try:
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise Fail("timeout", "%s took more than %d s" % (what, timeout))
    if r.returncode != 0:
        err = r.stderr.decode("utf-8", "replace") + r.stdout.decode("utf-8", "replace")
        raise Fail(reason, "%s (exit %d): %s" % (what, r.returncode, first_error(err)))
    return r


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def data_sets(tdir):
    sets = []
    for d in sorted(os.listdir(tdir)):
        p = os.path.join(tdir, d)
        if not d.startswith("test_data_set_") or not os.path.isdir(p):
            continue
        ins, outs = [], []
        k = 0
        while os.path.exists(os.path.join(p, "input_%d.pb" % k)):
            ins.append(load_pb(os.path.join(p, "input_%d.pb" % k)))
            k += 1
        k = 0
        while os.path.exists(os.path.join(p, "output_%d.pb" % k)):
            outs.append(load_pb(os.path.join(p, "output_%d.pb" % k)))
            k += 1
        sets.append((ins, outs))
    return sets


def supported_ops(path):
    """onnx_ops.def's rows: {(domain, op): (first, last)}."""
    rows = {}
    with open(path, encoding="utf-8") as f:
        for m in re.finditer(r'^ONNX_OP\("([^"]*)", "([^"]+)", (\d+), (\d+)\)', f.read(), re.M):
            rows[(m.group(1), m.group(2))] = (int(m.group(3)), int(m.group(4)))
    return rows


def check_model(model, ops):
    """Raises Fail for what the model alone shows nnc cannot import or the
    language cannot express (README.md, "Reasons"); returns the opset."""
    g = model.graph
    for v in list(g.input) + list(g.output):
        if v.type.WhichOneof("value") != "tensor_type":
            raise Fail("non-tensor-io", "'%s' is a %s" % (v.name, v.type.WhichOneof("value")))
    opsets = {("" if o.domain == "ai.onnx" else o.domain): o.version for o in model.opset_import}
    opset = opsets.get("", 0)
    for n in g.node:
        dom = "" if n.domain == "ai.onnx" else n.domain
        row = ops.get((dom, n.op_type))
        v = opsets.get(dom, 0)
        if dom == "" and v < OPSET_MIN:
            v = OPSET_MIN  # the runner upgrades it (prepare)
        if row is None or not row[0] <= v <= row[1]:
            raise Fail("unsupported-op:" + n.op_type, "%s (opset %d) is not in onnx_ops.def" % (n.op_type, v))
    if len(g.output) != 1:
        raise Fail("multiple-outputs", "%d graph outputs; a model has one" % len(g.output))
    return opset


# the output types a model returns exactly: float ones as f32 (compared
# at the tolerance), integer and bool ones as i32 (compared exactly)
INT_OUTPUTS = {onnx.TensorProto.BOOL, onnx.TensorProto.INT8, onnx.TensorProto.INT16, onnx.TensorProto.INT32,
               onnx.TensorProto.INT64, onnx.TensorProto.UINT8, onnx.TensorProto.UINT16, onnx.TensorProto.UINT32}


def check_output(model, sets):
    """Whether the output is an integer or bool tensor (compared exactly
    with the model's i32 output), else a float one."""
    if not sets or not sets[0][1]:
        raise Fail("no-data", "no test_data_set with an output")
    ref = sets[0][1][0]
    et = model.graph.output[0].type.tensor_type.elem_type
    if ref.dtype in FLOAT_TYPES and et != onnx.TensorProto.BFLOAT16:
        return False
    if et in INT_OUTPUTS and (ref.dtype == np.bool_ or np.issubdtype(ref.dtype, np.integer)):
        return True
    raise Fail("output-type", "output_0 is %s; a model's output is f32 or i32"
               % (onnx.TensorProto.DataType.Name(et).lower() if et else ref.dtype))


def legacy_prelu_slopes(model):
    """Opsets 1 to 6 apply a PRelu slope of C values per channel (axis 1 of
    an input [N, C, ...]); opset 7 broadcasts it numpy-style from the last
    axis, and onnx.version_converter's PRelu adapter upgrades the node
    without the reshape that keeps the meaning (the pytorch-converted
    *_multiparam tests: a slope [3] against [2, 3, 4] then broadcasts to
    nothing).  Do that reshape: a slope initializer [C] for an input of
    rank r >= 3 with C on axis 1 becomes [C, 1, ... (r - 2 ones)]."""
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    shapes = {vi.name: [d.dim_value for d in vi.type.tensor_type.shape.dim] for vi in g.input}
    for n in g.node:
        if n.op_type != "PRelu" or len(n.input) < 2 or n.input[1] not in inits:
            continue
        slope, x = inits[n.input[1]], shapes.get(n.input[0])
        if x and len(x) >= 3 and list(slope.dims) == [x[1]] and x[1] > 1:
            slope.dims[:] = [x[1]] + [1] * (len(x) - 2)
            for vi in g.input:  # the old style also lists it as an input
                if vi.name == n.input[1]:
                    del vi.type.tensor_type.shape.dim[:]
                    for d in slope.dims:
                        vi.type.tensor_type.shape.dim.add().dim_value = d


def upgrade(model, opset):
    if opset >= OPSET_MIN:
        return model
    if opset < 7:
        legacy_prelu_slopes(model)
    try:
        return version_converter.convert_version(model, OPSET_MIN)
    except Exception as e:  # the converter raises RuntimeError or its own
        raise Fail("opset-convert", "onnx.version_converter from opset %d: %s"
                   % (opset, str(e).splitlines()[0][:200] if str(e) else type(e).__name__))


BATCH, INIT, FIXED = "batch", "init", "fixed"  # what a plan makes of an input


def batch_plans(model, sets):
    """The ways to import the test (module docstring), in the order tried:
    lists of what each input becomes: BATCH (an input whose first axis is
    the batch), INIT (an initializer holding data set 0's values) or FIXED
    (an input of its own shape, in a fixed-shape model).  The batched
    plans come first, the fixed plan last."""
    g = model.graph
    inits = {t.name for t in g.initializer}
    real = [i for i in g.input if i.name not in inits]
    ins, ref = sets[0][0], sets[0][1][0]
    if len(ins) != len(real):
        raise Fail("harness", "%d inputs in the data, %d in the model" % (len(ins), len(real)))
    # the lead: the first input with the output's first axis, a float one
    # when there is any (an integer input is indices, axes or a shape)
    floats = any(a.dtype in FLOAT_TYPES for a in ins)
    lead = None
    for a in ins:
        if (lead is None and ref.ndim >= 1 and a.ndim >= 1 and a.shape[0] == ref.shape[0]
                and (a.dtype in FLOAT_TYPES or not floats)):
            lead = a
    # the fixed plan: every float input stays one, of its shape (bfloat16
    # arrives as its bits, uint16), and so does every bool one (a mask is
    # data, never axes, a shape or indices)
    fixed = [FIXED if a.dtype in FLOAT_TYPES or a.dtype == np.bool_
             or vi.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16
             else INIT for a, vi in zip(ins, real)]
    if lead is None:
        return [fixed]
    same = [BATCH if a is lead or a.shape == lead.shape else INIT for a in ins]
    axis0 = [BATCH if a is lead or (a.ndim == lead.ndim and a.shape[0] == lead.shape[0]) else INIT for a in ins]
    return ([same] if same == axis0 else [same, axis0]) + [fixed]


def apply_plan(model, sets, plan):
    """A copy of model with the batched inputs' first axis 'N', the fixed
    ones as they are, and the other inputs initializers holding data set
    0's values."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    inits = {t.name for t in g.initializer}
    real = [i for i in g.input if i.name not in inits]
    keep = []
    for k, (vi, b) in enumerate(zip(real, plan)):
        if b == BATCH:
            vi.type.tensor_type.shape.dim[0].dim_param = "N"
        if b == FIXED:  # the data's shape, where the declared one differs
            shapes = {tuple(ins[k].shape) for ins, _ in sets}
            if len(shapes) != 1:
                raise Fail("harness", "input '%s' has shapes %s in the data sets" % (vi.name, sorted(shapes)))
            shape = vi.type.tensor_type.shape
            del shape.dim[:]
            for d in sets[0][0][k].shape:
                shape.dim.add().dim_value = d
        if b != INIT:
            keep.append(vi)
            continue
        a = sets[0][0][k]
        for ins, _ in sets[1:]:
            if not np.array_equal(ins[k], a, equal_nan=True):
                raise Fail("harness", "input '%s' is not batched and differs between data sets" % vi.name)
        t = numpy_helper.from_array(a, vi.name)
        t.data_type = vi.type.tensor_type.elem_type  # bfloat16 arrives as its bits
        g.initializer.append(t)
    del g.input[:]
    g.input.extend(keep)
    for vo in g.output:
        dims = vo.type.tensor_type.shape.dim
        if len(dims) >= 1 and BATCH in plan:
            dims[0].dim_param = "N"
    # the exporter's own shapes of intermediate values would contradict N
    del g.value_info[:]
    return m


def to_npy(a, elem_type):
    if elem_type == onnx.TensorProto.BFLOAT16:
        return (a.astype(np.uint32) << 16).view(np.float32).astype("<f4")
    if a.dtype in FLOAT_TYPES:
        with np.errstate(over="ignore"):
            return a.astype("<f4")
    if a.dtype == np.bool_ or np.issubdtype(a.dtype, np.integer):
        return a.astype("<i4")
    raise Fail("input-type", "input of dtype %s" % a.dtype)


def nnc_import(args, model, tmp):
    prepared = os.path.join(tmp, "model.onnx")
    onnx.save(model, prepared)
    for f in ("t.nn", "t.safetensors"):
        if os.path.exists(os.path.join(tmp, f)):
            os.remove(os.path.join(tmp, f))
    imp = subprocess.run([args.nnc, "import", prepared, "-o", tmp, "--name", "t"], cwd=tmp,
                         capture_output=True, timeout=120)
    if imp.returncode == 0:
        return None
    err = imp.stderr.decode("utf-8", "replace")
    m = re.search(r"unsupported op (\S+)", err)
    if m:
        return Fail("unsupported-op:" + m.group(1), first_error(err))
    if "a model's output has the batch N as its first axis" in err:  # lift's check
        return Fail("output-not-batched", first_error(err))
    if "does not compile" in err:
        if "whose first dim is the batch" in err:
            return Fail("output-not-batched", first_error(err))
        m = re.search(r"unknown name '([a-z_0-9]+)'|expected expression, got '(where)'", err)
        if m:  # a primitive the language does not have (yet)
            return Fail("needs-primitive:" + (m.group(1) or m.group(2)), first_error(err))
        return Fail("import-compile", first_error(err))
    return Fail("import-unsupported" if imp.returncode == 1 else "import-malformed", first_error(err))


def run_test(group, name, args):
    tdir = os.path.join(args.data, group, name)
    tmp = tempfile.mkdtemp(prefix="nnc-conf-")
    try:
        model_path = os.path.join(tdir, "model.onnx")
        if not os.path.exists(model_path):
            raise Fail("no-model", "no model.onnx (the data ships without it)")
        model = onnx.load(model_path)
        opset = check_model(model, args.ops)
        sets = data_sets(tdir)
        exact = check_output(model, sets)
        model = upgrade(model, opset)
        err, plan = None, None
        for p in batch_plans(model, sets):
            e = nnc_import(args, apply_plan(model, sets, p), tmp)
            if e is None:
                plan = p
                break
            # the first plan's reason, unless it is only that the batch
            # does not reach the output: then the fixed plan's says more
            if err is None or err.reason == "output-not-batched":
                err = e
        if plan is None:
            raise err
        elem_types = [vi.type.tensor_type.elem_type for vi in model.graph.input
                      if vi.name not in {t.name for t in model.graph.initializer}]
        gen = os.path.join(tmp, "gen")
        run([args.nnc, "t.nn", "-o", gen, "--emit=all"], tmp, "nnc t.nn", "compile", timeout=120)
        files = os.listdir(gen)
        c_files = sorted(os.path.join(gen, f) for f in files if f.endswith(".c"))
        exe = os.path.join(tmp, "drv")
        cmd = [args.cc, "-std=c11", args.opt, "-Wall", "-Wextra", "-Wpedantic", "-Werror",
               "-I" + args.runtime_include] + ["-I" + d for d in args.include]
        cmd += c_files + [args.runtime_lib, "-lopenblas", "-lm", "-fopenmp", "-o", exe]
        run(cmd, tmp, "gcc", "build", timeout=300)
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        for k, (ins, outs) in enumerate(sets):
            paths = []
            for j, a in enumerate(ins):
                if plan[j] == INIT:
                    continue
                p = os.path.join(tmp, "in%d_%d.npy" % (k, j))
                np.save(p, to_npy(a, elem_types[j]))
                paths.append(p)
            out = os.path.join(tmp, "out%d.npy" % k)
            run([exe, "predict", "--weights", "t.safetensors", "--inputs", ",".join(paths), "--output", out],
                tmp, "predict", "run", timeout=120, env=env)
            got, want = np.load(out), outs[0]
            if got.shape != want.shape:
                raise Fail("mismatch", "data set %d: shape %s, expected %s" % (k, got.shape, want.shape))
            if got.dtype != np.dtype(np.int32 if exact else np.float32):
                raise Fail("mismatch", "data set %d: output dtype %s, expected %s"
                           % (k, got.dtype, "int32" if exact else "float32"))
            want64, got64 = want.astype(np.float64), got.astype(np.float64)
            if exact:  # integers and bools: equal values (int64s beyond i32 differ)
                bad = want.astype(np.int64) != got.astype(np.int64)
            else:
                bad = ~np.isclose(got64, want64, rtol=RTOL, atol=ATOL, equal_nan=True)
            if bad.any():
                i = np.unravel_index(int(np.argmax(bad)), bad.shape)
                raise Fail("mismatch-double" if want.dtype == np.float64 else "mismatch",
                           "data set %d: %d of %d elements differ, first at %s: %r, expected %r"
                           % (k, int(bad.sum()), bad.size, list(i), float(got64[i]), float(want64[i])))
        return "pass", ""
    except Fail as f:
        return f.reason, f.detail
    except Exception as e:  # a harness error is reported, not hidden
        return "harness", "%s: %s" % (type(e).__name__, str(e)[:300])
    finally:
        if args.keep:
            print("kept", tmp, file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def read_expected(path):
    exp = collections.OrderedDict()
    if not os.path.exists(path):
        return exp
    with open(path, encoding="utf-8") as f:
        for line in f:
            body = line.split("#", 1)[0].strip()
            if not body:
                continue
            parts = body.split()
            if len(parts) != 2:
                sys.exit("%s: bad line (want 'GROUP/TEST REASON # note'): %r" % (path, line))
            exp[parts[0]] = parts[1]
    return exp


def write_expected(path, exp_old, results):
    notes = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if "#" in line and line.split("#", 1)[0].strip():
                    notes[line.split()[0]] = line.split("#", 1)[1].strip()
    merged = dict(exp_old)
    for key, (reason, detail) in results.items():
        if reason == "pass":
            merged.pop(key, None)
        else:
            if exp_old.get(key) != reason or key not in notes:  # a hand-written note stays
                notes[key] = detail.replace("\n", " ")[:200]
            merged[key] = reason
    with open(path, "w", encoding="utf-8") as f:
        f.write(HEADER)
        for key in sorted(merged, key=lambda k: (GROUPS.index(k.split("/")[0])
                                                  if k.split("/")[0] in GROUPS else 99, k)):
            note = notes.get(key, "")
            f.write("%s %s%s\n" % (key, merged[key], "  # " + note if note else ""))


HEADER = """\
# ONNX backend tests (Debian libonnx-testdata) that nnc is expected NOT to
# pass, one a line: GROUP/TEST REASON  # what the runner saw.
# tests/onnx_conformance/run_conformance.py fails when a test not listed
# here fails, when a listed one fails for another reason, or when a listed
# one passes.  Reasons (README.md has the list):
#   unsupported-op:OP   the op (at the model's opset) is not in compiler/onnx_ops.def
#   multiple-outputs    the graph has several outputs; a model has one
#   output-type         the output is a string, bfloat16, uint64, ... tensor; a model's is f32 or i32
#   opset-convert       onnx.version_converter cannot upgrade the model to opset 13
#   import-unsupported  nnc import: an attribute or input the mapping does not cover (exit 1)
#   import-malformed    nnc import: shapes it refuses, e.g. the batch axis used as a number (exit 2)
#   import-compile      the imported source does not compile
#   needs-primitive:P   ... because the language has no primitive P (yet)
#   compile / build / run / mismatch / timeout   a later stage failed
#   mismatch-double     a mismatch of a test in double precision (values beyond float's range)
#   non-tensor-io       an input or output is a sequence or an optional
#   no-model            the directory has no model.onnx (data/real)
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nnc", required=True)
    ap.add_argument("--runtime-include", required=True)
    ap.add_argument("--runtime-lib", required=True)
    ap.add_argument("--include", action="append", default=[])
    ap.add_argument("--data", required=True)
    ap.add_argument("--expected", required=True)
    ap.add_argument("--ops", required=True, help="compiler/onnx_ops.def")
    ap.add_argument("--subset", help="a file of GROUP/TEST lines: run only those")
    ap.add_argument("--filter", help="a regex on GROUP/TEST: run only those")
    ap.add_argument("--every", type=int, default=1,
                    help="run every Kth node test (in name order) and every test of the other groups")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--opt", default="-O0")
    ap.add_argument("--update", action="store_true", help="rewrite --expected from this run")
    ap.add_argument("--report", help="write every test's result here")
    ap.add_argument("--keep", action="store_true", help="keep each test's directory")
    args = ap.parse_args()
    for a in ("nnc", "runtime_include", "runtime_lib", "data", "expected"):
        setattr(args, a, os.path.abspath(getattr(args, a)))
    args.ops = supported_ops(args.ops)
    args.include = [os.path.abspath(d) for d in args.include]

    if not os.path.isdir(os.path.join(args.data, "node")):
        print("skipped: no ONNX test data at %s (Debian: libonnx-testdata)" % args.data)
        return 77
    tests = []
    for g in GROUPS:
        gdir = os.path.join(args.data, g)
        if os.path.isdir(gdir):
            tests += ["%s/%s" % (g, t) for t in sorted(os.listdir(gdir)) if os.path.isdir(os.path.join(gdir, t))]
    if args.subset:
        with open(args.subset, encoding="utf-8") as f:
            want = [l.split("#", 1)[0].strip() for l in f]
        want = [w for w in want if w]
        missing = [w for w in want if w not in tests]
        if missing:
            print("FAIL: the subset names tests the data lacks: %s" % " ".join(missing[:10]))
            return 1
        tests = want
    if args.every > 1:
        node = [t for t in tests if t.startswith("node/")]
        keep = set(node[::args.every])
        tests = [t for t in tests if not t.startswith("node/") or t in keep]
    if args.filter:
        tests = [t for t in tests if re.search(args.filter, t)]

    t0 = time.time()
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futs = {pool.submit(run_test, t.split("/")[0], t.split("/")[1], args): t for t in tests}
        for fut in concurrent.futures.as_completed(futs):
            results[futs[fut]] = fut.result()
    elapsed = time.time() - t0

    expected = read_expected(args.expected)
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            for t in tests:
                f.write("%s %s  %s\n" % (t, results[t][0], results[t][1]))

    # the numbers, by group and by reason
    by_group = collections.OrderedDict()
    reasons, details = collections.Counter(), collections.Counter()
    for t in tests:
        g = t.split("/")[0]
        r = results[t][0]
        st = by_group.setdefault(g, [0, 0])
        st[1] += 1
        if r == "pass":
            st[0] += 1
        else:
            reasons[r.split(":")[0]] += 1
            if ":" in r:
                details[r] += 1
    print("ONNX conformance: %d tests in %.0f s (%d jobs)" % (len(tests), elapsed, args.jobs))
    for g, (p, n) in by_group.items():
        print("  %-18s %4d of %4d pass" % (g, p, n))
    print("failures by reason:")
    for r, n in reasons.most_common():
        print("  %4d  %s" % (n, r))
    print("the ops and primitives among them:")
    for r, n in details.most_common():
        print("  %4d  %s" % (n, r))

    if args.update:
        write_expected(args.expected, expected, results)
        print("wrote", args.expected)
        return 0

    problems = []
    for t in tests:
        r, detail = results[t]
        want = expected.get(t)
        if r == "pass" and want is not None:
            problems.append("%s passes but %s lists it (%s): remove the line" % (t, args.expected, want))
        elif r != "pass" and want is None:
            problems.append("%s fails (%s): %s" % (t, r, detail))
        elif r != "pass" and want != r:
            problems.append("%s fails for %s, listed as %s: %s" % (t, r, want, detail))
    for p in problems:
        print("FAIL:", p)
    if problems:
        print("%d problems; rerun with --update to accept the run (after checking each)" % len(problems))
        return 1
    print("ok: every test passes or fails as %s says" % os.path.basename(args.expected))
    return 0


if __name__ == "__main__":
    sys.exit(main())
