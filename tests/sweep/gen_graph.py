#!/usr/bin/env python3
"""Hand-written graph-shape cases for the vision sweep (sw_g*): residuals,
fan-out of one tensor to several convs/pools, shared conv weights (also on
two image sizes), convs/pools/BN on transposed, sliced and concatenated
tensors, frozen convs, a weight that is an expression.  Each entry is
(name, note, nn model body, torch twin body); both are written to cases/."""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "cases")

PY_HEAD = '''"""Twin of {name}.nn (sweep/gen_graph.py): {note}"""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import nnlib as L  # noqa: E402
from sweep_twin import BN, PrimConv  # noqa: E402,F401

B = {batch}
CIN, H, W = {cin}, {h}, {w}
UNITS = {units}
LOSS = "{loss}"


def Conv(cin, f, k, s=1, p=0, bias=True):
    return torch.nn.Conv2d(cin, f, k, stride=s, padding=p, bias=bias)


class Net(torch.nn.Module):
{body}


def build():
    return Net()


def init_weights(module, gen):
    from parity import default_init
    default_init(module, gen)
    with torch.no_grad():
        for name, t in module.state_dict(keep_vars=True).items():
            if name.endswith("running_var"):
                t.copy_(t.abs() + 0.5)


def inputs(gen):
    return [torch.randn(B, CIN, H, W, generator=gen)]


def labels(gen):
    if LOSS == "ce":
        return [torch.randint(0, UNITS, (B,), generator=gen, dtype=torch.int32)]
    return [torch.randn(B, UNITS, generator=gen)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0]) if LOSS == "ce" else L.mse(m(*xs), ys[0])
'''

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

/// batch_norm plus a term that uses batch_stats with a gradient
layer StatsNorm {
    param weight: [c] = ones
    param bias: [c] = zeros
    fn call(x: [n, c, ...]) {
        let v = reshape(x, [n, c, -1])
        let st = batch_stats(v)
        let mu = reshape(slice(st, axis: 0, start: 0, end: 1), [c, 1])
        let var = reshape(slice(st, axis: 0, start: 1, end: 2), [c, 1])
        let y = batch_norm(v, st, weight, bias, eps: 0.001)
        return reshape_as(y + v * var + mu * 0.5, x)
    }
}

/// conv2d with the weight scaled by a param (the weight is an expression)
layer ScaledConv {
    hparams { filters: int; k: int; padding: int = 0 }
    param weight: [filters, c, k, k] = glorot_uniform
    param scale: [filters, 1, 1, 1] = ones
    fn call(x: [_, c, _, _]) {
        return conv2d(x, weight * scale, stride: 1, padding: padding)
    }
}

"""

CASES = []


def case(name, note, batch, cin, h, w, units, loss, fields, call, twin_init, twin_fwd):
    CASES.append(dict(name=name, note=note, batch=batch, cin=cin, h=h, w=w, units=units, loss=loss,
                      fields=fields, call=call, twin_init=twin_init, twin_fwd=twin_fwd))


# g01: residual block whose convs take the 'same' path, the skip adds r's gradient
case("sw_g01", "residual: same-path 3x3 convs, identity skip; tiled max", 3, 3, 7, 9, 4, "ce",
     """c1: Conv2D(filters: 4, kernel: 3, padding: 1, activation: relu)
c2: Conv2D(filters: 4, kernel: 3, padding: 1, bias: false)
bn1: BatchNorm
c3: Conv2D(filters: 4, kernel: 3, padding: 1)
mp: MaxPool2D(size: 2)
gap: GlobalAvgPool
fc: Dense(units: 4)""",
     """let r = c1(x)
let h = relu(bn1(c2(r)))
h = relu(c3(h) + r)
return fc(gap(mp(h)))""",
     """self.c1 = Conv(3, 4, 3, p=1); self.c2 = Conv(4, 4, 3, p=1, bias=False); self.bn1 = BN(4)
self.c3 = Conv(4, 4, 3, p=1); self.fc = L.Dense(4, 4)""",
     """r = torch.relu(self.c1(x))
h = torch.relu(self.bn1(self.c2(r)))
h = torch.relu(self.c3(h) + r)
return self.fc(F.max_pool2d(h, 2).mean(dim=(2, 3)))""")

# g02: r feeds two direct 1x1 convs and the skip
case("sw_g02", "two direct 1x1 convs and identity of one tensor summed", 5, 2, 6, 5, 3, "mse",
     """c1: Conv2D(filters: 5, kernel: 3, padding: 1, activation: relu)
