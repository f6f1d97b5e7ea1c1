"""Twin of seq_mlp.nn: fc1 = Dense(8 -> 12, relu), fc2 = Dense(12 -> 5)."""
import torch
import nnlib as L

B = 5


class SeqMlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = L.Dense(8, 12, activation="relu")
        self.fc2 = L.Dense(12, 5)

    def forward(self, x):
        return self.fc2(self.fc1(x))


def build():
    return SeqMlp()


def inputs(gen):
    return [torch.randn(B, 8, generator=gen)]


def labels(gen):
    return [torch.randint(0, 5, (B,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])


def metrics(m, xs, ys):
    return {"accuracy": L.accuracy(m(*xs), ys[0])}
