"""Twin of prim_reduce.nn.  `max` over an axis list is torch.amax."""
import torch
import nnlib as L

B = 4


class PrimReduce(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = L.param(3, 4, 5)

    def forward(self, x):
        h = x * self.w
        s1 = torch.sum(h, dim=1)
        s2 = h.sum(dim=(2, 3))
        m1 = torch.mean(h, dim=-1)
        m2 = torch.mean(h, dim=(1, -1), keepdim=True)
        x1 = torch.amax(h, dim=2)
        x2 = torch.amax(h, dim=-2, keepdim=True)
        x3 = torch.amax(h, dim=(1, 3))
        x4 = torch.amax(torch.sum(s1, dim=-1), dim=1, keepdim=True)
        o = (s2 + torch.mean(m1, dim=2) + torch.sum(x1, dim=-1)
             + torch.sum(x2, dim=(2, 3)) + torch.sum(m2, dim=(2, 3))
             + torch.sum(x3, dim=1, keepdim=True) + x4)
        return o + torch.mean(h) * torch.amax(h) - 0.01 * torch.sum(h)


def build():
    return PrimReduce()


def inputs(gen):
    return [torch.randn(B, 3, 4, 5, generator=gen)]


def labels(gen):
    return [torch.randn(B, 3, generator=gen)]


def loss(m, xs, ys):
    return L.mse(m(*xs), ys[0])
