"""Twin of prim_transpose.nn."""
import torch
import nnlib as L

B = 4


class PrimTranspose(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = L.param(40, 8)
        self.v = L.param(5, 8)
        self.u = L.param(30, 8)
        self.s = L.param(6, 5, 7)

    def forward(self, x, z):
        n = x.shape[0]
        a = torch.matmul(torch.transpose(x, 1, 2), self.w)
        b = torch.matmul(z.permute(0, 2, 3, 1), self.v).mean(dim=1)
        c = torch.matmul(z.permute(0, 3, 1, 2).reshape(n, 7, 30), self.u)
        d = (z.permute(0, 2, 1, 3) * self.s).mean(dim=3)
        e = (b + c).mean(dim=1) + d.mean(dim=1).mean(dim=1, keepdim=True)
        return a + e.reshape(n, 1, 8)


def build():
    return PrimTranspose()


def inputs(gen):
    return [torch.randn(B, 40, 70, generator=gen),
            torch.randn(B, 5, 6, 7, generator=gen)]


def labels(gen):
    return [torch.randn(B, 70, 8, generator=gen)]


def loss(m, xs, ys):
    return L.mse(m(*xs), ys[0])
