"""Twin of seq_dropout.nn (checked in inference mode only)."""
import torch
import nnlib as L

CHECKS = ["predict", "eval"]
B = 5


class SeqDropout(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = L.Dense(8, 10, activation="relu")
        self.drop = L.Dropout(0.25)
        self.fc2 = L.Dense(10, 4)

    def forward(self, x):
        return self.fc2(self.drop(self.fc1(x)))


def build():
    return SeqDropout()


def inputs(gen):
    return [torch.randn(B, 8, generator=gen)]


def labels(gen):
    return [torch.randint(0, 4, (B,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])


def metrics(m, xs, ys):
    return {"accuracy": L.accuracy(m(*xs), ys[0])}