d1: Conv2D(filters: 5, kernel: 1)
d2: Conv2D(filters: 5, kernel: 1, bias: false)
fl: Flatten
fc: Dense(units: 3)""",
     """let r = c1(x)
let h = relu(d1(r)) + d2(r) + r
return fc(fl(avg_pool2d(h, size: 2, stride: 2)))""",
     """self.c1 = Conv(2, 5, 3, p=1); self.d1 = Conv(5, 5, 1); self.d2 = Conv(5, 5, 1, bias=False)
self.fc = L.Dense(5 * 3 * 2, 3)""",
     """r = torch.relu(self.c1(x))
h = torch.relu(self.d1(r)) + self.d2(r) + r
return self.fc(F.avg_pool2d(h, 2, 2).flatten(1))""")

# g03: inception: concat of 1x1, 3x3 same, 5x5 same, 3x3 valid+pad... along channels
case("sw_g03", "inception: concat of 1x1 / 3x3 same / 5x5 same / 2x2 p1 s1 -> slice convs of one tensor", 3, 3, 8, 8, 5, "ce",
     """c1: Conv2D(filters: 4, kernel: 3, padding: 1, activation: relu)
a: Conv2D(filters: 2, kernel: 1)
b: Conv2D(filters: 3, kernel: 3, padding: 1)
c: Conv2D(filters: 2, kernel: 5, padding: 2, bias: false)
bn: BatchNorm
mp: MaxPool2D(size: 2)
gap: GlobalAvgPool
fc: Dense(units: 5)""",
     """let r = c1(x)
let h = concat([a(r), b(r), c(r)], axis: 1)
h = mp(relu(bn(h)))
return fc(gap(h))""",
     """self.c1 = Conv(3, 4, 3, p=1); self.a = Conv(4, 2, 1); self.b = Conv(4, 3, 3, p=1)
self.c = Conv(4, 2, 5, p=2, bias=False); self.bn = BN(7); self.fc = L.Dense(7, 5)""",
     """r = torch.relu(self.c1(x))
h = torch.cat([self.a(r), self.b(r), self.c(r)], dim=1)
h = F.max_pool2d(torch.relu(self.bn(h)), 2)
return self.fc(h.mean(dim=(2, 3)))""")

# g04: a conv field applied twice (shared weights, same path) and on two sizes
case("sw_g04", "shared conv weights: s(s(r)) and s(max_pool(r)) on another image size", 3, 2, 8, 10, 4, "ce",
     """c1: Conv2D(filters: 4, kernel: 3, padding: 1, activation: relu)
s: Conv2D(filters: 4, kernel: 3, padding: 1)
gap: GlobalAvgPool
fc: Dense(units: 4)""",
     """let r = c1(x)
let h1 = gap(relu(s(relu(s(r)))))
let h2 = gap(relu(s(max_pool2d(r, size: 2, stride: 2))))
return fc(h1 + h2)""",
     """self.c1 = Conv(2, 4, 3, p=1); self.s = Conv(4, 4, 3, p=1); self.fc = L.Dense(4, 4)""",
     """r = torch.relu(self.c1(x))
h1 = torch.relu(self.s(torch.relu(self.s(r)))).mean(dim=(2, 3))
h2 = torch.relu(self.s(F.max_pool2d(r, 2, 2))).mean(dim=(2, 3))
return self.fc(h1 + h2)""")

# g05: shared direct 1x1 conv applied twice
case("sw_g05", "shared direct 1x1 conv applied twice, then strided conv + tiled max of one tensor", 5, 3, 9, 9, 3, "mse",
     """c1: Conv2D(filters: 5, kernel: 3, padding: 1, activation: relu)
s: Conv2D(filters: 5, kernel: 1)
c2: Conv2D(filters: 5, kernel: 3, stride: 3, bias: false)
fl: Flatten
fc: Dense(units: 3)""",
     """let r = relu(s(relu(s(c1(x)))))
let h = c2(r) + max_pool2d(r, size: 3, stride: 3)
return fc(fl(h))""",
     """self.c1 = Conv(3, 5, 3, p=1); self.s = Conv(5, 5, 1); self.c2 = Conv(5, 5, 3, s=3, bias=False)
