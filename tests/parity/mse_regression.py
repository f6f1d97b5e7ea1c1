"""Twin of mse_regression.nn."""
import torch
import nnlib as L

B = 5


class MseRegression(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = L.Dense(5, 10, activation="sigmoid")
        self.fc2 = L.Dense(10, 3)

    def forward(self, x):
        return self.fc2(self.fc1(x))


def build():
    return MseRegression()


def inputs(gen):
    return [torch.randn(B, 5, generator=gen)]


def labels(gen):
    return [torch.randn(B, 3, generator=gen)]


def loss(m, xs, ys):
    return L.mse(m(*xs), ys[0])


def metrics(m, xs, ys):
    return {"mae": torch.mean(torch.abs(m(*xs) - ys[0])).item()}
