#!/usr/bin/python3
"""Writes the fuzz targets' seed corpora into tests/fuzz/corpus/<target>/.

Run from anywhere: /usr/bin/python3 tests/fuzz/make_corpus.py.  The seeds:
- fuzz_compiler: every .nn of models/, bench/, tests/ (tests/errors/ too)
  and docs/, examples/, one file each; and the programs with imports as one
  input, their files joined at "--- NAME" lines (fuzz_compiler.c).
- fuzz_safetensors: checkpoints of the target's small model (valid, with
  metadata and training state, and a few near misses).
- fuzz_npy: small .npy files of each version, dtype and rank.
- fuzz_driver_args: command lines of every subcommand, NUL-separated.
- fuzz_onnx: small ONNX models made with the onnx package (every attribute
  kind, every element type in raw_data and in its typed field, nodes out of
  order, near misses), tests/onnx's PyTorch models made small and exported
  as check_import.py exports them (with torch), and a few of the ONNX test
  data's (Debian: libonnx-testdata; tests/fuzz/run.sh adds all of its node
  tests).
"""
import json
import os
import struct
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
out = os.path.join(here, "corpus")


def put(target, name, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def compiler_seeds():
    for top in ("models", "bench", "tests", "docs", "examples"):
        for dirpath, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            if "/fuzz" in dirpath:
                continue
            for f in sorted(files):
                if f.endswith(".nn"):
                    rel = os.path.relpath(os.path.join(dirpath, f), root)
                    put("fuzz_compiler", rel.replace("/", "_"), open(os.path.join(root, rel), "rb").read())

    def joined(name, main, others):
        text = open(os.path.join(root, main)).read()
        for inner, path in others:
            if not text.endswith("\n"):
                text += "\n"
            text += "--- %s\n" % inner + open(os.path.join(root, path)).read()
        put("fuzz_compiler", name, text)

    joined("imports_model.nn", "tests/imports/model.nn",
           [("blocks.nn", "tests/imports/lib/blocks.nn"), ("sub/act.nn", "tests/imports/lib/sub/act.nn")])
    joined("imports_tiny.nn", "tests/cmake_package/consumer/model/tiny.nn",
           [("lib/block.nn", "tests/cmake_package/consumer/model/lib/block.nn"),
            ("lib/act.nn", "tests/cmake_package/consumer/shared/act.nn")])
    joined("imports_xor.nn", "examples/make/xor_net.nn", [("layers.nn", "examples/make/layers.nn")])
    put("fuzz_compiler", "imports_cycle.nn",
        'import "a.nn"\n--- a.nn\nimport "b.nn"\n--- b.nn\nimport "a.nn"\n')


def safetensors(tensors, meta=None, pad=b""):
    """tensors: (name, dtype, shape, float list)"""
    header, data = {}, b""
    if meta is not None:
        header["__metadata__"] = meta
    for name, dtype, shape, vals in tensors:
        raw = struct.pack("<%d%s" % (len(vals), "q" if dtype == "I64" else "f"), *vals)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header).encode() + pad
    return struct.pack("<Q", len(h)) + h + data


def st_seeds():
    model = [("w", "F32", [2, 3], [0.5] * 6), ("b", "F32", [2], [1, 2]), ("e", "F32", [4, 2], [0.25] * 8),
             ("seen", "F32", [1], [3])]
    train = [("nnc:train/optimizer.m", "F32", [16], [0.1] * 16), ("nnc:train/optimizer.v", "F32", [16], [0.2] * 16)]
    meta = {"nnc.train.format": "1", "nnc.train.step": "7", "nnc.train.epoch": "2", "nnc.train.rng": "0123abcd"}
    put("fuzz_safetensors", "model.safetensors", safetensors(model))
    put("fuzz_safetensors", "model_meta.safetensors", safetensors(model, {"format": "pt"}, b"   "))
    put("fuzz_safetensors", "train_state.safetensors", safetensors(model + train, meta))
    put("fuzz_safetensors", "missing.safetensors", safetensors(model[:2]))
    put("fuzz_safetensors", "counter.safetensors", safetensors(model + [("bn.num_batches_tracked", "I64", [], [17])]))
    put("fuzz_safetensors", "f16.safetensors", safetensors([("w", "F16", [2, 3], [0.5] * 3)] + model[1:]))
    put("fuzz_safetensors", "empty_header.safetensors", struct.pack("<Q", 2) + b"{}")
    put("fuzz_safetensors", "escapes.safetensors",
        safetensors(model, {"k\\u00e9\\n": "v\\ud83d\\ude00", "x": "\\\"y\\\""}))


