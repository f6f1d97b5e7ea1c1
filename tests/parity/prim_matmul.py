"""Twin of prim_matmul.nn."""
import torch
import nnlib as L

B = 4


class PrimMatmul(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = L.param(4, 5)
        self.u = L.param(5)
        self.g = L.param(3, 4)
        self.r = L.param(3, 2)

    def forward(self, x, z):
        a = torch.matmul(x, self.w)
        o1 = torch.matmul(a, self.u)
        p = z * self.g
        q = torch.matmul(torch.transpose(z, 1, 2), self.r)
        bm = torch.matmul(p, q)
        o2 = bm.permute(0, 2, 1)
        return torch.transpose(o1 + o2, 1, 2)


def build():
    return PrimMatmul()


def inputs(gen):
    return [torch.randn(B, 2, 3, 4, generator=gen),
            torch.randn(B, 3, 4, generator=gen)]


def labels(gen):
    return [torch.randn(B, 3, 2, generator=gen)]


def loss(m, xs, ys):
    return L.mse(m(*xs), ys[0])
