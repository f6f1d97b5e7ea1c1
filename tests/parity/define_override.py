"""Twin of define_override.nn compiled with the -D overrides below."""
import torch
import nnlib as L

NNC_ARGS = ["-D", "hidden=7", "-D", "use_extra=true",
            "-D", "widths=[3,4]", "-D", "scale=0.5"]

SEED = 1           # accuracy strictly between 0 and 1, clear argmax margins
B = 6


class DefineOverride(torch.nn.Module):
    def __init__(self, hidden=7, widths=(3, 4), scale=0.5, classes=3):
        super().__init__()
        self.scale = scale
        self.fc_in = L.Dense(6, hidden, activation="relu")
        self.mids = torch.nn.Sequential(
            L.Dense(hidden, widths[0], activation="tanh"),
            L.Dense(widths[0], widths[1]))
        self.extra = L.Dense(hidden, widths[1])
        self.head = L.Dense(widths[1], classes)

    def forward(self, x):
        h = self.fc_in(x)
        m = h
        for i in range(2):
            m = self.mids[i](m)
        m = m + self.extra(h)
        return self.head(m * self.scale)


def build():
    return DefineOverride()


def inputs(gen):
    return [torch.randn(B, 6, generator=gen)]


def labels(gen):
    return [torch.randint(0, 3, (B,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])


def metrics(m, xs, ys):
    return {"accuracy": L.accuracy(m(*xs), ys[0])}
