#!/usr/bin/env python3
"""Generates the vision parity sweep: cases/<name>.nn + cases/<name>.py.

Each case: input [N, C, H, W] -> a trunk of convs (std Conv2D, or a layer
around the conv2d primitive with a non-square kernel), BatchNorm, relu, max
and avg pools (as std layers or primitives, tiling or not, and fan-outs of
one tensor into two pools) -> GlobalAvgPool or Flatten -> [Dense + BatchNorm]
-> Dense -> cross_entropy (+ accuracy metric) or mse.

Usage: gen.py [--random N] [--seed S]   (writes into ./cases next to this file)
"""
import argparse
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "cases")


# ---- op constructors ---------------------------------------------------------
def conv(f, k, s=1, p=0, bias=True, act=None):
    return {"op": "conv", "f": f, "k": k, "s": s, "p": p, "bias": bias, "act": act}


def rconv(f, kh, kw, s=1, p=0, bias=True, act=None):
    return {"op": "rconv", "f": f, "kh": kh, "kw": kw, "s": s, "p": p, "bias": bias, "act": act}


def bn(momentum=0.1, act="relu"):
    return {"op": "bn", "momentum": momentum, "act": act}


def relu():
    return {"op": "relu"}


def mx(size, stride=None, prim=False):
    return {"op": "max", "size": size, "stride": stride or size, "prim": prim}


def av(size, stride=None, prim=False):
    return {"op": "avg", "size": size, "stride": stride or size, "prim": prim}


def fan(a, b, three=False):
    """h = A(h) + B(h) with A, B = (kind, size, stride); three: also GAP(h) to the head"""
    return {"op": "fan3" if three else "fan", "a": list(a), "b": list(b)}


def head(reduce="flatten", units=4, loss="ce", hidden=0, bnf=False):
    return {"reduce": reduce, "units": units, "loss": loss, "hidden": hidden, "bn": bnf}


def case(batch, cin, h, w, trunk, hd, note=""):
    return {"batch": batch, "cin": cin, "h": h, "w": w, "trunk": trunk, "head": hd, "note": note}


