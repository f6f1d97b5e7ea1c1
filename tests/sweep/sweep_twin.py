"""Generic PyTorch twin for the generated sweep cases: each case's .py sets
SPEC (the same dict gen.py used for the .nn) and calls make(globals())."""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nnlib as L  # noqa: E402  (tests/parity is on sys.path: parity.py's dir)


class BN(torch.nn.Module):
    def __init__(self, c, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.weight = torch.nn.Parameter(torch.ones(c))
        self.bias = torch.nn.Parameter(torch.zeros(c))
        self.register_buffer("running_mean", torch.zeros(c))
        self.register_buffer("running_var", torch.ones(c))

    def forward(self, x):
        return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training, self.momentum, self.eps)


class PrimConv(torch.nn.Module):
    """Twin of the sweep's RectConv layer (the conv2d primitive)."""

    def __init__(self, cin, f, kh, kw, stride, padding, bias):
        super().__init__()
        self.stride, self.padding = stride, padding
        self.weight = torch.nn.Parameter(torch.empty(f, cin, kh, kw))
        if bias:
            self.bias = torch.nn.Parameter(torch.empty(f))
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        return F.conv2d(x, self.weight, self.bias, stride=self.stride, padding=self.padding)


def pool(kind, x, size, stride):
    return (F.max_pool2d if kind == "max" else F.avg_pool2d)(x, size, stride)


class Net(torch.nn.Module):
    def __init__(self, spec):
        super().__init__()
        self.spec = spec
        c = spec["cin"]
        for op in spec["trunk"]:
            k = op["op"]
            if k == "conv":
                m = torch.nn.Conv2d(c, op["f"], op["k"], stride=op["s"], padding=op["p"], bias=op["bias"])
                setattr(self, op["name"], m)
                c = op["f"]
            elif k == "rconv":
                setattr(self, op["name"], PrimConv(c, op["f"], op["kh"], op["kw"], op["s"], op["p"], op["bias"]))
                c = op["f"]
            elif k == "bn":
                setattr(self, op["name"], BN(c, op["momentum"]))
        h = spec["head"]
        feat = spec["feat"]
        if h.get("hidden"):
            self.fc1 = L.Dense(feat, h["hidden"], bias=not h.get("bn"))
            if h.get("bn"):
                self.bnf = BN(h["hidden"])
            feat = h["hidden"]
        self.fc = L.Dense(feat, h["units"])

    def forward(self, x):
        h = x
        for op in self.spec["trunk"]:
            k = op["op"]
            if k in ("conv", "rconv", "bn"):
                h = getattr(self, op["name"])(h)
                if op.get("act") == "relu":
                    h = torch.relu(h)
            elif k == "relu":
                h = torch.relu(h)
            elif k in ("max", "avg"):
                h = pool(k, h, op["size"], op["stride"])
            elif k == "fan":
                a, b = op["a"], op["b"]
                h = pool(a[0], h, a[1], a[2]) + pool(b[0], h, b[1], b[2])
            elif k == "fan3":
                # r feeds two pools and a GAP that is kept for the head
                a, b = op["a"], op["b"]
                self._side = h.mean(dim=(2, 3))
                h = pool(a[0], h, a[1], a[2]) + pool(b[0], h, b[1], b[2])
        hd = self.spec["head"]
        if hd["reduce"] == "gap":
            h = h.mean(dim=(2, 3))
        else:
            h = h.flatten(1)
        if any(op["op"] == "fan3" for op in self.spec["trunk"]):
            h = torch.cat([h, self._side], dim=1)
        if hd.get("hidden"):
            h = self.fc1(h)
            if hd.get("bn"):
                h = self.bnf(h)
            h = torch.relu(h)
        return self.fc(h)


def make(g):
    spec = g["SPEC"]
    B = spec["batch"]

    def build():
        return Net(spec)

    def init_weights(module, gen):
        from parity import default_init
        default_init(module, gen)
        with torch.no_grad():
            for name, t in module.state_dict(keep_vars=True).items():
                if name.endswith("running_var"):
                    t.copy_(t.abs() + 0.5)

    def inputs(gen):
        return [torch.randn(B, spec["cin"], spec["h"], spec["w"], generator=gen)]

    def labels(gen):
        u = spec["head"]["units"]
        if spec["head"]["loss"] == "ce":
            return [torch.randint(0, u, (B,), generator=gen, dtype=torch.int32)]
        return [torch.randn(B, u, generator=gen)]

    def loss(m, xs, ys):
        if spec["head"]["loss"] == "ce":
            return L.cross_entropy(m(*xs), ys[0])
        return L.mse(m(*xs), ys[0])

    g.update(build=build, init_weights=init_weights, inputs=inputs, labels=labels, loss=loss)
    if spec["head"]["loss"] == "ce":
        def metrics(m, xs, ys):
            return {"acc": L.accuracy(m(*xs), ys[0])}
        g["metrics"] = metrics