def npy(arr, version=(1, 0), fortran=False):
    descr = arr.dtype.str
    h = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, tuple(arr.shape))
    lenbytes = 2 if version[0] == 1 else 4
    pre = 6 + 2 + lenbytes
    total = (pre + len(h) + 1 + 63) // 64 * 64
    h = h + " " * (total - pre - len(h) - 1) + "\n"
    enc = h.encode("latin1" if version[0] < 3 else "utf8")
    size = struct.pack("<H", len(enc)) if lenbytes == 2 else struct.pack("<I", len(enc))
    return b"\x93NUMPY" + bytes(version) + size + enc + arr.tobytes(order="F" if fortran else "C")


def npy_seeds():
    f = np.arange(6, dtype="<f4").reshape(2, 3)
    i = np.arange(4, dtype="<i4")
    put("fuzz_npy", "f4_2d_v1.npy", npy(f))
    put("fuzz_npy", "i4_1d_v1.npy", npy(i))
    put("fuzz_npy", "f4_v2.npy", npy(f, (2, 0)))
    put("fuzz_npy", "i4_v3.npy", npy(i, (3, 0)))
    put("fuzz_npy", "scalar.npy", npy(np.array(1.5, dtype="<f4")))
    put("fuzz_npy", "empty.npy", npy(np.zeros((0, 3), dtype="<f4")))
    put("fuzz_npy", "f4_4d.npy", npy(np.ones((1, 2, 1, 2), dtype="<f4")))
    put("fuzz_npy", "fortran.npy", npy(f, fortran=True))
    put("fuzz_npy", "f8.npy", npy(np.ones(2, dtype="<f8")))
    put("fuzz_npy", "short.npy", npy(f)[:-4])


def driver_seeds():
    lines = {
        "info": ["info"],
        "help": ["--help"],
        "train_help": ["train", "-h"],
        "train": ["train", "--inputs", "x.npy,k.npy", "--labels", "y.npy,c.npy", "--save", "w.safetensors",
                  "--epochs", "3", "--batch=8", "--optimizer", "sgd", "--lr", "0.1", "--momentum", "0.9",
                  "--seed", "42", "--quiet"],
        "train_sched": ["train", "--inputs=x.npy,k.npy", "--labels=y.npy,c.npy", "--save=o.safetensors",
                        "--lr-schedule", "step", "--lr-step-size", "10", "--lr-gamma", "0.5", "--warmup", "2",
                        "--accumulate", "4", "--clip", "1.0", "--weight-decay", "0.01", "--threads", "2"],
        "train_val": ["train", "--inputs", "x.npy,k.npy", "--labels", "y.npy,c.npy", "--save", "s",
                      "--val-inputs", "a.npy,b.npy", "--val-labels", "c.npy,d.npy", "--log", "l.csv",
                      "--log-every", "5", "--progress", "0.5", "--save-every", "100", "--stop-after", "7"],
        "train_split": ["train", "--inputs", "x,k", "--labels", "y,c", "--save", "s", "--val-split", "0.2",
                        "--resume", "r.safetensors", "--log=l.jsonl"],
        "eval": ["eval", "--inputs", "x.npy,k.npy", "--labels", "y.npy,c.npy", "--weights", "w.safetensors"],
        "predict": ["predict", "--inputs", "x.npy,k.npy", "--weights", "w", "--output", "p.npy"],
        "grad": ["grad", "--inputs", "x,k", "--labels", "y,c", "--weights", "w", "--output", "g", "--seed", "1"],
        "bad": ["train", "--epochs", "-1", "--nope"],
    }
    for name, argv in lines.items():
        put("fuzz_driver_args", name, "\0".join(argv))