# ---- targeted cases ----------------------------------------------------------
TARGETED = [
    case(3, 3, 5, 7, [conv(4, 3, 1, 1, bias=False), bn(), conv(5, 1, 1, 0, act="relu"), mx(2)],
         head("flatten", 4), "1x1 s1 p0 direct conv with dx; tiled maxpool with leftover row+col"),
    case(5, 2, 6, 6, [conv(3, 3, 1, 0, act="relu"), conv(6, 1, 1, 1, bias=True), bn(), av(3)],
         head("gap", 3, "mse"), "1x1 conv with padding 1 (not direct, pad > k/2)"),
    case(1, 4, 9, 6, [conv(5, 3, 1, 1, act="relu"), conv(7, 1, 2, 0, act="relu"), mx(2, 1)],
         head("flatten", 3, hidden=6), "1x1 stride 2; batch 1; overlapping maxpool"),
    case(3, 3, 9, 6, [conv(4, 3, 1, 1, bias=False), bn(), conv(6, 3, 1, 1, act="relu"), mx(3)],
         head("flatten", 5), "same 3x3 on non-square 9x6; tiled maxpool 3"),
    case(5, 1, 13, 13, [conv(3, 5, 1, 2, act="relu"), conv(4, 5, 1, 2, bias=False), bn(0.3), mx(3, 2), av(2)],
         head("flatten", 4, "mse"), "same 5x5 on 13x13; overlapping max then avg with leftover"),
    case(3, 2, 28, 28, [conv(4, 3, 1, 1, act="relu"), conv(5, 3, 1, 1, bias=False), bn(), mx(2), mx(2)],
         head("gap", 6), "same 3x3 on 28x28 (W >= 24, general path); two tiled maxpools in a row"),
    case(3, 3, 2, 3, [conv(4, 5, 1, 2, act="relu"), conv(5, 5, 1, 2, act="relu"), mx(2, 1)],
         head("flatten", 4), "same 5x5 on tiny 2x3 image: padding larger than the image"),
    case(5, 2, 3, 3, [conv(3, 7, 1, 3, act="relu"), conv(4, 7, 1, 3, bias=False), bn(), av(3)],
         head("flatten", 3, hidden=5, bnf=True), "same 7x7 p3 on 3x3; head BatchNorm1d"),
    case(3, 1, 2, 2, [conv(3, 3, 1, 3, act="relu"), conv(4, 3, 1, 3, act="relu"), mx(3)],
         head("flatten", 4), "3x3 p3 on 2x2 (output grows), tiled max 3 with leftover"),
    case(5, 3, 8, 8, [conv(4, 2, 1, 1, act="relu"), conv(6, 2, 1, 1, bias=False), bn(), mx(2), av(2, 1)],
         head("gap", 2, "mse"), "kernel 2 padding 1 stride 1 (9x9, 10x10), tiled max then avg 2/1"),
    case(3, 4, 13, 13, [conv(6, 5, 3, 2, act="relu"), conv(8, 3, 2, 1, act="relu"), mx(2, 1)],
         head("flatten", 5), "5x5 s3 p2; 3x3 s2 p1"),
    case(5, 3, 9, 6, [conv(4, 3, 2, 0, act="relu"), conv(5, 1, 1, 0, bias=False), bn(), mx(2)],
         head("flatten", 3), "3x3 s2 p0 with leftover; direct 1x1 before BN; tiled max leftover col"),
    case(1, 2, 5, 7, [conv(3, 2, 2, 0, act="relu"), conv(4, 2, 2, 1, act="relu"), mx(2)],
         head("flatten", 3, "mse"), "kernel 2 stride 2 (with and without padding); batch 1"),
    case(3, 3, 5, 5, [conv(6, 5, 1, 0, bias=False), bn(), conv(7, 1, 1, 0, act="relu")],
         head("gap", 4), "5x5 valid on 5x5 -> 1x1; BN over 1x1 maps; direct 1x1 on 1x1"),
    case(3, 3, 5, 5, [conv(6, 5, 1, 0, act="relu"), conv(5, 3, 1, 1, bias=False), bn()],
         head("flatten", 4), "'same' 3x3 conv on a 1x1 image (with dx)"),
    case(1, 4, 8, 8, [conv(6, 3, 1, 1, bias=False), bn(), conv(8, 3, 2, 1, bias=False), bn(), mx(2)],
         head("gap", 3), "batch 1 with BatchNorm2d twice"),
    case(3, 2, 13, 13, [conv(4, 3, 1, 0, act="relu"), conv(5, 3, 1, 1, act="relu"), mx(3)],
         head("flatten", 5), "tiled max 3 on 11x11 (leftover 2)"),
    case(3, 3, 9, 9, [conv(4, 3, 1, 1, act="relu"), mx(1, 1), conv(5, 3, 1, 0, act="relu"), mx(2, 3)],
         head("flatten", 2, "mse"), "max 1/1 (tiles trivially); max 2/3 (gaps between windows)"),
    case(5, 2, 9, 7, [conv(3, 3, 1, 1, act="relu"), av(3, 2), conv(4, 2, 1, 1, act="relu"), av(2, 3, prim=True)],
         head("flatten", 3), "avg 3/2 overlapping, avg 2/3 with gaps (primitive)"),
    case(3, 3, 8, 8, [conv(4, 3, 1, 1, bias=False), bn(), conv(6, 3, 1, 1, bias=False), bn(),
                      fan(("max", 2, 2), ("avg", 2, 2))],
         head("gap", 4), "fan-out: tiled max + avg of one tensor (max first)"),
    case(5, 2, 9, 6, [conv(5, 3, 1, 1, act="relu"), conv(4, 3, 1, 1, act="relu"), fan(("avg", 3, 3), ("max", 3, 3))],
         head("flatten", 3, "mse"), "fan-out: avg + tiled max 3 (avg first)"),
    case(3, 3, 7, 7, [conv(4, 3, 1, 1, act="relu"), conv(6, 3, 1, 1, act="relu"),
                      fan(("max", 2, 2), ("avg", 2, 2), three=True)],
         head("flatten", 4), "three consumers: tiled max (leftover), avg, GAP concat"),
    case(3, 2, 8, 8, [conv(4, 3, 1, 1, act="relu"), conv(5, 1, 1, 0, act="relu"), fan(("max", 2, 2), ("max", 5, 1))],
         head("flatten", 3), "fan-out: tiled max + overlapping max 5/1"),
    case(3, 3, 9, 6, [rconv(4, 3, 1, 1, 1, act="relu"), rconv(5, 1, 5, 2, 0, bias=False), bn(), mx(2, 1)],
         head("flatten", 3), "non-square kernels 3x1 p1, 1x5 s2 (conv2d primitive)"),
    case(5, 2, 8, 8, [conv(3, 3, 1, 1, act="relu"), rconv(4, 2, 3, 1, 1, act="relu"), rconv(6, 3, 5, 2, 2, bias=False, act="relu"),
                      av(2)],
         head("flatten", 4, "mse"), "non-square 2x3 p1, 3x5 s2 p2"),
    case(3, 8, 28, 28, [conv(12, 5, 2, 2, act="relu"), conv(12, 3, 1, 1, bias=False), bn(), mx(2),
                        conv(8, 3, 3, 0, act="relu")],
         head("gap", 10), "cin 8, 12 filters, 28x28; same 3x3 on 14x14; 3x3 s3"),
    case(5, 3, 6, 6, [conv(6, 3, 1, 0, act="relu"), mx(2)],
         head("flatten", 4, hidden=7, bnf=True), "head Dense + BatchNorm1d"),
    case(3, 2, 5, 7, [conv(4, 5, 3, 3, act="relu"), conv(5, 2, 1, 0, act="relu")],
         head("gap", 3), "5x5 s3 p3 on 5x7"),
    case(3, 5, 1, 1, [conv(4, 2, 1, 2, act="relu"), conv(6, 3, 1, 1, act="relu"), mx(2)],
         head("flatten", 3), "1x1 image, 2x2 p2 (padding > image); same 3x3 on 4x4"),
    case(5, 4, 1, 1, [conv(6, 3, 1, 1, act="relu"), conv(5, 3, 1, 1, bias=False), bn()],
         head("flatten", 3), "same 3x3 on a 1x1 image, twice; BN with L = 1"),
    case(3, 2, 1, 9, [conv(4, 3, 1, 1, act="relu"), conv(5, 3, 1, 1, act="relu"), mx(1, 2)],
         head("flatten", 2, "mse"), "1x9 images: same 3x3 on a single row"),
    case(3, 3, 9, 1, [conv(4, 5, 1, 2, act="relu"), conv(5, 5, 1, 2, bias=False), bn(), mx(1, 3, prim=True)],
         head("flatten", 3), "9x1 images: same 5x5 on a single column"),
    case(3, 3, 2, 9, [conv(4, 5, 1, 2, act="relu"), conv(5, 5, 1, 2, bias=False), bn(), mx(2, 2)],
         head("flatten", 3), "2x9 images: same 5x5, rows shorter than the kernel reach"),
]


