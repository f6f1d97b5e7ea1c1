"""Twin of bce_logits.nn."""
import torch
import nnlib as L

B = 5


class BceLogits(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = L.Dense(6, 8, activation="silu")
        self.fc2 = L.Dense(8, 4)

    def forward(self, x):
        return self.fc2(self.fc1(x))


def build():
    return BceLogits()


def inputs(gen):
    return [torch.randn(B, 6, generator=gen)]


def labels(gen):
    y = torch.rand(B, 4, generator=gen)
    y[0, :2] = 0.0          # hard targets too
    y[1, 2:] = 1.0
    return [y]


def loss(m, xs, ys):
    return L.bce_with_logits(m(*xs), ys[0])