self.fc = L.Dense(5 * 3 * 3, 3)""",
     """r = torch.relu(self.s(torch.relu(self.s(torch.relu(self.c1(x))))))
h = self.c2(r) + F.max_pool2d(r, 3, 3)
return self.fc(h.flatten(1))""")

# g06: maxpool output consumed by a conv, the skip and a GAP
case("sw_g06", "tiled max output used three times (conv, skip, GAP)", 3, 2, 10, 7, 4, "ce",
     """c1: Conv2D(filters: 4, kernel: 3, padding: 1, activation: relu)
c2: Conv2D(filters: 4, kernel: 3, padding: 1)
gap: GlobalAvgPool
fc: Dense(units: 4)""",
     """let p = max_pool2d(c1(x), size: 2, stride: 2)
let h = relu(c2(p)) + p
return fc(concat([gap(h), gap(p)], axis: 1))""",
     """self.c1 = Conv(2, 4, 3, p=1); self.c2 = Conv(4, 4, 3, p=1); self.fc = L.Dense(8, 4)""",
     """p = F.max_pool2d(torch.relu(self.c1(x)), 2, 2)
h = torch.relu(self.c2(p)) + p
return self.fc(torch.cat([h.mean(dim=(2, 3)), p.mean(dim=(2, 3))], dim=1))""")

# g07: BN output into tiled max, BN input into avg
case("sw_g07", "BN -> tiled max 3, BN input also avg-pooled; second BN; overlapping max", 3, 3, 9, 9, 3, "ce",
     """c1: Conv2D(filters: 5, kernel: 3, padding: 1, bias: false)
bn1: BatchNorm(momentum: 0.5)
bn2: BatchNorm
fl: Flatten
fc: Dense(units: 3)""",
     """let r = c1(x)
let h = relu(max_pool2d(bn1(r), size: 3, stride: 3) + avg_pool2d(r, size: 3, stride: 3))
h = max_pool2d(bn2(h), size: 2, stride: 1)
return fc(fl(h))""",
     """self.c1 = Conv(3, 5, 3, p=1, bias=False); self.bn1 = BN(5, 0.5); self.bn2 = BN(5)
self.fc = L.Dense(5 * 2 * 2, 3)""",
     """r = self.c1(x)
h = torch.relu(F.max_pool2d(self.bn1(r), 3, 3) + F.avg_pool2d(r, 3, 3))
h = F.max_pool2d(self.bn2(h), 2, 1)
return self.fc(h.flatten(1))""")

# g08: conv / BN / pool on a transposed tensor
case("sw_g08", "conv, BN and tiled max on transpose(h, 2, 3) (non-square)", 3, 2, 6, 9, 4, "ce",
     """c1: Conv2D(filters: 4, kernel: 3, padding: 1, activation: relu)
c2: Conv2D(filters: 5, kernel: 3, padding: 1, bias: false)
bn: BatchNorm
gap: GlobalAvgPool
fc: Dense(units: 4)""",
     """let r = transpose(c1(x), 2, 3)
let h = relu(bn(c2(r)))
h = max_pool2d(transpose(h, 2, 3), size: 2, stride: 2)
return fc(gap(h))""",
     """self.c1 = Conv(2, 4, 3, p=1); self.c2 = Conv(4, 5, 3, p=1, bias=False); self.bn = BN(5)
self.fc = L.Dense(5, 4)""",
     """r = torch.relu(self.c1(x)).transpose(2, 3)
h = torch.relu(self.bn(self.c2(r)))
h = F.max_pool2d(h.transpose(2, 3), 2, 2)
return self.fc(h.mean(dim=(2, 3)))""")

# g09: convs on channel slices, pools on spatial slices
case("sw_g09", "convs on channel slices, tiled max on a spatial slice, BN on a permuted tensor", 3, 3, 9, 8, 3, "mse",
     """c1: Conv2D(filters: 6, kernel: 3, padding: 1, activation: relu)
a: Conv2D(filters: 3, kernel: 3, padding: 1)
b: Conv2D(filters: 3, kernel: 1)
bn: BatchNorm
fl: Flatten
fc: Dense(units: 3)""",
     """let r = c1(x)