# ---- random cases ----------------------------------------------------------
IMAGES = [(5, 7), (8, 8), (9, 6), (13, 13), (28, 28), (6, 11), (4, 4), (3, 5), (7, 7)]


def out_size(n, k, s, p):
    return (n + 2 * p - k) // s + 1 if n + 2 * p >= k else 0


def random_case(rng):
    while True:
        B = rng.choice([1, 3, 5])
        cin = rng.randint(1, 8)
        H, W = rng.choice(IMAGES)
        trunk, h, w, c = [], H, W, cin
        ok = True
        nconv = rng.choice([2, 2, 3])
        for i in range(nconv):
            k = rng.choice([1, 2, 3, 5])
            s = rng.choice([1, 1, 2, 3])
            p = rng.choice([0, 1, 2, 3] if k > 1 else [0, 0, 1])
            if rng.random() < 0.3 and k % 2 == 1:
                s, p = 1, k // 2           # 'same'
            oh, ow = out_size(h, k, s, p), out_size(w, k, s, p)
            if oh < 1 or ow < 1 or oh * ow > 900:
                ok = False
                break
            f = rng.randint(1, 12)
            if rng.random() < 0.2:         # non-square kernel via the conv2d primitive
                kh, kw = rng.choice([1, 2, 3, 5]), rng.choice([1, 2, 3, 5])
                oh, ow = out_size(h, kh, s, p), out_size(w, kw, s, p)
                if oh < 1 or ow < 1:
                    ok = False
                    break
                trunk.append(rconv(f, kh, kw, s, p, bias=rng.random() < 0.5, act=rng.choice([None, "relu"])))
                h, w, c = oh, ow, f
                continue
            use_bn = rng.random() < 0.4 and B * oh * ow > 1
            trunk.append(conv(f, k, s, p, bias=not use_bn and rng.random() < 0.7,
                              act=None if use_bn else rng.choice([None, "relu"])))
            if use_bn:
                trunk.append(bn(rng.choice([0.1, 0.25])))
            h, w, c = oh, ow, f
            if rng.random() < 0.5 and min(h, w) >= 2:
                size = rng.randint(1, min(5, h, w))
                stride = rng.choice([size, size, 1, 2, 3])
                kind = rng.choice(["max", "max", "avg"])
                trunk.append({"op": kind, "size": size, "stride": stride, "prim": rng.random() < 0.3})
                h, w = (h - size) // stride + 1, (w - size) // stride + 1
        if not ok:
            continue
        red = rng.choice(["gap", "flatten"]) if c * h * w <= 200 else "gap"
        hidden = rng.choice([0, 0, 6])
        hd = head(red, rng.randint(2, 6), rng.choice(["ce", "ce", "mse"]), hidden, bool(hidden) and B > 1 and rng.random() < 0.5)
        return case(B, cin, H, W, trunk, hd, "random")


