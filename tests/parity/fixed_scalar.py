"""Twin of fixed_scalar.nn: inputs of fixed shapes, a 0-d output and label."""
import torch
import nnlib as L


class FixedScalar(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = L.Dense(3, 5, activation="tanh")
        self.w = L.param(5)

    def forward(self, a, b):
        c = torch.cat([a, b], dim=0)
        return (self.fc(c).sum(dim=0) * self.w).sum()


def build():
    return FixedScalar()


def inputs(gen):
    return [torch.randn(2, 3, generator=gen), torch.randn(4, 3, generator=gen)]


def labels(gen):
    return [torch.randn((), generator=gen)]


def loss(m, xs, ys):
    return L.mse(m(*xs), ys[0])


def metrics(m, xs, ys):
    return {"abs_err": torch.abs(m(*xs) - ys[0]).item()}
