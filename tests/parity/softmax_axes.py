"""Twin of softmax_axes.nn."""
import torch
import nnlib as L

B = 5


class SoftmaxAxes(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = L.param(4)
        self.v = L.param(5)

    def forward(self, x, z):
        h = torch.transpose(x * self.w, 0, 1)
        return torch.transpose(torch.softmax(h * 0.5, dim=-1), 0, 1)


def build():
    return SoftmaxAxes()


def inputs(gen):
    return [torch.randn(B, 4, generator=gen), torch.randn(B, 3, 5, generator=gen)]


def labels(gen):
    return [torch.rand(B, 4, generator=gen), torch.rand(B, 3, 5, generator=gen)]


def loss(m, xs, ys):
    mid = torch.softmax(xs[1] * m.v * 2.0, dim=1)
    return L.mse(m(*xs), ys[0]) + L.mse(mid, ys[1])
