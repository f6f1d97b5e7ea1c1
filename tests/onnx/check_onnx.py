#!/usr/bin/python3
"""`nnc import`'s reader (compiler/onnx.c), checked against the onnx package.

    check_onnx.py hostile NNC        broken and hostile files: exit 2, one line
                                     naming the file and the problem, nothing written;
                                     then files the reader accepts that fold or lift
                                     refuse (exit 2 or 1, one line) or import
    check_onnx.py corpus NNC DATA    every model.onnx of DATA/node and
                                     DATA/pytorch-converted: --dump=onnx prints
                                     what onnx.load reads, or nnc rejects the file
                                     for a reason computed here from onnx.load
    check_onnx.py replay REPLAY      the hostile files through REPLAY, the fuzz
                                     target (the whole import) under ASan and UBSan
                                     (tests/fuzz: fuzz_onnx_regress)
    check_onnx.py cli NNC            usage errors (exit 1), the unsupported-op
                                     error, NAME's default (the stem rule)
    check_onnx.py off NNC            an nnc built with NNC_ONNX=OFF: `import`
                                     says so in one line, exit 1

Every expected value comes from the onnx package (onnx.load, numpy_helper)
or is written here by hand, never from nnc.  The dump's format is the
reader's contract (docs/import.md); `expected_dump` renders a model in it
from onnx's own reading, and the test compares nnc's dump byte for byte.
Exits 77 (ctest: skipped) when the onnx package or the data is missing.
"""
import glob
import heapq
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # pragma: no cover
    print(f"skipped: the onnx Python package is missing ({e}; Debian: python3-onnx)")
    sys.exit(77)

OPSET_MIN, OPSET_MAX = 13, 17
MAX_ELEMENTS = 2**31 - 1
NAME_SHOWN = 80
DUMP_VALUES, DUMP_HEAD = 16, 4
SUPPORTED = {"float", "double", "float16", "bfloat16", "uint8", "int8", "uint16", "int16", "int32", "uint32",
             "int64", "bool"}
FLOATS = {"float", "double", "float16", "bfloat16"}
TYPE_NAMES = ["undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64", "string", "bool",
              "float16", "double", "uint32", "uint64", "complex64", "complex128", "bfloat16"]
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(nnc, *args):
    r = subprocess.run([nnc, *args], capture_output=True, timeout=120)
    return r.returncode, r.stdout, r.stderr.decode("utf-8", "replace")


# ---- the dump's format, rendered from onnx's reading ------------------------

def esc(b, limit=None):
    """Bytes escaped as the reader escapes them: control bytes and DEL as
    \\xHH, backslash and quote with a backslash; over `limit` bytes cut
    with '...'."""
    if isinstance(b, str):
        b = b.encode("utf-8")
    out = bytearray()
    for i, c in enumerate(b):
        if limit is not None and i == limit:
            out += b"..."
            break
        if c < 0x20 or c == 0x7F:
            out += b"\\x%02x" % c
        elif c in (0x5C, 0x27):
            out += b"\\" + bytes([c])
        else:
            out.append(c)
    return bytes(out)


def quoted(b):
    return b"'" + esc(b) + b"'"


def word(b):
    return esc(b, NAME_SHOWN)


def type_name(t):
    if t == 0:
        return b"?"
    return TYPE_NAMES[t].encode() if t < len(TYPE_NAMES) else b"type%d" % t


def fmt_float(v):
    v = float(np.float32(v))
    return b"nan" if v != v else (b"%.9g" % v)


def value_line(vi):
    t = vi.type
    if not t.HasField("tensor_type"):
        return quoted(vi.name) + b": ? (no shape)"
    tt = t.tensor_type
    s = quoted(vi.name) + b": " + type_name(tt.elem_type)
    if not tt.HasField("shape"):
        return s + b" (no shape)"
    dims = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            dims.append(b"%d" % d.dim_value)
        elif d.HasField("dim_param"):
            dims.append(word(d.dim_param))
        else:
            dims.append(b"?")
    return s + b"[" + b", ".join(dims) + b"]"


def tensor_values(t):
    """The elements as onnx reads them: floats as float32, ints as ints."""
    name = TYPE_NAMES[t.data_type]
    if name == "bfloat16":  # numpy has no bfloat16: the top 16 bits of a float32
        if t.HasField("raw_data"):
            bits = np.frombuffer(t.raw_data, dtype="<u2").astype(np.uint32)
        else:
            bits = np.asarray(t.int32_data, dtype=np.uint32)
        return (bits << 16).view(np.float32).tolist()
    a = numpy_helper.to_array(t).reshape(-1)
    if name in FLOATS:
        with np.errstate(over="ignore"):
            return a.astype(np.float32).tolist()
    return [int(x) for x in a]


def tensor_text(t):
    name = TYPE_NAMES[t.data_type] if t.data_type < len(TYPE_NAMES) else None
    s = type_name(t.data_type) + b"[" + b", ".join(b"%d" % d for d in t.dims) + b"]"
    if name not in SUPPORTED:
        return s + b" (not read)"
    vals = tensor_values(t)
    if not vals:
        return s
    shown = vals if len(vals) <= DUMP_VALUES else vals[:DUMP_HEAD]
    f = fmt_float if name in FLOATS else (lambda v: b"%d" % v)
    return s + b" = [" + b", ".join(f(v) for v in shown) + (b", ...]" if len(shown) < len(vals) else b"]")


ATTR_KINDS = {1: "float", 2: "int", 3: "string", 4: "tensor", 5: "graph", 6: "floats", 7: "ints", 8: "strings",
              9: "tensors", 10: "graphs", 11: "sparse_tensor", 12: "sparse_tensors", 13: "type_proto",
              14: "type_protos"}


def attr_kind(a):
    if a.type:
        return ATTR_KINDS[a.type]
    # IR version 1 had no type: the field set says it
    for field, kind in (("f", "float"), ("i", "int"), ("s", "string"), ("t", "tensor"), ("g", "graph"),
                        ("sparse_tensor", "sparse_tensor"), ("tp", "type_proto")):
        if a.HasField(field):
            return kind
    for field, kind in (("floats", "floats"), ("ints", "ints"), ("strings", "strings"), ("tensors", "tensors"),
                        ("graphs", "graphs"), ("sparse_tensors", "sparse_tensors"), ("type_protos", "type_protos")):
        if len(getattr(a, field)):
            return kind
    return None


def attr_line(a):
    kind = attr_kind(a)
    s = b"  " + quoted(a.name) + b" " + kind.encode()
    if kind == "float":
        return s + b" " + fmt_float(a.f)
    if kind == "int":
        return s + b" %d" % a.i
    if kind == "string":
        return s + b" " + quoted(a.s)
    if kind == "tensor":
        return s + b" " + tensor_text(a.t)
    if kind == "graph":
        return s + b" (%d nodes)" % len(a.g.node)
    if kind == "floats":
        return s + b" [" + b", ".join(fmt_float(v) for v in a.floats) + b"]"
    if kind == "ints":
        return s + b" [" + b", ".join(b"%d" % v for v in a.ints) + b"]"
    if kind == "strings":
        return s + b" [" + b", ".join(quoted(v) for v in a.strings) + b"]"
    n = {"tensors": len(a.tensors), "graphs": len(a.graphs), "sparse_tensors": len(a.sparse_tensors),
         "type_protos": len(a.type_protos), "sparse_tensor": 1, "type_proto": 1}[kind]
    return s + b" (%d)" % n