let h = a(slice(r, axis: 1, start: 0, end: 4)) + b(slice(r, axis: 1, start: 3, end: 6))
h = max_pool2d(slice(h, axis: 2, start: 1, end: 9), size: 2, stride: 2)
h = permute(bn(permute(h, [0, 2, 1, 3])), [0, 2, 1, 3])
return fc(fl(h))""",
     """self.c1 = Conv(3, 6, 3, p=1); self.a = Conv(4, 3, 3, p=1); self.b = Conv(3, 3, 1)
self.bn = BN(4); self.fc = L.Dense(3 * 4 * 4, 3)""",
     """r = torch.relu(self.c1(x))
h = self.a(r[:, 0:4]) + self.b(r[:, 3:6])
h = F.max_pool2d(h[:, :, 1:9], 2, 2)
h = self.bn(h.permute(0, 2, 1, 3)).permute(0, 2, 1, 3)
return self.fc(h.flatten(1))""")

# g10: Dense -> reshape -> conv; frozen convs
case("sw_g10", "Dense output reshaped to an image; frozen conv (dx only) after it; frozen first conv", 5, 2, 4, 6, 4, "ce",
     """f0: Conv2D(filters: 3, kernel: 1) frozen
fd: Dense(units: 48)
c1: Conv2D(filters: 4, kernel: 3, padding: 1) frozen
c2: Conv2D(filters: 3, kernel: 2, stride: 2)
fl: Flatten
fc: Dense(units: 4)""",
     """let h = relu(fd(flatten(f0(x))))
let img = reshape(h, [N, 3, 4, 4])
h = relu(c2(relu(c1(img))))
return fc(fl(h))""",
     """self.f0 = Conv(2, 3, 1); self.fd = L.Dense(72, 48); self.c1 = Conv(3, 4, 3, p=1)
self.c2 = Conv(4, 3, 2, s=2); self.fc = L.Dense(12, 4)
for p in list(self.f0.parameters()) + list(self.c1.parameters()):
    p.requires_grad_(False)""",
     """h = torch.relu(self.fd(self.f0(x).flatten(1)))
img = h.reshape(-1, 3, 4, 4)
h = torch.relu(self.c2(torch.relu(self.c1(img))))
return self.fc(h.flatten(1))""")

# g11: non-square primitive kernels, weight as an expression, same path with the expression weight
case("sw_g11", "conv2d primitive: weight * scale (expression weight) on the same path; 1x3 / 3x1 kernels", 3, 3, 7, 5, 4, "ce",
     """c1: ScaledConv(filters: 4, k: 3, padding: 1)
r1: RectConv(filters: 4, kh: 1, kw: 3, padding: 1)
r2: RectConv(filters: 5, kh: 3, kw: 1, stride: 2, bias: false)
s2: ScaledConv(filters: 5, k: 1)
fl: Flatten
fc: Dense(units: 4)""",
     """let h = relu(c1(x))
h = relu(r1(h))
h = relu(s2(r2(h)))
return fc(fl(h))""",
     """self.c1 = Scaled(3, 4, 3, 1); self.r1 = PrimConv(4, 4, 1, 3, 1, 1, True)
self.r2 = PrimConv(4, 5, 3, 1, 2, 0, False); self.s2 = Scaled(5, 5, 1, 0); self.fc = L.Dense(5 * 4 * 3, 4)""",
     """h = torch.relu(self.c1(x))
h = torch.relu(self.r1(h))
h = torch.relu(self.s2(self.r2(h)))
return self.fc(h.flatten(1))""")

# g12: pools of a concat, avg + max fan-out with different kernels giving equal shapes
case("sw_g12", "pools of a spatial concat; max 3/2 + avg 2/2 + tiled max 2 fan-out", 3, 2, 8, 8, 3, "mse",
     """c1: Conv2D(filters: 3, kernel: 3, padding: 1, activation: relu)
c2: Conv2D(filters: 3, kernel: 3, padding: 1)
fl: Flatten
fc: Dense(units: 3)""",
     """let r = c1(x)
let q = concat([r, slice(relu(c2(r)), axis: 2, start: 0, end: 4)], axis: 2)
let h = max_pool2d(q, size: 2, stride: 2) + avg_pool2d(q, size: 2, stride: 2)
return fc(fl(h))""",
     """self.c1 = Conv(2, 3, 3, p=1); self.c2 = Conv(3, 3, 3, p=1); self.fc = L.Dense(3 * 6 * 4, 3)""",
     """r = torch.relu(self.c1(x))
