"""Twin of prim_elementwise.nn."""
import torch
import nnlib as L

B = 5
PRIMS = ["relu", "sigmoid", "tanh", "gelu", "gelu_tanh", "silu", "exp", "log", "sqrt",
         "rsqrt", "abs", "square", "identity", "neg"]


class PrimElementwise(torch.nn.Module):
    def __init__(self):
        super().__init__()
        for p in PRIMS:
            setattr(self, "p_" + p, L.Dense(5, 4))

    def forward(self, x):
        r = {p: getattr(self, "p_" + p)(x) for p in PRIMS}
        out = (torch.relu(r["relu"])
               + torch.sigmoid(r["sigmoid"])
               + torch.tanh(r["tanh"])
               + L.gelu(r["gelu"])
               + L.gelu_tanh(r["gelu_tanh"])
               + torch.nn.functional.silu(r["silu"])
               + torch.exp(r["exp"])
               + torch.log(L.square(r["log"]) + 1)
               + torch.sqrt(L.square(r["sqrt"]) + 1)
               + torch.rsqrt(L.square(r["rsqrt"]) + 0.5)
               + torch.abs(r["abs"])
               + L.square(r["square"])
               + r["identity"]
               - r["neg"])
        return out


def build():
    return PrimElementwise()


def inputs(gen):
    return [torch.randn(B, 5, generator=gen)]


def labels(gen):
    return [torch.randn(B, 4, generator=gen)]


def loss(m, xs, ys):
    return L.mse(m(*xs), ys[0])