def topological(nodes):
    """The nodes in the order docs/import.md gives: of the nodes whose inputs
    are all defined, the first in the file goes first (Kahn's algorithm)."""
    producer = {o: k for k, n in enumerate(nodes) for o in n.output if o}
    indeg = [sum(1 for i in n.input if i and i in producer) for n in nodes]
    users = {}
    for k, n in enumerate(nodes):
        for i in n.input:
            if i and i in producer:
                users.setdefault(producer[i], []).append(k)
    ready = [k for k in range(len(nodes)) if not indeg[k]]
    heapq.heapify(ready)
    order = []
    while ready:
        k = heapq.heappop(ready)
        order.append(k)
        for u in users.get(k, []):
            indeg[u] -= 1
            if not indeg[u]:
                heapq.heappush(ready, u)
    return order


def expected_dump(m, path, header):
    g = m.graph
    init_names = {t.name for t in g.initializer}
    lines = [header, b"onnx " + quoted(path) + b": ir_version %d, producer " % m.ir_version + quoted(m.producer_name)
             + b" " + quoted(m.producer_version) + b", graph " + quoted(g.name)]
    for o in m.opset_import:
        lines.append(b"opset " + word(o.domain if o.domain not in ("", "ai.onnx") else "ai.onnx")
                     + b" %d" % o.version)
    lines += [b"input " + value_line(vi) for vi in g.input if vi.name not in init_names]
    lines += [b"output " + value_line(vi) for vi in g.output]
    lines += [b"initializer " + quoted(t.name) + b": " + tensor_text(t) for t in g.initializer]
    for k in topological(list(g.node)):
        n = g.node[k]
        dom = b"" if n.domain in ("", "ai.onnx") else word(n.domain) + b"."
        s = b"node #%d " % k + quoted(n.name) + b" " + dom + word(n.op_type) + b":"
        s += b"".join((b", " if j else b" ") + quoted(i) for j, i in enumerate(n.input))
        s += b" ->" + b"".join((b", " if j else b" ") + quoted(o) for j, o in enumerate(n.output))
        lines.append(s)
        lines += [attr_line(a) for a in n.attribute]
    lines += [b"value_info " + value_line(vi) for vi in g.value_info]
    return b"\n".join(lines) + b"\n"


# ---- why a file of the corpus may be refused, from onnx's reading -----------

def reasons(m):
    """Regexes of the messages nnc may give this model, each a reason the
    import's contract (docs/import.md) gives for refusing it; [] when it
    must load."""
    out = []
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx") and not OPSET_MIN <= o.version <= OPSET_MAX:
            out.append(rf"opset {o.version} of ai\.onnx is not supported: nnc imports opsets 13 to 17")
    g = m.graph
    inits = {t.name for t in g.initializer}
    for t in g.initializer:
        name = TYPE_NAMES[t.data_type] if t.data_type < len(TYPE_NAMES) else str(t.data_type)
        if name not in SUPPORTED:
            out.append(rf"initializer '{re.escape(t.name)}': element type {name} is not supported")
        if t.data_location == TensorProto.EXTERNAL or len(t.external_data):
            out.append(r"external data is not supported")
    if len(g.sparse_initializer):
        out.append(r"sparse initializers are not supported")
    for vi in g.input:
        if vi.name in inits:
            continue
        q = re.escape(vi.name)
        kind = vi.type.WhichOneof("value")
        if kind != "tensor_type":
            out.append(rf"input '{q}' (is an? [a-z ]+, not a tensor|has no type)")
            continue
        tt = vi.type.tensor_type
        name = TYPE_NAMES[tt.elem_type] if tt.elem_type < len(TYPE_NAMES) else str(tt.elem_type)
        if name not in SUPPORTED:
            out.append(rf"input '{q}': element type {name} is not supported")
        if not tt.HasField("shape"):
            out.append(rf"input '{q}' has no shape")
        elif any(not d.HasField("dim_value") for d in tt.shape.dim[1:]):
            out.append(rf"input '{q}' has a dynamic shape that is not the batch")
    return out


def check_loads(nnc, path, m, what):
    """nnc's dump of `path` is expected_dump(m)."""
    rc, out, err = run(nnc, "import", path, "--dump=onnx")
    if rc != 0:
        fail(f"{what}: exit {rc}, expected 0: {err.strip()}")
        return False
    want = expected_dump(m, path, b"import as model (model Model), loss none") if path.endswith(
        "/model.onnx") else None
    if want is None:  # the header names the file's stem: not compared here
        out = out.split(b"\n", 1)[1]
        want = expected_dump(m, path, b"").split(b"\n", 1)[1]
    if out != want:
        got, exp = out.split(b"\n"), want.split(b"\n")
        k = next((i for i in range(min(len(got), len(exp))) if got[i] != exp[i]), min(len(got), len(exp)))
        fail(f"{what}: the dump differs from onnx's reading at line {k + 1}:\n"
             f"  nnc:  {got[k] if k < len(got) else b'(end)'!r}\n  onnx: {exp[k] if k < len(exp) else b'(end)'!r}")
        return False
    return True


def check_refused(nnc, path, expect, what, counts):
    rc, out, err = run(nnc, "import", path, "--dump=onnx")
    lines = err.splitlines()
    prefix = f"nnc: error: {path}: "
    if rc != 2 or len(lines) != 1 or not lines[0].startswith(prefix):
        fail(f"{what}: expected exit 2 and one line '{prefix}...', got exit {rc}: {err!r}")
        return
    msg = lines[0][len(prefix):]
    hit = next((r for r in expect if re.search(r, msg)), None)
    if not hit:
        fail(f"{what}: refused as '{msg}', not for a reason onnx shows: {expect}")
        return
    if out:
        fail(f"{what}: refused, but printed a dump")
    key = re.sub(r"'[^']*'", "'…'", re.sub(r"\d+", "N", msg))
    counts[key] = counts.get(key, 0) + 1


def corpus(nnc, data):
    files = sorted(glob.glob(os.path.join(data, "node", "*", "model.onnx")) +
                   glob.glob(os.path.join(data, "pytorch-converted", "*", "model.onnx")))
    if not files:
        print(f"skipped: no model.onnx under {data}/node or {data}/pytorch-converted (Debian: libonnx-testdata)")
        return 77
    counts, loaded, restamped = {}, 0, 0
    work = tempfile.mkdtemp(prefix="nnc-onnx-")
    try:
        for f in files:
            what = os.path.relpath(f, data)
            m = onnx.load(f, load_external_data=False)
            why = reasons(m)
            if why:
                check_refused(nnc, f, why, what, counts)
            elif check_loads(nnc, f, m, what):
                loaded += 1
            # an opset outside 13..17 hides the rest: the same model stamped
            # with opset 13 must load, or be refused for another reason
            stamped = False
            for o in m.opset_import:
                if o.domain in ("", "ai.onnx") and not OPSET_MIN <= o.version <= OPSET_MAX:
                    o.version, stamped = 13, True
            if not stamped:
                continue
            d = os.path.join(work, what.replace("/", "_")[:-len("_model.onnx")])
            os.makedirs(d)
            p = os.path.join(d, "model.onnx")
            onnx.save(m, p)
            why = reasons(m)
            if why:
                check_refused(nnc, p, why, what + " (opset 13)", counts)
            elif check_loads(nnc, p, m, what + " (opset 13)"):
                restamped += 1
    finally:
        shutil.rmtree(work)
    print(f"{len(files)} files: {loaded} load as onnx reads them; {restamped} more load stamped with opset 13")
    print("refused, by reason:")
    for k, v in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"  {v:4d}  {k}")
    return 0


