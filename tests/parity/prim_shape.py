"""Twin of prim_shape.nn."""
import torch
import nnlib as L

B = 5


class PrimShape(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = L.param(12)
        self.g = L.param(2, 3)

    def forward(self, x, z):
        n = x.shape[0]
        h = x * self.w
        r = torch.reshape(h, (n, 3, 4))
        r2 = torch.reshape(L.square(h), (n, -1, 2))
        s = r[:, 1:3]
        c = torch.cat([s, z * self.g], dim=2)
        c2 = c[:, :, 2:7]
        return torch.cat([torch.flatten(r2, 1) * 0.5, torch.flatten(c2, 1)], dim=1)


def build():
    return PrimShape()


def inputs(gen):
    return [torch.randn(B, 12, generator=gen), torch.randn(B, 2, 3, generator=gen)]


def labels(gen):
    return [torch.randn(B, 22, generator=gen)]


def loss(m, xs, ys):
    return L.mse(m(*xs), ys[0])
