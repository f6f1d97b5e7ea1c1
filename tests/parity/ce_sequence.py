"""Twin of ce_sequence.nn; labels hold -100 at a few positions."""
import torch
import nnlib as L

B = 5


class CeSequence(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = L.Dense(6, 8, activation="gelu")
        self.head = L.Dense(8, 7)

    def forward(self, x):
        return self.head(self.proj(x))


def build():
    return CeSequence()


def inputs(gen):
    return [torch.randn(B, 4, 6, generator=gen)]


def labels(gen):
    y = torch.randint(0, 7, (B, 4), generator=gen, dtype=torch.int32)
    y[0, 1] = -100
    y[2, 3] = -100
    y[3, 0] = -100
    y[4, :] = -100          # a whole example ignored
    return [y]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