def torch_seeds():
    """tests/onnx's exported models (export_models.py), made small enough
    for the target's max_len (tests/fuzz/run.sh): the ResNet (training and
    eval export), the depthwise-separable CNN, the causal transformer and
    the LSTM tagger, exported as check_import.py exports them."""
    try:
        import io
        import warnings
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        sys.path.insert(0, os.path.join(root, "tests", "onnx"))
        import export_models as em
    except ImportError:
        print("no torch: fuzz_onnx's exported seeds not written", file=sys.stderr)
        return

    class ResNet(nn.Module):
        def __init__(s):
            super().__init__()
            s.conv1 = nn.Conv2d(3, 4, 3, 1, 1, bias=False); s.bn1 = nn.BatchNorm2d(4)
            s.layer1 = nn.Sequential(em.Block(4, 4, 1))
            s.layer2 = nn.Sequential(em.Block(4, 8, 2))
            s.fc = nn.Linear(8, 3)

        def forward(s, x):
            x = F.relu(s.bn1(s.conv1(x)))
            x = F.adaptive_avg_pool2d(s.layer2(s.layer1(x)), 1).flatten(1)
            return s.fc(x)

    class MobileNet(nn.Module):
        def __init__(s):
            super().__init__()
            s.stem = nn.Sequential(nn.Conv2d(3, 4, 3, 2, 1, bias=False), nn.BatchNorm2d(4), nn.ReLU6())
            s.blocks = nn.Sequential(em.DSConv(4, 8, 1), em.DSConv(8, 8, 2))
            s.classifier = nn.Linear(8, 3)

        def forward(s, x):
            return s.classifier(s.blocks(s.stem(x)).mean([2, 3]))

    torch.manual_seed(0)
    image = torch.randn(2, 3, 8, 8)
    for name, m, x, opset, train in (
            ("resnet", ResNet(), image, 13, True), ("resnet_eval", ResNet(), image, 13, False),
            ("mobile", MobileNet(), image, 15, True),
            ("gpt", em.GPT(vocab=4, d=4, heads=2, T=2, n=1), torch.randint(0, 4, (2, 2)), 14, True),
            ("tagger", em.Tagger(vocab=8, d=4, hidden=4, tags=3), torch.randint(0, 8, (2, 5)), 17, True)):
        f = io.BytesIO()
        m.train(train)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(m, x, f, opset_version=opset, input_names=["x"], output_names=["y"],
                              training=torch.onnx.TrainingMode.TRAINING if train else torch.onnx.TrainingMode.EVAL,
                              do_constant_folding=not train, dynamic_axes={"x": {0: "N"}, "y": {0: "N"}})
        put("fuzz_onnx", "export_%s.onnx" % name, f.getvalue())


