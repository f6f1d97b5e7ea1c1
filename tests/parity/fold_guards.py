"""Twin of fold_guards.nn: a convolution with a tanh'd bias and relu, then a
plain convolution whose bias param is never used."""
import torch
import torch.nn.functional as F
import nnlib as L

B = 4


class LateBias(torch.nn.Module):
    def __init__(self, cin, f):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(f, cin, 3, 3))
        self.bias = torch.nn.Parameter(torch.zeros(f))

    def forward(self, x):
        return torch.relu(F.conv2d(x, self.weight, padding=1) + torch.tanh(self.bias).reshape(-1, 1, 1))


class RootConv(torch.nn.Module):
    def __init__(self, cin, f):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(f, cin, 3, 3))
        self.bias = torch.nn.Parameter(torch.zeros(f))

    def forward(self, x):
        return F.conv2d(x, self.weight, padding=1)


class FoldGuards(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = LateBias(2, 3)
        self.b = RootConv(3, 3)

    def forward(self, x):
        return self.b(self.a(x))


def build():
    return FoldGuards()


def inputs(gen):
    return [torch.randn(B, 2, 6, 6, generator=gen)]


def labels(gen):
    return [torch.randn(B, 3, 6, 6, generator=gen)]


def loss(m, xs, ys):
    return L.mse(m(*xs), ys[0])
