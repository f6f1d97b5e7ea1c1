"""Twin of argmax_metric.nn: one-hot labels, argmax to class ids."""
import torch
import nnlib as L

SEED = 1           # accuracy strictly between 0 and 1, clear argmax margins
B = 8


class ArgmaxMetric(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = L.Dense(6, 4)

    def forward(self, x):
        return self.fc(x)


def build():
    return ArgmaxMetric()


def inputs(gen):
    return [torch.randn(B, 6, generator=gen)]


def labels(gen):
    ids = torch.randint(0, 4, (B,), generator=gen)
    return [torch.nn.functional.one_hot(ids, 4).to(torch.float32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), torch.argmax(ys[0], dim=1))


def metrics(m, xs, ys):
    out = m(*xs)
    return {"accuracy": L.accuracy(out, torch.argmax(ys[0], dim=-1)),
            "brier": L.mse(torch.softmax(out, dim=-1), ys[0]).item()}
