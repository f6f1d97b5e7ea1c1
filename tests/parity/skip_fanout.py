"""Twin of skip_fanout.nn."""
import torch
import nnlib as L

B = 5


class SkipFanout(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = L.Dense(5, 6, activation="tanh")
        self.fc2 = L.Dense(6, 6, activation="relu")
        self.fc3 = L.Dense(6, 6)
        self.fc4 = L.Dense(6, 3)

    def forward(self, x):
        h = self.fc1(x)
        a = self.fc2(h)
        b = self.fc3(h)
        return self.fc4(a + b * h + h)


def build():
    return SkipFanout()


def inputs(gen):
    return [torch.randn(B, 5, generator=gen)]


def labels(gen):
    return [torch.randn(B, 3, generator=gen)]


def loss(m, xs, ys):
    return L.mse(m(*xs), ys[0])