# ---- emit ----------------------------------------------------------------------
RECT = """layer RectConv {
    hparams {
        filters: int
        kh: int
        kw: int
        stride: int = 1
        padding: int = 0
        bias: bool = true
    }
    param weight: [filters, c, kh, kw] = glorot_uniform
    param bias: [filters] = zeros if bias
    fn call(x: [_, c, _, _]) {
        return conv2d(x, weight, bias, stride: stride, padding: padding)
    }
}

"""


def pool_expr(kind, size, stride, x):
    return "%s_pool2d(%s, size: %d, stride: %d)" % (kind, x, size, stride)


def emit(name, cs):
    """returns (.nn text, shape trace); fills in field names and cs['feat']"""
    fields, body, trace = [], [], []
    c, h, w = cs["cin"], cs["h"], cs["w"]
    counts = {}
    side = False

    def fname(prefix):
        counts[prefix] = counts.get(prefix, 0) + 1
        return "%s%d" % (prefix, counts[prefix])

    for op in cs["trunk"]:
        k = op["op"]
        if k in ("conv", "rconv"):
            if k == "conv":
                kh = kw = op["k"]
            else:
                kh, kw = op["kh"], op["kw"]
            oh, ow = out_size(h, kh, op["s"], op["p"]), out_size(w, kw, op["s"], op["p"])
            assert oh >= 1 and ow >= 1, (name, op, h, w)
            op["name"] = fname("c" if k == "conv" else "r")
            act = op.get("act")
            if k == "conv":
                fields.append("%s: Conv2D(filters: %d, kernel: %d, stride: %d, padding: %d, bias: %s%s)"
                              % (op["name"], op["f"], op["k"], op["s"], op["p"], str(op["bias"]).lower(),
                                 ", activation: relu" if act == "relu" else ""))
                body.append("h = %s(h)" % op["name"])
            else:
                fields.append("%s: RectConv(filters: %d, kh: %d, kw: %d, stride: %d, padding: %d, bias: %s)"
                              % (op["name"], op["f"], kh, kw, op["s"], op["p"], str(op["bias"]).lower()))
                body.append("h = %s%s(h)%s" % ("relu(" if act == "relu" else "", op["name"], ")" if act == "relu" else ""))
            c, h, w = op["f"], oh, ow
        elif k == "bn":
            op["name"] = fname("bn")
            fields.append("%s: BatchNorm(momentum: %g)" % (op["name"], op["momentum"]))
            assert cs["batch"] * h * w > 1
            body.append("h = %s%s(h)%s" % ("relu(" if op["act"] == "relu" else "", op["name"], ")" if op["act"] == "relu" else ""))
        elif k == "relu":
            body.append("h = relu(h)")
        elif k in ("max", "avg"):
            assert h >= op["size"] and w >= op["size"], (name, op, h, w)
            if op["prim"]:
                body.append("h = " + pool_expr(k, op["size"], op["stride"], "h"))
            else:
                op["name"] = fname("mp" if k == "max" else "ap")
                fields.append("%s: %s(size: %d, stride: %d)" % (op["name"], "MaxPool2D" if k == "max" else "AvgPool2D",
                                                                op["size"], op["stride"]))
                body.append("h = %s(h)" % op["name"])
            h, w = (h - op["size"]) // op["stride"] + 1, (w - op["size"]) // op["stride"] + 1
        elif k in ("fan", "fan3"):
            a, b = op["a"], op["b"]
            sa = ((h - a[1]) // a[2] + 1, (w - a[1]) // a[2] + 1)
            sb = ((h - b[1]) // b[2] + 1, (w - b[1]) // b[2] + 1)
            assert sa == sb and min(h, w) >= max(a[1], b[1]), (name, op, sa, sb)
            if k == "fan3":
                fields.append("gs: GlobalAvgPool")
                body.append("let side = gs(h)")
                side = True
            body.append("h = %s + %s" % (pool_expr(a[0], a[1], a[2], "h"), pool_expr(b[0], b[1], b[2], "h")))
            h, w = sa
        trace.append("%s -> [%d, %d, %d]" % (k, c, h, w))
    hd = cs["head"]
    if hd["reduce"] == "gap":
        fields.append("gap: GlobalAvgPool")
        body.append("h = gap(h)")
        feat = c
    else:
        fields.append("fl: Flatten")
        body.append("h = fl(h)")
        feat = c * h * w
    if side:
        body.append("h = concat([h, side], axis: 1)")
        feat += c_before_fan(cs)
    cs["feat"] = feat
    if hd["hidden"]:
        if hd["bn"]:
            fields.append("fc1: Dense(units: %d, bias: false)" % hd["hidden"])
            fields.append("bnf: BatchNorm")
            body.append("h = relu(bnf(fc1(h)))")
        else:
            fields.append("fc1: Dense(units: %d)" % hd["hidden"])
            body.append("h = relu(fc1(h))")
    fields.append("fc: Dense(units: %d)" % hd["units"])
    body.append("return fc(h)")

    model = "".join(p.capitalize() for p in name.split("_"))
    lbl = "i32[N]" if hd["loss"] == "ce" else "f32[N, %d]" % hd["units"]
    out = ["// %s: %s" % (name, cs["note"]),
           "// batch %d, input [%d, %d, %d]; %s" % (cs["batch"], cs["cin"], cs["h"], cs["w"], "; ".join(trace)),
           "// generated by sweep/gen.py; twin: %s.py (sweep_twin.py)" % name]
    src = "\n".join(out) + "\n"
    if any(op["op"] == "rconv" for op in cs["trunk"]):
        src += RECT
    src += "model %s {\n    input x: f32[N, %d, %d, %d]\n    label y: %s\n" % (model, cs["cin"], cs["h"], cs["w"], lbl)
    src += "".join("    %s\n" % f for f in fields)
    src += "    fn call(x) {\n        let h = x\n" + "".join("        %s\n" % b for b in body) + "    }\n"
    if hd["loss"] == "ce":
        src += "    loss cross_entropy(self(x), y)\n    metric acc = accuracy(self(x), y)\n"
    else:
        src += "    loss mse(self(x), y)\n"
    src += "}\n"
    return src


def c_before_fan(cs):
    c = cs["cin"]
    for op in cs["trunk"]:
        if op["op"] in ("conv", "rconv"):
            c = op["f"]
        if op["op"] == "fan3":
            return c
    raise AssertionError


PY = '''"""Twin of {name}.nn (generated by sweep/gen.py)."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import sweep_twin  # noqa: E402

SPEC = {spec}
sweep_twin.make(globals())
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--random", type=int, default=8)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--only-random", action="store_true")
    args = ap.parse_args()
    out = args.out
    os.makedirs(out, exist_ok=True)
    rng = random.Random(args.seed)
    cases = [] if args.only_random else [("t%02d" % (i + 1), c) for i, c in enumerate(TARGETED)]
    cases += [("r%02d" % (i + 1), random_case(rng)) for i in range(args.random)]
    for name, cs in cases:
        name = ("sx_" if args.only_random else "sw_") + name
        src = emit(name, cs)
        with open(os.path.join(out, name + ".nn"), "w") as f:
            f.write(src)
        with open(os.path.join(out, name + ".py"), "w") as f:
            f.write(PY.format(name=name, spec=repr(cs)))
    print("%d cases in %s" % (len(cases), out))


if __name__ == "__main__":
    main()
