"""Twin of layer_hparam.nn."""
import torch
import nnlib as L

B = 5


class Skip(torch.nn.Module):
    def __init__(self, width, bias=True):
        super().__init__()
        self.f = L.Dense(width, width, bias=bias, activation="tanh")

    def forward(self, x):
        return x + self.f(x)


class LayerHparam(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Skip(5, bias=False)
        self.b = Skip(5)
        self.head = L.Dense(5, 3)

    def forward(self, x):
        return self.head(self.b(self.a(x)))


def build():
    return LayerHparam()


def inputs(gen):
    return [torch.randn(B, 5, generator=gen)]


def labels(gen):
    return [torch.randn(B, 3, generator=gen)]


def loss(m, xs, ys):
    return L.mse(m(*xs), ys[0])
