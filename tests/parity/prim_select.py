"""Twin of prim_select.nn."""
import torch
import nnlib as L

B = 5


class PrimSelect(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.wa = L.param(4, 4)
        self.pb = L.param(4)
        self.pc = L.param(3, 1)
        self.pv = L.param(4)
        self.pt = L.param(3, 4)

    def forward(self, x):
        h = x @ self.wa
        w1 = torch.where(h > 0.2, h * 2, self.pb)
        w2 = torch.where(h < self.pc, self.pb * h, h * h)
        w3 = torch.where(self.pc > 0, h + self.pc, torch.tensor(0.5, dtype=h.dtype))
        m = ((h > 0).to(h.dtype) == 1.0).to(h.dtype) * h + (h < self.pb).to(h.dtype) * 0.5
        e = self.pv.expand(x.shape[0], 3, 4) * h + self.pc.expand(-1, 4)
        t = h * self.pt
        tr = torch.tril(t) + torch.tril(t, 1) * 0.5 + torch.triu(t, -1) * 2 + torch.triu(t, 2)
        return w1 + w2 + w3 + m + e + tr


def build():
    return PrimSelect()


def inputs(gen):
    return [torch.randn(B, 3, 4, generator=gen)]


def labels(gen):
    return [torch.randn(B, 3, 4, generator=gen)]


def loss(m, xs, ys):
    return L.mse(m(*xs), ys[0])
