"""Twin of list_join.nn."""
import torch
import nnlib as L

B = 5


class ListJoin(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc0 = L.Dense(3, 6, activation="tanh")
        self.fc1 = L.Dense(6, 5, activation="tanh")
        self.fc2 = L.Dense(5, 4)

    def forward(self, x):
        f = self.fc2(self.fc1(self.fc0(x)))
        d = [f, torch.sigmoid(f), f, torch.tanh(f)]
        return torch.cat([t * (i + 1) for i, t in enumerate(d)], dim=1)


def build():
    return ListJoin()


def inputs(gen):
    return [torch.randn(B, 3, generator=gen)]


def labels(gen):
    return [torch.randn(B, 16, generator=gen)]


def loss(m, xs, ys):
    return L.mse(m(*xs), ys[0])
