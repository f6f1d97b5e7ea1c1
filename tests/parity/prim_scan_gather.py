"""Twin of prim_scan_gather.nn: torch.cumsum (reverse by flipping,
exclusive by shifting), torch.gather and Tensor.float()."""
import torch
import torch.nn.functional as F
import nnlib as L

B = 5


def cumsum(x, dim, exclusive=False, reverse=False):
    if reverse:
        x = torch.flip(x, [dim])
    y = torch.cumsum(x, dim)
    if exclusive:
        y = torch.narrow(y, dim, 0, y.shape[dim] - 1)
        pad = [0, 0] * (x.dim() - 1 - dim) + [1, 0]
        y = F.pad(y, pad)
    if reverse:
        y = torch.flip(y, [dim])
    return y


class PrimScanGather(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.p = L.Dense(5, 5)
        self.q = L.Dense(5, 5)

    def forward(self, x, idx, idx2, mask):
        h = self.p(x)
        c = torch.cat([cumsum(h, 1), cumsum(h, 2, exclusive=True), cumsum(h, 1, reverse=True),
                       cumsum(h, 2, exclusive=True, reverse=True)], dim=2)
        g = self.q(x)
        g1 = torch.gather(g, 1, idx.long())
        g2 = torch.gather(g, 2, idx2.long())
        m = mask.float()
        w = torch.where(m != 0, g * 2, h) + m
        n = x.shape[0]
        return torch.cat([c.reshape(n, -1), g1.reshape(n, -1), g2.reshape(n, -1),
                          w.reshape(n, -1) * w.sum(dim=[1, 2]).reshape(n, 1)], dim=1)


def build():
    return PrimScanGather()


def inputs(gen):
    return [torch.randn(B, 4, 5, generator=gen),
            torch.randint(0, 4, (B, 3, 4), generator=gen, dtype=torch.int32),
            torch.randint(0, 5, (B, 4, 7), generator=gen, dtype=torch.int32),
            torch.randint(0, 2, (B, 4, 5), generator=gen, dtype=torch.int32)]


def labels(gen):
    return [torch.randn(B, 140, generator=gen)]


def loss(m, xs, ys):
    return L.mse(m(*xs), ys[0])