def onnx_seeds():
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        print("no onnx Python package (Debian: python3-onnx): fuzz_onnx seeds not written", file=sys.stderr)
        return

    def model(nodes, inputs, outputs, inits=(), opsets=(("", 13),), value_info=()):
        g = helper.make_graph(nodes, "g", inputs, outputs, list(inits), value_info=list(value_info))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
        m.producer_name = "make_corpus"
        return m.SerializeToString()

    f32 = TensorProto.FLOAT
    x = helper.make_tensor_value_info("x", f32, ["N", 4])
    y = helper.make_tensor_value_info("y", f32, ["N", 3])
    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3), "fc.weight")
    b = numpy_helper.from_array(np.array([0.5, -1, 2], dtype=np.float32), "fc.bias")
    mm = helper.make_node("MatMul", ["x", "fc.weight"], ["h"], name="mm")
    add = helper.make_node("Add", ["h", "fc.bias"], ["y"], name="add")
    put("fuzz_onnx", "dense.onnx", model([mm, add], [x], [y], [w, b],
                                         value_info=[helper.make_tensor_value_info("h", f32, ["N", 3])]))
    put("fuzz_onnx", "dense_unsorted.onnx", model([add, mm], [x], [y], [w, b]))
    put("fuzz_onnx", "dense_old_inputs.onnx",  # weights listed as inputs too
        model([mm, add], [x, helper.make_tensor_value_info("fc.weight", f32, [4, 3]),
                          helper.make_tensor_value_info("fc.bias", f32, [3])], [y], [w, b]))

    sub = helper.make_graph([helper.make_node("Identity", ["x"], ["z"])], "sub", [],
                            [helper.make_tensor_value_info("z", f32, ["N", 4])])
    t = numpy_helper.from_array(np.array([[1, 2], [3, 4]], dtype=np.float32), "t")
    sp = helper.make_sparse_tensor(numpy_helper.from_array(np.array([1.5], np.float32), "v"),
                                   numpy_helper.from_array(np.array([1], np.int64), "i"), [4])
    attrs = helper.make_node("Everything", ["x"], ["y"], name="every_attr", domain="com.example",
                             f=0.25, i=-7, s=b"a\nb", t=t, g=sub, floats=[1.5, -0.0], ints=[1, 2, 3],
                             strings=[b"p", b"q"], tensors=[t, t], graphs=[sub, sub], sp=sp)
    put("fuzz_onnx", "attributes.onnx", model([attrs], [x], [y], opsets=(("", 13), ("com.example", 1))))

    inits, outs = [], []
    for k, (dt, arr) in enumerate([("float", np.float32), ("double", np.float64), ("float16", np.float16),
                                   ("int8", np.int8), ("uint8", np.uint8), ("int16", np.int16),
                                   ("uint16", np.uint16), ("int32", np.int32), ("uint32", np.uint32),
                                   ("int64", np.int64), ("bool", np.bool_)]):
        a = (np.arange(6) % 3 - 1).astype(arr).reshape(2, 3) if dt != "uint8" else np.arange(6, dtype=np.uint8)
        inits.append(numpy_helper.from_array(a, "raw_" + dt))
        inits.append(helper.make_tensor("typed_" + dt, inits[-1].data_type, a.shape, a.reshape(-1)))
    bf = helper.make_tensor("typed_bfloat16", TensorProto.BFLOAT16, [2], [1.0, -2.0])
    inits.append(bf)
    inits.append(numpy_helper.from_array(np.array(3.5, np.float32), "scalar"))
    inits.append(numpy_helper.from_array(np.zeros((0, 3), np.float32), "empty"))
    ident = helper.make_node("Identity", ["x"], ["y"], name="id")
    put("fuzz_onnx", "dtypes.onnx", model([ident], [x], [y], inits))

    x0 = helper.make_tensor_value_info("x", f32, [2, 4])
    put("fuzz_onnx", "opset_12.onnx", model([ident], [x0], [y], opsets=(("", 12),)))
    put("fuzz_onnx", "dynamic_axis.onnx", model([ident], [helper.make_tensor_value_info("x", f32, ["N", "K"])], [y]))
    put("fuzz_onnx", "missing_init.onnx", model([mm, add], [x], [y], [w]))
    put("fuzz_onnx", "cycle.onnx", model([helper.make_node("Add", ["x", "t2"], ["t1"]),
                                          helper.make_node("Relu", ["t1"], ["t2"]),
                                          helper.make_node("Relu", ["t2"], ["y"])], [x], [y]))
    short = numpy_helper.from_array(np.zeros(12, np.float32), "fc.weight")
    short.dims[:] = [4, 4]
    put("fuzz_onnx", "raw_data_short.onnx", model([mm, add], [x], [y], [short, b]))

    torch_seeds()

    data = "/usr/share/libonnx-testdata/data"
    for t in ("node/test_conv_with_strides_padding", "node/test_lstm_defaults", "node/test_if",
              "node/test_constant", "node/test_resize_upsample_scales_linear",
              "node/test_sequence_map_identity_1_sequence", "pytorch-converted/test_Conv2d"):
        p = os.path.join(data, t, "model.onnx")
        if os.path.exists(p):
            put("fuzz_onnx", t.replace("/", "_") + ".onnx", open(p, "rb").read())


compiler_seeds()
st_seeds()
npy_seeds()
driver_seeds()
onnx_seeds()
print("seeds in", out, file=sys.stderr)