q = torch.cat([r, torch.relu(self.c2(r))[:, :, 0:4]], dim=2)
h = F.max_pool2d(q, 2, 2) + F.avg_pool2d(q, 2, 2)
return self.fc(h.flatten(1))""")


# g13: CKK = 1 and F = 1 (1x1 convs on one channel, direct path; one filter on the same path)
case("sw_g13", "CKK = 1 and F = 1: 1x1 single-channel single-filter convs (direct), 3x3 same with F = 1", 3, 1, 5, 7, 3, "ce",
     """c1: Conv2D(filters: 1, kernel: 1, activation: relu)
c2: Conv2D(filters: 1, kernel: 1)
c3: Conv2D(filters: 1, kernel: 3, padding: 1, bias: false)
c4: Conv2D(filters: 2, kernel: 1, stride: 2)
fl: Flatten
fc: Dense(units: 3)""",
     """let h = relu(c2(c1(x)))
h = relu(c3(h))
return fc(fl(c4(h)))""",
     """self.c1 = Conv(1, 1, 1); self.c2 = Conv(1, 1, 1); self.c3 = Conv(1, 1, 3, p=1, bias=False)
self.c4 = Conv(1, 2, 1, s=2); self.fc = L.Dense(2 * 3 * 4, 3)""",
     """h = torch.relu(self.c2(torch.relu(self.c1(x))))
h = torch.relu(self.c3(h))
return self.fc(self.c4(h).flatten(1))""")

# g14: kernels wider than the image, strides with big padding
case("sw_g14", "kernel 5 on a 1x3 image with stride 2 padding 3; 3x3 stride 3 padding 3; 5x5 same on 2x3", 5, 2, 1, 3, 4, "mse",
     """c1: Conv2D(filters: 3, kernel: 5, stride: 2, padding: 3, activation: relu)
c2: Conv2D(filters: 4, kernel: 3, stride: 3, padding: 3)
c3: Conv2D(filters: 3, kernel: 5, padding: 2)
fl: Flatten
fc: Dense(units: 4)""",
     """let h = c1(x)
h = relu(c2(h))
h = relu(c3(h))
return fc(fl(h))""",
     """self.c1 = Conv(2, 3, 5, s=2, p=3); self.c2 = Conv(3, 4, 3, s=3, p=3); self.c3 = Conv(4, 3, 5, p=2)
self.fc = L.Dense(3 * 2 * 3, 4)""",
     """h = torch.relu(self.c1(x))
h = torch.relu(self.c2(h))
h = torch.relu(self.c3(h))
return self.fc(h.flatten(1))""")

# g15: batch_stats / batch_norm primitives in a user layer, stats used with a gradient
case("sw_g15", "user layer: batch_stats used differentiably besides batch_norm (stats adjoint rule)", 3, 3, 6, 5, 3, "ce",
     """c1: Conv2D(filters: 4, kernel: 3, padding: 1, activation: relu)
c2: Conv2D(filters: 4, kernel: 3, padding: 1)
nb: StatsNorm
gap: GlobalAvgPool
fc: Dense(units: 3)""",
     """let h = nb(c2(c1(x)))
return fc(gap(relu(h)))""",
     """self.c1 = Conv(3, 4, 3, p=1); self.c2 = Conv(4, 4, 3, p=1); self.nb = StatsNorm(4); self.fc = L.Dense(4, 3)""",
     """h = self.nb(self.c2(torch.relu(self.c1(x))))
return self.fc(torch.relu(h).mean(dim=(2, 3)))""")

# g16: BatchNorm straight on the model input (no dx), and BN of a 3-D [N, C, L] tensor
case("sw_g16", "BN on the input image (only weight/bias grads), BN over a reshaped [N, C, L] tensor", 5, 3, 5, 6, 3, "ce",
     """bn0: BatchNorm(momentum: 0.3)
c1: Conv2D(filters: 4, kernel: 3, stride: 2, padding: 1, bias: false)
bn1: BatchNorm
fl: Flatten
fc: Dense(units: 3)""",
     """let h = c1(bn0(x))
let v = bn1(reshape(h, [N, 4, 9]))
return fc(fl(relu(v)))""",
     """self.bn0 = BN(3, 0.3); self.c1 = Conv(3, 4, 3, s=2, p=1, bias=False); self.bn1 = BN(4); self.fc = L.Dense(36, 3)""",
     """h = self.c1(self.bn0(x))