# ---- hostile files ------------------------------------------------------------

def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def ld(field, payload):
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def base_model(opset=13, x_shape=("N", 4), inits=None, nodes=None, outputs=None, inputs=None):
    """x: f32[N, 4] -> MatMul W [4, 3] -> Add B [3] -> y"""
    if inits is None:
        inits = [numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3), "W"),
                 numpy_helper.from_array(np.array([0.5, -1, 2], dtype=np.float32), "B")]
    if nodes is None:
        nodes = [helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
                 helper.make_node("Add", ["h", "B"], ["y"], name="add")]
    if inputs is None:
        inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))]
    if outputs is None:
        outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])]
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def hostile_cases():
    ok = base_model().SerializeToString()
    cases = []

    def add(name, data, pattern):
        cases.append((name, data if isinstance(data, bytes) else data.SerializeToString(), pattern))

    add("truncated", ok[: len(ok) // 2], r"not an ONNX model \(truncated, or not protobuf\): at byte \d+, "
        r"a field runs past the end of the file")
    add("truncated_last_byte", ok[:-1], r"not an ONNX model \(truncated, or not protobuf\)")
    add("garbage", bytes((i * 97 + 13) % 256 for i in range(300)), r"not an ONNX model \(truncated, or not protobuf\)")
    add("text", b"this is not an ONNX model\n" * 4, r"not an ONNX model")
    add("empty", b"", r"empty file, not an ONNX model")
    add("no_graph", varint(1 << 3) + varint(8), r"no graph: not an ONNX model")
    # 100,000 TypeProtos nested in one input's type: protobuf-c recurses
    # (TypeProto.sequence_type, then Sequence.elem_type: the headers, from
    # the innermost out, then reversed)
    heads, n = [], 0
    for _ in range(100000):
        h = b"\x0a" + varint(n)
        n += len(h)
        heads.append(h)
        h = b"\x22" + varint(n)
        n += len(h)
        heads.append(h)
    t = b"".join(reversed(heads))
    add("deep_nesting", varint(1 << 3) + varint(8) + ld(7, ld(11, ld(1, b"x") + ld(2, t))),
        r"at byte \d+, messages nest more than 64 deep")
    # 2,000,000 empty attributes of one node: 4 MB that protobuf-c would
    # unpack into half a gigabyte
    node = b"\x2a\x00" * 2_000_000
    add("memory_bomb", varint(1 << 3) + varint(8) + ld(7, ld(1, node)), r"reading it would take more than \d+ MiB, the limit for a file of this size")

    m = base_model()
    del m.graph.initializer[1]
    add("missing_initializer", m, r"node 'add' \(Add\) reads 'B', which no input, initializer or node output defines")
    add("cycle", base_model(nodes=[helper.make_node("Add", ["x", "t2"], ["t1"], name="a"),
                                   helper.make_node("Relu", ["t1"], ["t2"], name="b"),
                                   helper.make_node("Relu", ["t2"], ["y"], name="c")]),
        r"the nodes form a cycle: node 'a' \(Add\) -> node 'b' \(Relu\) -> node 'a' \(Add\)")
    add("self_loop", base_model(nodes=[helper.make_node("Add", ["x", "y"], ["y"], name="s")]),
        r"the nodes form a cycle: node 's' \(Add\) -> node 's' \(Add\)")
    long = "n" * 200
    add("long_cycle", base_model(nodes=[helper.make_node("Relu", [f"t{(k + 7) % 8}"], [f"t{k}"], name=f"{long}{k}")
                                        for k in range(8)] + [helper.make_node("Relu", ["x"], ["y"])]),
        r"the nodes form a cycle: node 'n{80}\.\.\.' \(Relu\)( -> node 'n{80}\.\.\.' \(Relu\)){3} -> \.\.\. -> "
        r"node 'n{80}\.\.\.' \(Relu\)$")
    add("opset_12", base_model(opset=12), r"opset 12 of ai\.onnx is not supported: nnc imports opsets 13 to 17")
    add("opset_18", base_model(opset=18), r"opset 18 of ai\.onnx is not supported: nnc imports opsets 13 to 17")
    m = base_model()
    del m.opset_import[:]
    add("no_opset", m, r"no opset import of ai\.onnx, the default domain")
    m = base_model()
    m.graph.node[0].domain = "com.example"
    add("domain_without_opset", m, r"node 'mm' \(com\.example\.MatMul\) is in domain 'com\.example', "
        r"which the model imports no opset of")
    add("dynamic_axis_1", base_model(x_shape=("N", "K")),
        r"input 'x' has a dynamic shape that is not the batch: axis 1 is 'K'")
    add("unknown_axis_1", base_model(x_shape=(1, None)),
        r"input 'x' has a dynamic shape that is not the batch: axis 1 is unknown")
    m = base_model()
    m.graph.input[0].type.tensor_type.ClearField("shape")
    add("input_without_shape", m, r"input 'x' has no shape")
    m = base_model()
    m.graph.initializer[0].raw_data = m.graph.initializer[0].raw_data[:40]
    add("raw_data_short", m, r"initializer 'W': raw_data holds 40 bytes, float\[4, 3\] needs 48")
    m = base_model()
    m.graph.initializer[0].raw_data += b"\0\0\0\0"
    add("raw_data_long", m, r"initializer 'W': raw_data holds 52 bytes, float\[4, 3\] needs 48")
    m = base_model(inits=[helper.make_tensor("W", TensorProto.FLOAT, [4, 3], [1.0] * 12),
                          helper.make_tensor("B", TensorProto.FLOAT, [3], [0.0] * 3)])
    del m.graph.initializer[0].float_data[11]
    add("float_data_short", m, r"initializer 'W': float_data holds 11 values, float\[4, 3\] needs 12")
    m = base_model(inits=[helper.make_tensor("W", TensorProto.FLOAT, [4, 3], [1] * 12),
                          helper.make_tensor("B", TensorProto.FLOAT, [3], [0.0] * 3)])
    m.graph.initializer[0].int64_data.extend([1])
    add("wrong_typed_field", m, r"initializer 'W': a float tensor with data in int64_data")
    m = base_model()
    w = m.graph.initializer[0]
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    e = w.external_data.add()
    e.key, e.value = "location", "weights.bin"
    add("external_data", m, r"initializer 'W': external data is not supported")
    m = base_model()
    m.graph.initializer[0].dims[:] = [1 << 40, 1 << 40]
    add("huge_initializer_dims", m, r"initializer 'W' has dims \[1099511627776, 1099511627776\]: "
        r"more than 2147483647 elements")
    m = base_model()
    m.graph.initializer[0].dims[:] = [100000, 100000]
    add("large_initializer_dims", m, r"initializer 'W' has dims \[100000, 100000\]: more than 2147483647 elements")
    m = base_model()
    m.graph.initializer[0].dims[:] = [-4, -3]
    add("negative_dims", m, r"initializer 'W' has a negative dim: \[-4, -3\]")
    add("huge_input_dims", base_model(x_shape=("N", 10**12)),
        r"input 'x': an example has more than 2147483647 elements")
    add("input_rank_17", base_model(x_shape=[1] * 17), r"input 'x' has 17 dims, more than 16")
    add("string_initializer", base_model(inits=[helper.make_tensor("W", TensorProto.STRING, [2], [b"a", b"b"]),
                                                numpy_helper.from_array(np.zeros(3, np.float32), "B")]),
        r"initializer 'W': element type string is not supported")
    add("complex_input", base_model(inputs=[helper.make_tensor_value_info("x", TensorProto.COMPLEX64, [1, 4])]),
        r"input 'x': element type complex64 is not supported")
    add("sequence_input", base_model(inputs=[helper.make_tensor_sequence_value_info("x", TensorProto.FLOAT, [4])]),
        r"input 'x' is a sequence, not a tensor")
    add("defined_twice", base_model(nodes=[helper.make_node("MatMul", ["x", "W"], ["y"], name="mm"),
                                           helper.make_node("Add", ["x", "B"], ["y"], name="add")]),
        r"'y' is defined twice: by node 'mm' \(MatMul\) and by node 'add' \(Add\)")
    add("undefined_output", base_model(outputs=[helper.make_tensor_value_info("z", TensorProto.FLOAT, [1])]),
        r"graph output 'z' is not defined by any input, initializer or node")
    m = base_model()
    m.graph.node[0].attribute.extend([helper.make_attribute("k", 1), helper.make_attribute("k", 2)])
    add("attribute_twice", m, r"node 'mm' \(MatMul\) has two attributes named 'k'")
    add("uint8_out_of_range", base_model(inits=[
        helper.make_tensor("W", TensorProto.FLOAT, [4, 3], [1.0] * 12),
        helper.make_tensor("B", TensorProto.UINT8, [3], [1, 2, 300])]),
        r"initializer 'B': int32_data holds 300, out of uint8's range")
    # a name with a newline and an escape: still one line
    m = base_model()
    m.graph.node[1].input[1] = "B\nnnc: error: forged"
    add("newline_in_name", m, r"node 'add' \(Add\) reads 'B\\x0annc: error: forged', which no input")
    return cases


def import_cases():
    """Files the reader accepts that fold or lift must refuse (or import):
    (name, bytes, exit status, regex of the message after 'PATH: ').  Exit 2
    is a file that is not valid ONNX (shapes or types that do not agree, a
    shape dynamic beyond the batch); exit 1 a valid one nnc cannot express
    (docs/import.md, "Errors"); exit 0 a file that imports."""
    F, I64 = TensorProto.FLOAT, TensorProto.INT64
    node = helper.make_node

    def i64(name, v):
        return numpy_helper.from_array(np.array(v, dtype=np.int64), name)

    def f32(name, v):
        return numpy_helper.from_array(np.array(v, dtype=np.float32), name)

    def vi(name, t, shape):
        return helper.make_tensor_value_info(name, t, shape)

    W = f32("W", np.arange(12).reshape(4, 3))
    y4 = [vi("y", F, ["N", 4])]
    x4 = [vi("x4", F, ["N", 2, 4, 4])]
    cases = []

    def add(name, model, rc, pattern):
        cases.append((name, model.SerializeToString(), rc, pattern))

    def m(nodes, inits=(), outputs=None, inputs=None, opset=13):
        return base_model(opset=opset, inits=list(inits), nodes=nodes, outputs=outputs, inputs=inputs)

    # shapes dynamic beyond the batch: N * N, and a target computed at run time
    add("batch_squared", m([node("Shape", ["x"], ["s"]), node("Gather", ["s", "i0"], ["n"]),
                            node("Mul", ["n", "n"], ["nn"], name="sq"), node("Unsqueeze", ["nn", "a0"], ["t"]),
                            node("Concat", ["t", "m1"], ["sh"], axis=0), node("Reshape", ["x", "sh"], ["y"])],
                           [i64("i0", 0), i64("a0", [0]), i64("m1", [-1])], y4),
        2, r"^node 'sq' \(Mul\): a shape that is dynamic beyond the batch$")
    add("reshape_runtime_target", m([node("Reshape", ["x", "r"], ["y"], name="rs")], outputs=y4,
                                    inputs=[vi("x", F, ["N", 4]), vi("r", I64, [2])]),
        2, r"^node 'rs' \(Reshape\): a shape that is dynamic beyond the batch: 'r' is known only at run time$")
    # shapes and types that do not agree
    add("matmul_mismatch", m([node("MatMul", ["x", "W"], ["y"], name="mm")], [f32("W", np.zeros((5, 3)))]),
        2, r"^node 'mm' \(MatMul\): MatMul of \[N, 4\] and \[5, 3\]$")
    add("add_mismatch", m([node("MatMul", ["x", "W"], ["h"]), node("Add", ["h", "B"], ["y"], name="add")],
                          [W, f32("B", [1, 2, 3, 4])]),
        2, r"^node 'add' \(Add\): shapes \[N, 3\] and \[4\] do not broadcast$")
    # (fuzz_onnx found these two: tests/fuzz/regress/fuzz_onnx/add_float_int_input.onnx)
    add("add_float_int", m([node("MatMul", ["x", "W"], ["h"]), node("Add", ["h", "B"], ["y"], name="add")],
                           [W, i64("B", [1, 2, 3])]),
        2, r"^node 'add' \(Add\): Add of float and int64: its operands have one element type$")
    add("add_float_int_input", m([node("MatMul", ["x", "W"], ["h"]), node("Add", ["h", "b"], ["y"], name="add")],
                                 [W], inputs=[vi("x", F, ["N", 4]), vi("b", TensorProto.INT32, [3])]),
        2, r"^node 'add' \(Add\): Add of float and int32")
    add("where_int_float", m([node("Equal", ["x", "x"], ["c"]), node("Where", ["c", "B", "x"], ["y"], name="w")],
                             [i64("B", [1, 2, 3, 4])], y4),
        2, r"^node 'w' \(Where\): Where of int64 and float")
    add("reshape_two_minus_one", m([node("Reshape", ["x", "sh"], ["y"], name="rs")], [i64("sh", [-1, -1])], y4),
        2, r"^node 'rs' \(Reshape\): reshape has two -1 axes$")
    add("reshape_negative", m([node("Reshape", ["x", "sh"], ["y"], name="rs")], [i64("sh", [-2, 4])], y4),
        2, r"^node 'rs' \(Reshape\): reshape to a negative size$")
    add("transpose_perm_length", m([node("Transpose", ["x"], ["y"], perm=[1, 0, 2], name="tr")],
                                   outputs=[vi("y", F, [4, "N"])]),
        2, r"^node 'tr' \(Transpose\): perm has 3 axes for rank 2$")
    add("transpose_perm_floats", m([node("Transpose", ["x"], ["y"], perm=[1.0, 0.0], name="tr")],
                                   outputs=[vi("y", F, [4, "N"])]),
        2, r"^node 'tr' \(Transpose\): attribute 'perm' is of kind floats, not ints$")
    add("concat_axis", m([node("Concat", ["x", "x"], ["y"], axis=2, name="cat")], outputs=[vi("y", F, ["N", 8])]),
        2, r"^node 'cat' \(Concat\): axis 2 is out of range for rank 2$")
    add("gather_shape_out_of_range", m([node("Shape", ["x"], ["s"]), node("Gather", ["s", "i5"], ["n"], name="g"),
                                        node("Unsqueeze", ["n", "a0"], ["t"]),
                                        node("Concat", ["t", "m1"], ["sh"], axis=0),
                                        node("Reshape", ["x", "sh"], ["y"])],
                                       [i64("i5", 5), i64("a0", [0]), i64("m1", [-1])], y4),
        2, r"^node 'g' \(Gather\): index 5 out of range for 2$")
    # (fuzz_onnx found it: tests/fuzz/regress/fuzz_onnx/gather_table_out_of_range.onnx)
    add("gather_table_out_of_range", m([node("Gather", ["P", "i3"], ["p"], name="g"), node("Add", ["x", "p"], ["y"])],
                                       [f32("P", np.zeros((2, 4))), i64("i3", [0, 1, 2])],
                                       outputs=[vi("y", F, ["N", 3, 4])], inputs=[vi("x", F, ["N", 3, 4])]),
        2, r"^node 'g' \(Gather\): index 2 out of range for 2$")
    add("gather_float_indices", m([node("Shape", ["x"], ["s"]), node("Gather", ["s", "fi"], ["n"], name="g"),
                                   node("Relu", ["x"], ["y"])], [f32("fi", 0)], y4),
        2, r"^node 'g' \(Gather\): Gather's indices are float, not int32 or int64$")
    # sizes past int64, past the language's 2^31 - 1 elements, negative
    add("reshape_overflow", m([node("Reshape", ["x", "sh"], ["y"], name="rs")],
                              [i64("sh", [0, 2**40, 2**40, 2**40, -1])], y4),
        2, r"^node 'rs' \(Reshape\): an integer overflows 64 bits$")
    add("expand_huge", m([node("Unsqueeze", ["x", "a12"], ["u"]), node("Expand", ["u", "sh"], ["y"], name="ex")],
                         [i64("a12", [1, 2]), i64("sh", [1, 2**30, 2**30, 4])], y4),
        2, r"^node 'ex' \(Expand\): 'y' of shape \[N, 1073741824, 1073741824, 4\]: more than 2147483647 elements "
           r"per example$")
    add("constant_of_shape_overflow", m([node("ConstantOfShape", ["sh"], ["c"], name="cs"),
                                         node("Add", ["x", "c"], ["y"])], [i64("sh", [2**32, 2**32, 4])]),
        2, r"^node 'cs' \(ConstantOfShape\): a constant of more than 16777216 elements$")
    add("constant_of_shape_negative", m([node("ConstantOfShape", ["sh"], ["c"], name="cs"),
                                         node("Add", ["x", "c"], ["y"])], [i64("sh", [-1, 4])]),
        2, r"^node 'cs' \(ConstantOfShape\): a constant with a negative axis, -1$")
    add("pad_huge", m([node("Pad", ["x", "p"], ["y"], name="pad")], [i64("p", [0, 2**62, 0, 2**62])]),
        2, r"^node 'pad' \(Pad\): Pad of more than 2147483647$")
    add("conv_huge_stride", m([node("Conv", ["x4", "w"], ["y"], strides=[2**62, 2**62], name="conv",
                                    pads=[2**62, 0, 2**62, 0])], [f32("w", np.zeros((2, 2, 1, 1)))], x4, x4),
        2, r"^node 'conv' \(Conv\): a window size, stride, dilation or pad out of range$")
    add("range_nan", m([node("Range", ["a", "b", "d"], ["r"], name="rg"), node("Relu", ["x"], ["y"])],
                       [f32("a", 0), f32("b", np.nan), f32("d", 1)], y4),
        2, r"^node 'rg' \(Range\): Range of nan elements$")
    add("split_without_outputs", m([node("Split", ["x"], [], axis=1, name="sp"), node("Relu", ["x"], ["y"])],
                                   outputs=y4),
        2, r"^node 'sp' \(Split\): Split without outputs$")
    add("dropout_ratio", m([node("Dropout", ["x", "r", "t"], ["y"], name="do")],
                           [f32("r", 1.5), numpy_helper.from_array(np.array(True), "t")], y4),
        2, r"^node 'do' \(Dropout\): Dropout ratio 1\.5, not in \[0, 1\)$")
    # valid ONNX that nnc cannot express: exit 1
    add("empty_graph", m([], outputs=[], inputs=[]), 1, r"^model with 0 outputs \(nnc models have one\)$")
    add("two_outputs", m([node("Relu", ["x"], ["y"]), node("Relu", ["x"], ["z"])],
                         outputs=[vi("y", F, ["N", 4]), vi("z", F, ["N", 4])]),
        1, r"^model with 2 outputs \(nnc models have one\)$")
    add("unknown_op", m([node("Frobnicate", ["x"], ["y"], name="f")]),
        1, r"^unsupported op Frobnicate \(ai\.onnx opset 13\) at node 'f'$")
    # a fixed batch is a fixed-shape model (it imports); a batched input
    # with an output that lost the batch is not
    add("batch_reduced", m([node("ReduceMean", ["x"], ["y"], axes=[0])], outputs=[vi("y", F, [1, 4])]),
        1, r"^model whose output has the shape \[1, 4\]: a model's output has the batch N as its first axis")
    add("integer_arithmetic", m([node("Add", ["xi", "xi"], ["s"], name="add"), node("Cast", ["s"], ["y"], to=F)],
                                inputs=[vi("xi", I64, ["N", 4])], outputs=y4),
        1, r"^unsupported Add reading the int64 tensor 'xi' at run time \(the language computes in f32; its only "
           r"integer tensors are an embedding's ids\) at node 'add' \(Add\)$")
    # (fuzz_onnx: regress/fuzz_onnx/matmul_bool_input.onnx, input_zero_axis.onnx, bn_momentum_out_of_range.onnx)
    add("matmul_bool_input", m([node("MatMul", ["x", "W"], ["y"], name="mm")], [W],
                               inputs=[vi("x", TensorProto.BOOL, ["N", 4])]),
        1, r"^unsupported MatMul reading the bool tensor 'x' at run time")
    add("input_zero_axis", m([node("MatMul", ["x", "W"], ["y"])], [W],
                             inputs=[vi("x", F, ["N", 4]), vi("z", F, [4, 0])]),
        1, r"^input 'z' with an axis of size 0 \(the language's dims are positive\)$")
    bn = node("BatchNormalization", ["x4", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"],
              ["y", "rm", "rv"], name="/bn/BatchNormalization", momentum=-3.0, training_mode=1)
    add("batchnorm_momentum", m([bn], [f32("bn.weight", [1, 1]), f32("bn.bias", [0, 0]),
                                       f32("bn.running_mean", [0, 0]), f32("bn.running_var", [1, 1])], x4, x4),
        1, r"^unsupported training-mode BatchNormalization outside a module of its own, or with a momentum outside")
    add("cast_huge", m([node("Constant", [], ["c"], value=helper.make_tensor("v", F, [2], [1e30, 4])),
                        node("Cast", ["c"], ["ci"], to=I64, name="cast"), node("Reshape", ["x", "ci"], ["y"])],
                       outputs=y4),
        1, r"^unsupported value 1e\+30 as a 64-bit integer at node 'cast' \(Cast\)$")
    # integer and bool outputs: only values the language has exactly
    B8, I8 = TensorProto.BOOL, TensorProto.INT8
    ids = [vi("x", F, ["N", 4]), vi("ids", I64, ["N", 4])]
    add("output_cast_int8", m([node("Cast", ["ids"], ["y"], to=I8)], outputs=[vi("y", I8, ["N", 4])], inputs=ids),
        1, r"^model whose int8 output the language does not compute exactly \(its integer outputs: ")
    add("output_cast_bool", m([node("Cast", ["ids"], ["y"], to=B8)], outputs=[vi("y", B8, ["N", 4])], inputs=ids),
        1, r"^model whose bool output the language does not compute exactly")
    add("output_shape", m([node("Shape", ["x"], ["y"])], outputs=[vi("y", I64, [2])]),
        1, r"^model whose int64 output the language does not compute exactly")
    add("argmax_of_ints", m([node("ArgMax", ["ids"], ["y"], axis=1, name="am")], outputs=[vi("y", I64, ["N", 1])],
                            inputs=ids),
        1, r"^unsupported ArgMax of an integer tensor at node 'am' \(ArgMax\)$")
    # valid: they import
    add("output_argmax", m([node("ArgMax", ["x"], ["y"], axis=-1, select_last_index=1)],
                           outputs=[vi("y", I64, ["N", 1])]),
        0, r"return argmax\(x, axis: -1, keepdim: true, last: true\)")
    add("output_argmin_cast", m([node("ArgMin", ["x"], ["a"], axis=1, keepdims=0),
                                 node("Cast", ["a"], ["y"], to=TensorProto.INT32)],
                                outputs=[vi("y", TensorProto.INT32, ["N"])]),
        0, r"return argmin\(x, axis: 1\)\n")
    add("output_mask", m([node("Less", ["x", "x"], ["y"])], outputs=[vi("y", B8, ["N", 4])]), 0,
        r"return int\(less\(x, x\)\)")
    add("output_bool_inputs", m([node("Not", ["a"], ["na"]), node("And", ["na", "b"], ["y"])],
                                outputs=[vi("y", B8, ["N", 4])], inputs=[vi("a", B8, ["N", 4]), vi("b", B8, ["N", 4])]),
        0, r"return int\(\(1\.0 - float\(a\)\) \* float\(b\)\)")
    add("output_ids", m([node("Identity", ["ids"], ["y"])], outputs=[vi("y", I64, ["N", 4])], inputs=ids),
        0, r"return ids\n")
    # valid: they import
    add("output_is_input", m([], outputs=[vi("x", F, ["N", 4])]), 0, r"return x\b")
    add("used_before_defined", m([node("Relu", ["h"], ["y"]), node("MatMul", ["x", "W"], ["h"])], [W]), 0,
        r"return relu\(x @ ")
    # 30 sibling modules that print differently: Blocks, BlocksB ... BlocksZ, then Blocks_27 ... (the
    # names once cycled through B to Z for ever)
    nodes, inits, prev = [], [], "x"
    for k in range(30):
        inits += [f32(f"blocks.{k}.weight", np.ones((4, 4))), f32(f"c{k}", k + 2.0)]
        nodes += [node("MatMul", [prev, f"blocks.{k}.weight"], [f"m{k}"], name=f"/blocks/blocks.{k}/MatMul"),
                  node("Mul", [f"m{k}", f"c{k}"], [f"h{k}"], name=f"/blocks/blocks.{k}/Mul")]
        prev = f"h{k}"
    add("many_distinct_siblings", m(nodes + [node("Relu", [prev], ["y"])], inits, y4), 0,
        r"layer BlocksZ \{(.|\n)*layer Blocks_30 \{")
    return cases


def refused(what, rc, want_rc, out, err, path, pattern, outdir):
    """The contract's refusal: exit want_rc, one line `nnc: error: PATH:
    ...` matching pattern, nothing on stdout, nothing written in outdir."""
    lines = err.splitlines()
    prefix = f"nnc: error: {path}: "
    if rc != want_rc:
        fail(f"{what}: exit {rc}, expected {want_rc}: {err!r}")
    elif len(lines) != 1 or not lines[0].startswith(prefix):
        fail(f"{what}: expected one line '{prefix}...', got {err!r}")
    elif not re.search(pattern, lines[0][len(prefix):]):
        fail(f"{what}: '{lines[0][len(prefix):]}' does not say /{pattern}/")
    elif out:
        fail(f"{what}: printed {out[:80]!r}")
    elif os.path.exists(outdir):
        fail(f"{what}: wrote {outdir}")
    else:
        print(f"ok  {what} (exit {rc}): {lines[0][len(prefix):][:110]}")


def hostile_import(nnc):
    """import_cases() through `nnc import`: the exit status, one line naming
    the file, nothing written; or, for exit 0, the two files."""
    work = tempfile.mkdtemp(prefix="nnc-onnx-")
    try:
        for name, data, want_rc, pattern in import_cases():
            path = os.path.join(work, name + ".onnx")
            with open(path, "wb") as f:
                f.write(data)
            outdir = os.path.join(work, "out_" + name)
            rc, out, err = run(nnc, "import", path, "-o", outdir)
            if want_rc == 0:
                src = os.path.join(outdir, name + ".nn")
                files = sorted(os.listdir(outdir)) if os.path.isdir(outdir) else []
                if rc != 0 or err or files != [name + ".nn", name + ".safetensors"]:
                    fail(f"{name}: expected exit 0 and {name}.nn, {name}.safetensors; got {rc}, {files}: {err!r}")
                elif not re.search(pattern, open(src).read()):
                    fail(f"{name}: {src} does not say /{pattern}/")
                else:
                    print(f"ok  {name}: imports")
            else:
                refused(name, rc, want_rc, out, err, path, pattern, outdir)
    finally:
        shutil.rmtree(work)
    return 0


def hostile(nnc):
    work = tempfile.mkdtemp(prefix="nnc-onnx-")
    try:
        for name, data, pattern in hostile_cases():
            path = os.path.join(work, name + ".onnx")
            with open(path, "wb") as f:
                f.write(data)
            for extra in ([], ["--dump=onnx"]):
                outdir = os.path.join(work, "out_" + name)
                rc, out, err = run(nnc, "import", path, "-o", outdir, *extra)
                refused(f"{name}{' --dump=onnx' if extra else ''}", rc, 2, out, err, path, pattern, outdir)
        # a 2 GiB file (sparse): refused before it is read
        path = os.path.join(work, "huge_file.onnx")
        with open(path, "wb") as f:
            f.write(base_model().SerializeToString())
        os.truncate(path, 2**31)
        rc, out, err = run(nnc, "import", path)
        if rc != 2 or err != f"nnc: error: {path}: larger than 2 GiB, protobuf's limit (external data is not " \
                              "supported)\n":
            fail(f"huge_file: expected exit 2 and 'larger than 2 GiB', got {rc}: {err!r}")
        else:
            print(f"ok  huge_file: {err.strip()}")
    finally:
        shutil.rmtree(work)
    return hostile_import(nnc)


def replay(binary):
    work = tempfile.mkdtemp(prefix="nnc-onnx-")
    try:
        for name, data, *_ in hostile_cases() + import_cases():
            with open(os.path.join(work, name + ".onnx"), "wb") as f:
                f.write(data)
        r = subprocess.run([binary, work], capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            fail(f"{binary} on the hostile files: exit {r.returncode}\n{r.stderr[-3000:]}")
        else:
            print(r.stdout.strip())
    finally:
        shutil.rmtree(work)
    return 0


# ---- the command line ----------------------------------------------------------

def cli(nnc):
    work = tempfile.mkdtemp(prefix="nnc-onnx-")
    try:
        good = os.path.join(work, "good.onnx")
        onnx.save(base_model(), good)
        usage = [
            ([], r"import needs an ONNX file"),
            ([good, good], r"more than one input file"),
            (["--bogus", good], r"unknown import option '--bogus'"),
            ([good, "--loss", "hinge"], r"unknown --loss 'hinge' \(cross_entropy, mse, none\)"),
            ([good, "--loss=hinge"], r"unknown --loss 'hinge'"),
            ([good, "--name", "Bad-Name"], r"--name 'Bad-Name' is not snake_case"),
            ([good, "--name="], r"--name '' is not snake_case"),
            ([good, "--dump=ir"], r"unknown --dump stage 'ir' for import \(onnx, fold, source\)"),
            ([good, "-o"], r"'-o' needs an argument"),
            ([good, "--name"], r"'--name' needs an argument"),
        ]
        for args, pattern in usage:
            rc, out, err = run(nnc, "import", *args)
            if rc != 1 or not re.search(pattern, err) or "nnc --help" not in err:
                fail(f"import {args}: expected exit 1 and /{pattern}/ with the --help hint, got {rc}: {err!r}")
            else:
                print(f"ok  usage error {args}: {err.splitlines()[0]}")
        rc, out, err = run(nnc, "import", os.path.join(work, "missing.onnx"))
        if rc != 1 or not re.fullmatch(r"nnc: error: cannot read '.*missing\.onnx': No such file or directory\n", err):
            fail(f"a missing file: expected exit 1 and 'cannot read', got {rc}: {err!r}")
        rc, out, err = run(nnc, "import", work)
        if rc != 1 or err != f"nnc: error: cannot read '{work}': Is a directory\n":
            fail(f"a directory: expected exit 1 and 'cannot read', got {rc}: {err!r}")
        rc, out, err = run(nnc, "import", "--help")
        if rc != 0 or b"nnc import MODEL.onnx" not in out:
            fail(f"import --help: exit {rc}")
        # the stages it dumps and its exit statuses (docs/nnc.1 says the same)
        for want in (b"[--dump=onnx|fold|source]", b"fold, every value's shape", b"1 when the model uses an op",
                     b"2 when the file is not valid ONNX"):
            if want not in b" ".join(out.split()):
                fail(f"import --help does not say {want!r}")

        # a valid file whose ops nnc does not map: exit 1, nothing written
        outdir = os.path.join(work, "out")
        unsup = os.path.join(work, "unsup.onnx")
        onnx.save(base_model(nodes=[helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
                                    helper.make_node("Det", ["h"], ["y"], name="det")]), unsup)
        for extra in ([], ["--name", "net", "--loss", "cross_entropy"]):
            rc, out, err = run(nnc, "import", unsup, "-o", outdir, *extra)
            want = f"nnc: error: {unsup}: unsupported op Det (ai.onnx opset 13) at node 'det'\n"
            if rc != 1 or err != want or os.path.exists(outdir):
                fail(f"unsupported op {extra}: expected exit 1 and {want!r}, nothing written; got {rc}: {err!r}")
            else:
                print(f"ok  {err.strip()}")
        m = base_model(nodes=[helper.make_node("Det", ["x"], ["y"])], opset=15)
        m.graph.node[0].domain = "ai.onnx"
        onnx.save(m, os.path.join(work, "det.onnx"))
        rc, out, err = run(nnc, "import", os.path.join(work, "det.onnx"))
        if rc != 1 or not err.endswith(": unsupported op Det (ai.onnx opset 15) at node #0 (output 'y')\n"):
            fail(f"unsupported op of a node without a name: got {rc}: {err!r}")

        # integer and bool inputs are i32 in the language: a Cast or
        # CastLike of one to float, and a Where on one, read float() of it;
        # a Cast of a comparison (an f32 mask there) reads the mask itself
        ints = base_model(
            inits=[],
            inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3]),
                    helper.make_tensor_value_info("ids", TensorProto.INT64, ["N", 3]),
                    helper.make_tensor_value_info("keep", TensorProto.BOOL, ["N", 3])],
            nodes=[helper.make_node("Cast", ["ids"], ["f"], to=TensorProto.FLOAT),
                   helper.make_node("CastLike", ["ids", "x"], ["g"]),
                   helper.make_node("Greater", ["x", "f"], ["gt"]),
                   helper.make_node("Cast", ["gt"], ["m"], to=TensorProto.FLOAT),
                   helper.make_node("Mul", ["f", "g"], ["fg"]),
                   helper.make_node("Add", ["fg", "m"], ["s"]),
                   helper.make_node("Where", ["keep", "s", "x"], ["y"])],
            opset=15)
        ints_path = os.path.join(work, "ints.onnx")
        onnx.save(ints, ints_path)
        rc, out, err = run(nnc, "import", ints_path, "--dump=source")
        src = out.decode()
        checks = [("input ids: i32[N, 3]" in src, "ids an i32 input"), ("input keep: i32[N, 3]" in src, "keep too"),
                  (src.count("float(ids)") == 2, "float(ids) for the Cast and the CastLike"),
                  ("greater(" in src and "float(greater" not in src, "the Cast of a mask as the mask itself"),
                  ("where(float(keep), " in src, "float(keep) as Where's condition")]
        bad = [what for ok, what in checks if not ok]
        if rc != 0 or bad:
            fail(f"integer inputs: expected {', '.join(bad)}; got {rc}: {err!r}\n{src}")
        else:
            print("ok  integer and bool inputs: float() of them for Cast, CastLike and Where, not of a mask")
        # an integer output is for prediction only: --loss refuses it
        am = base_model(nodes=[helper.make_node("ArgMax", ["x"], ["y"], axis=1)],
                        outputs=[helper.make_tensor_value_info("y", TensorProto.INT64, ["N", 1])])
        am_path = os.path.join(work, "am.onnx")
        onnx.save(am, am_path)
        for loss in ("mse", "cross_entropy"):
            rc, out, err = run(nnc, "import", am_path, "-o", outdir, "--loss", loss)
            if rc != 1 or not err.endswith(": --loss of a model whose output is int64 (a loss reads a float "
                                           "output)\n") or os.path.exists(outdir):
                fail(f"--loss {loss} of an ArgMax output: expected exit 1, nothing written; got {rc}: {err!r}")
            else:
                print(f"ok  --loss {loss} of an integer output refused")
        # ops the import writes as formulas (compiler/onnx_lift.c), with
        # attributes or shapes a formula cannot take: exit 1 (unsupported)
        # or 2 (not valid), naming the node, nothing written
        x4 = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4, 2, 2])
        slope = numpy_helper.from_array(np.arange(4, dtype=np.float32), "s")
        formulas = [
            ([helper.make_node("ReduceProd", ["x"], ["p"], name="prod", axes=[0]),
              helper.make_node("Add", ["x", "p"], ["y"])], [], ["N", 4, 2, 2], 1,
             "unsupported ReduceProd over the batch axis at node 'prod' (ReduceProd)"),
            (helper.make_node("LRN", ["x"], ["y"], name="lrn", size=33), [], ["N", 4, 2, 2], 1,
             "unsupported LRN window of 33 channels (at most 32) at node 'lrn' (LRN)"),
            (helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s", blocksize=2, mode="XYZ"), [],
             ["N", 1, 4, 4], 2, "node 'd2s' (DepthToSpace): DepthToSpace mode 'XYZ' (DCR or CRD)"),
            (helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s", blocksize=3), [], ["N", 4, 2, 2], 2,
             "node 'd2s' (DepthToSpace): DepthToSpace with blocksize 3 of [4, 2, 2]"),
            (helper.make_node("PRelu", ["x", "s"], ["y"], name="prelu"), [slope], ["N", 4, 2, 2], 2,
             "node 'prelu' (PRelu): PRelu slope that does not broadcast to the input"),
        ]
        for nodes, inits, yshape, rc_want, msg in formulas:
            nodes = nodes if isinstance(nodes, list) else [nodes]
            node = nodes[0]
            p = os.path.join(work, node.name + ".onnx")
            g = helper.make_graph(nodes, "g", [x4], [helper.make_tensor_value_info("y", TensorProto.FLOAT, yshape)],
                                  inits)
            onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), p)
            rc, out, err = run(nnc, "import", p, "-o", outdir)
            want = f"nnc: error: {p}: {msg}\n"
            if rc != rc_want or err != want or os.path.exists(outdir):
                fail(f"{node.op_type}: expected exit {rc_want} and {want!r}, nothing written; got {rc}: {err!r}")
            else:
                print(f"ok  {err.strip()}")

        # every element type, in raw_data and in its typed field, and every
        # kind of attribute: the dump is what onnx reads
        inits = []
        vals = np.array([-1.5, 0, 1, 65504, -0.0, 3e-5], np.float64)
        for np_type in (np.float32, np.float64, np.float16, np.int8, np.uint8, np.int16, np.uint16, np.int32,
                        np.uint32, np.int64, np.bool_):
            a = (vals if np.issubdtype(np_type, np.floating) else np.array([-1, 0, 1, 7, 0, 1]) % (
                2 if np_type == np.bool_ else 200) * (1 if np.issubdtype(np_type, np.unsignedinteger) else -1)
                 ).astype(np_type).reshape(2, 3)
            raw = numpy_helper.from_array(a, "raw_" + a.dtype.name)
            inits += [raw, helper.make_tensor("typed_" + a.dtype.name, raw.data_type, a.shape, a.reshape(-1))]
        odd_bool = helper.make_tensor("odd_bool", TensorProto.BOOL, [4], [False] * 4)
        odd_bool.ClearField("int32_data")
        odd_bool.raw_data = b"\x00\x01\x02\xff"  # numpy reads any non-zero byte as True
        inits += [odd_bool,
                  helper.make_tensor("bf16", TensorProto.BFLOAT16, [3], [1.0, -2.0, 0.15625]),
                  numpy_helper.from_array(np.array(3.5, np.float32), "scalar"),
                  numpy_helper.from_array(np.zeros((0, 3), np.float32), "empty"),
                  numpy_helper.from_array(np.arange(40, dtype=np.float32).reshape(2, 4, 5) / 7, "big")]
        sub = helper.make_graph([helper.make_node("Identity", ["x"], ["z"])], "sub", [],
                                [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 4])])
        t = numpy_helper.from_array(np.array([[1, 2], [3, 4]], dtype=np.int64), "t")
        sp = helper.make_sparse_tensor(numpy_helper.from_array(np.array([1.5], np.float32), "v"),
                                       numpy_helper.from_array(np.array([1], np.int64), "i"), [4])
        every = helper.make_node("Everything", ["x", "", "W"], ["y", ""], name="e\\v'ery", domain="com.example",
                                 f=0.1, i=-7, s=b"a\nb'c", t=t, g=sub, floats=[1.5, -0.0, float("inf")],
                                 ints=[1, -2, 2**40], strings=[b"p", b""], tensors=[t, t], graphs=[sub, sub],
                                 sp=sp, st=helper.make_tensor("s", TensorProto.STRING, [1], [b"x"]))
        m = base_model(inits=inits + [numpy_helper.from_array(np.zeros((4, 3), np.float32), "W")],
                       nodes=[every])
        m.opset_import.append(helper.make_opsetid("com.example", 2))
        m.graph.value_info.extend([helper.make_tensor_value_info("h", TensorProto.FLOAT, ["N", None, 3]),
                                   helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, [1])])
        m.graph.input.append(helper.make_tensor_value_info("W", TensorProto.FLOAT, [4, 3]))
        m.graph.input.append(helper.make_tensor_value_info("ids", TensorProto.INT64, [None, 7]))
        every_path = os.path.join(work, "every.onnx")
        onnx.save(m, every_path)
        if check_loads(nnc, every_path, m, "every type and attribute"):
            print("ok  every element type and attribute kind reads as onnx reads it")

        # nodes out of order load, sorted (docs/import.md, "Order")
        m = base_model()
        m.graph.node.reverse()
        rev = os.path.join(work, "reversed.onnx")
        onnx.save(m, rev)
        check_loads(nnc, rev, m, "nodes in reverse order")
        rc, out, err = run(nnc, "import", rev, "--dump=onnx")
        if not next(l for l in out.split(b"\n") if l.startswith(b"node ")).startswith(b"node #1 'mm'"):
            fail(f"reversed nodes: MatMul (#1 in the file) should come first: {out!r}")

        # NAME: the stem in snake_case, the model in CamelCase (by hand, from
        # the rule in docs/import.md)
        names = [("ResNet18.onnx", "res_net18", "ResNet18"),
                 ("mobilenet_v2-1.0.onnx", "mobilenet_v2_1_0", "MobilenetV2_1_0"),
                 ("TinyMLPNet.onnx", "tiny_mlp_net", "TinyMlpNet"),
                 ("HTTPServer.onnx", "http_server", "HttpServer"),
                 ("gpt2.small.onnx", "gpt2_small", "Gpt2Small"),
                 ("Gpt2Small.onnx", "gpt2_small", "Gpt2Small"),
                 ("super resolution (10).onnx", "super_resolution_10", "SuperResolution_10"),
                 ("2x_upscale.onnx", "model_2x_upscale", "Model_2xUpscale"),
                 ("__init__.onnx", "init", "Init"),
                 ("---.onnx", "model", "Model"),
                 ("bert-base-uncased", "bert_base_uncased", "BertBaseUncased"),
                 ("Über-Net.onnx", "ber_net", "BerNet")]
        for fname, name, model in names:
            p = os.path.join(work, fname)
            shutil.copy(good, p)
            rc, out, err = run(nnc, "import", p, "--dump=onnx")
            want = f"import as {name} (model {model}), loss none".encode()
            first = out.split(b"\n")[0]
            if rc != 0 or first != want:
                fail(f"{fname}: expected {want!r}, got {rc}: {first!r} {err!r}")
            else:
                print(f"ok  {fname} -> {name}, {model}")
        rc, out, err = run(nnc, "import", good, "--name=my_net2", "--loss=mse", "--dump=onnx")
        if rc != 0 or out.split(b"\n")[0] != b"import as my_net2 (model MyNet2), loss mse":
            fail(f"--name=my_net2 --loss=mse: got {rc}: {out[:60]!r}")
    finally:
        shutil.rmtree(work)
    return 0


def off(nnc):
    rc, out, err = run(nnc, "import", "model.onnx")
    if rc != 1 or len(err.splitlines()) != 1 or "built without ONNX import" not in err:
        fail(f"NNC_ONNX=OFF: expected exit 1 and one line, got {rc}: {err!r}")
    return 0


def main():
    mode, nnc = sys.argv[1], sys.argv[2]
    rc = {"hostile": lambda: hostile(nnc), "corpus": lambda: corpus(nnc, sys.argv[3]), "cli": lambda: cli(nnc),
          "replay": lambda: replay(nnc),
          "off": lambda: off(nnc)}[mode]()
    if failures:
        print(f"{len(failures)} failures")
        return 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
