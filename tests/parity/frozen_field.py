"""Twin of frozen_field.nn: emb and head do not require grad."""
import torch
import nnlib as L

B = 5


class FrozenField(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = L.Dense(5, 6, activation="tanh")
        self.mid = L.Dense(6, 6, activation="relu")
        self.head = L.Dense(6, 3)
        for p in list(self.emb.parameters()) + list(self.head.parameters()):
            p.requires_grad_(False)

    def forward(self, x):
        return self.head(self.mid(self.emb(x)))


def build():
    return FrozenField()


def inputs(gen):
    return [torch.randn(B, 5, generator=gen)]


def labels(gen):
    return [torch.randint(0, 3, (B,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
