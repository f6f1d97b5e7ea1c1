"""Twin of prim_activations.nn."""
import math

import torch
import torch.nn.functional as F
import nnlib as L

B = 5
BRANCHES = ["erf", "leaky", "leaky2", "hsig", "hsig2", "hswish", "clip", "clip_lo", "clip_hi",
            "recip", "sign", "neg"]
# the first row of xb: the kinks of hard_sigmoid (-3, 3) and of
# hard_swish(xb - 6) (its -3 from 3), clip's bounds (-0.5, 0.7),
# leaky_relu's 0, and three points between
KINKS = [-3.0, 3.0, -0.5, 0.7, 0.0, 1.5, -1.0, -4.0]


def hard_sigmoid(x, alpha, beta):
    """max(0, min(1, alpha x + beta)) with the gradient alpha only strictly
    inside, as PyTorch's hardsigmoid (and nnc) for any alpha and beta."""
    t = alpha * x + beta
    return torch.where((t > 0) & (t < 1), t, t.detach().clamp(0, 1))


class PrimActivations(torch.nn.Module):
    def __init__(self):
        super().__init__()
        for p in BRANCHES:
            setattr(self, "p_" + p, L.Dense(5, 4))
        self.z = L.param(8)

    def forward(self, x, xb):
        h = {p: getattr(self, "p_" + p)(x) for p in BRANCHES}
        r = (torch.erf(h["erf"]) + F.leaky_relu(h["leaky"]) + F.leaky_relu(h["leaky2"], 0.2)
             + F.hardsigmoid(h["hsig"] * 4) + hard_sigmoid(h["hsig2"] * 4, 0.2, 0.5)
             + F.hardswish(h["hswish"] * 4) + torch.clamp(h["clip"], min=-0.5, max=0.7)
             + torch.clamp(h["clip_lo"], min=0.1) + torch.clamp(h["clip_hi"], max=-0.2)
             + torch.reciprocal(L.square(h["recip"]) + 0.5) + torch.sign(h["sign"])
             + torch.neg(h["neg"]))
        b = xb + self.z
        kinks = (F.hardsigmoid(b) + F.hardswish(b - 6) + torch.clamp(b, min=-0.5, max=0.7)
                 + F.leaky_relu(b, 0.3) + torch.clamp(b * 2, min=0.9, max=0.2))
        return torch.cat([r, kinks], dim=1)


def build():
    return PrimActivations()


def init_weights(module, gen):
    """The harness's default (N(0, 1/fan_in) weights, N(0, 0.25) biases),
    and z exactly 0, so that xb + z sits on the kinks."""
    with torch.no_grad():
        for name, t in module.named_parameters():
            std = 1.0 / math.sqrt(t.shape[1]) if t.dim() >= 2 else 0.5
            t.copy_(torch.randn(t.shape, generator=gen) * std)
        module.z.zero_()


def inputs(gen):
    xb = torch.randn(B, 8, generator=gen) * 2
    xb[0] = torch.tensor(KINKS)
    return [torch.randn(B, 5, generator=gen), xb]


def labels(gen):
    return [torch.randn(B, 12, generator=gen)]


def loss(m, xs, ys):
    return L.mse(m(*xs), ys[0])