v = self.bn1(h.reshape(-1, 4, 9))
return self.fc(torch.relu(v).flatten(1))""")

# g17/g18: the same-path width limit (W < 24): W = 23 (shifted copies) and W = 24 (per-row loops)
for nm, w, sz in (("sw_g17", 23, 5), ("sw_g18", 24, 4)):
    ow = (w - sz) // sz + 1
    case(nm, "same 5x5 and 3x3 convs at width %d (same-path limit 24); tiled max %d" % (w, sz), 3, 2, 5, w, 3, "ce",
         """c1: Conv2D(filters: 3, kernel: 5, padding: 2, activation: relu)
c2: Conv2D(filters: 4, kernel: 3, padding: 1, bias: false)
bn: BatchNorm
fl: Flatten
fc: Dense(units: 3)""",
         """let h = c2(c1(x))
h = max_pool2d(relu(bn(h)), size: %d, stride: %d)
return fc(fl(h))""" % (sz, sz),
         """self.c1 = Conv(2, 3, 5, p=2); self.c2 = Conv(3, 4, 3, p=1, bias=False); self.bn = BN(4)
self.fc = L.Dense(4 * %d, 3)""" % (((5 - sz) // sz + 1) * ow),
         """h = self.c2(torch.relu(self.c1(x)))
h = F.max_pool2d(torch.relu(self.bn(h)), %d, %d)
return self.fc(h.flatten(1))""" % (sz, sz))

TWIN_EXTRA = '''

class Scaled(torch.nn.Module):
    def __init__(self, cin, f, k, p):
        super().__init__()
        self.p = p
        self.weight = torch.nn.Parameter(torch.empty(f, cin, k, k))
        self.scale = torch.nn.Parameter(torch.empty(f, 1, 1, 1))

    def forward(self, x):
        return F.conv2d(x, self.weight * self.scale, stride=1, padding=self.p)


class StatsNorm(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(c))
        self.bias = torch.nn.Parameter(torch.zeros(c))

    def forward(self, x):
        n, c = x.shape[:2]
        v = x.reshape(n, c, -1)
        mu = v.mean(dim=(0, 2), keepdim=True)
        var = v.var(dim=(0, 2), unbiased=False, keepdim=True)
        y = (v - mu) / torch.sqrt(var + 1e-3) * self.weight.reshape(1, c, 1) + self.bias.reshape(1, c, 1)
        return (y + v * var[0] + mu[0] * 0.5).reshape(x.shape)
'''


def indent(s, n):
    return "\n".join(" " * n + l if l else l for l in s.split("\n"))


def main():
    os.makedirs(OUT, exist_ok=True)
    for c in CASES:
        model = "".join(p.capitalize() for p in c["name"].split("_"))
        lbl = "i32[N]" if c["loss"] == "ce" else "f32[N, %d]" % c["units"]
        nn = "// %s: %s\n// generated by sweep/gen_graph.py\n" % (c["name"], c["note"])
        if "RectConv" in c["fields"] or "ScaledConv" in c["fields"] or "StatsNorm" in c["fields"]:
            nn += RECT
        nn += "model %s {\n    input x: f32[N, %d, %d, %d]\n    label y: %s\n" % (model, c["cin"], c["h"], c["w"], lbl)
        nn += indent(c["fields"], 4) + "\n    fn call(x) {\n" + indent(c["call"], 8) + "\n    }\n"
        nn += ("    loss cross_entropy(self(x), y)\n" if c["loss"] == "ce" else "    loss mse(self(x), y)\n") + "}\n"
        body = "    def __init__(self):\n        super().__init__()\n" + indent(c["twin_init"].replace("; ", "\n"), 8)
        body += "\n\n    def forward(self, x):\n" + indent(c["twin_fwd"], 8)
        py = PY_HEAD.format(name=c["name"], note=c["note"], batch=c["batch"], cin=c["cin"], h=c["h"], w=c["w"],
                            units=c["units"], loss=c["loss"], body=body)
        if "Scaled(" in py or "StatsNorm(" in py:
            py = py.replace("\n\nclass Net(", TWIN_EXTRA + "\n\nclass Net(", 1)
        with open(os.path.join(OUT, c["name"] + ".nn"), "w") as f:
            f.write(nn)
        with open(os.path.join(OUT, c["name"] + ".py"), "w") as f:
            f.write(py)
    print("%d graph cases in %s" % (len(CASES), OUT))


if __name__ == "__main__":
    main()
