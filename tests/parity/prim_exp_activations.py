"""Twin of prim_exp_activations.nn."""
import math

import torch
import torch.nn.functional as F
import nnlib as L

B = 5
BRANCHES = ["sp", "sp2", "ss", "elu", "elu2", "selu", "celu", "celu2"]
ZS = ["sp", "elu", "selu", "celu", "more"]
# the first row of xb: softplus(beta 2, threshold 3)'s threshold (1.5),
# elu's, selu's and celu's 0, softplus's linear (25) and vanishing (-30)
# regimes, and points between
EDGES = [1.5, 0.0, 25.0, -30.0, 2.0, -0.5, 0.75, -2.0]


class PrimExpActivations(torch.nn.Module):
    def __init__(self):
        super().__init__()
        for p in BRANCHES:
            setattr(self, "p_" + p, L.Dense(5, 4))
        self.p_mish = L.Dense(5, 4, activation="mish")
        for z in ZS:
            setattr(self, "z_" + z, L.param(8))

    def forward(self, x, xb):
        h = {p: getattr(self, "p_" + p)(x) for p in BRANCHES}
        r = (F.softplus(h["sp"] * 2) + F.softplus(h["sp2"], beta=2, threshold=3) + F.softsign(h["ss"] * 2)
             + F.elu(h["elu"] * 2) + F.elu(h["elu2"] * 2, alpha=0.5) + F.selu(h["selu"] * 2)
             + F.celu(h["celu"] * 2) + F.celu(h["celu2"] * 3, alpha=2.0) + self.p_mish(x) * 2
             + math.log1p(math.exp(1.0)) + math.expm1(-1))
        m = xb + self.z_more
        k = [F.softplus(xb + self.z_sp, beta=2, threshold=3), F.elu(xb + self.z_elu, alpha=0.5), F.selu(xb + self.z_selu),
             F.celu(xb + self.z_celu, alpha=2.0), F.softplus(m) + F.softsign(m) + F.mish(m)]
        return torch.cat([r] + k, dim=1)


def build():
    return PrimExpActivations()


def init_weights(module, gen):
    """The harness's default (N(0, 1/fan_in) weights, N(0, 0.25) biases),
    and the z_* exactly 0, so that xb + z sits on the boundaries."""
    with torch.no_grad():
        for name, t in module.named_parameters():
            std = 1.0 / math.sqrt(t.shape[1]) if t.dim() >= 2 else 0.5
            t.copy_(torch.randn(t.shape, generator=gen) * std)
        for z in ZS:
            getattr(module, "z_" + z).zero_()


def inputs(gen):
    xb = torch.randn(B, 8, generator=gen) * 2
    xb[0] = torch.tensor(EDGES)
    return [torch.randn(B, 5, generator=gen), xb]


def labels(gen):
    return [torch.randn(B, 44, generator=gen)]


def loss(m, xs, ys):
    return L.mse(m(*xs), ys[0])
