"""Twin of dropout_prim.nn (checked in inference mode only)."""
import torch
import torch.nn.functional as F
import nnlib as L

CHECKS = ["predict", "eval"]
B = 5


class DropoutPrim(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = L.Dense(6, 10, activation="relu")
        self.fc2 = L.Dense(10, 3)

    def forward(self, x):
        return self.fc2(F.dropout(self.fc1(x), p=0.3, training=self.training))


def build():
    return DropoutPrim()


def inputs(gen):
    return [torch.randn(B, 6, generator=gen)]


def labels(gen):
    return [torch.randint(0, 3, (B,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])


def metrics(m, xs, ys):
    return {"accuracy": L.accuracy(m(*xs), ys[0])}
