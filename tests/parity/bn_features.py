"""Twin of bn_features.nn: torch.nn.BatchNorm1d over [N, 70] and over
[N, 7, 5], each before a relu."""
import torch
import nnlib as L


class BnFeatures(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.f1 = L.Dense(20, 70)
        self.b1 = torch.nn.BatchNorm1d(70)
        self.f2 = L.Dense(70, 35)
        self.b2 = torch.nn.BatchNorm1d(7)
        self.fc = L.Dense(35, 4)

    def forward(self, x):
        h = torch.relu(self.b1(self.f1(x)))
        s = torch.relu(self.b2(self.f2(h).reshape(-1, 7, 5)))
        return self.fc(s.flatten(1))


def build():
    return BnFeatures()


def init_weights(module, gen):
    from parity import default_init
    default_init(module, gen)
    with torch.no_grad():     # running variances must be positive
        for bn in (module.b1, module.b2):
            bn.running_var.copy_(bn.running_var.abs() + 0.5)


def inputs(gen):
    return [torch.randn(9, 20, generator=gen)]


def labels(gen):
    return [torch.randint(0, 4, (9,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
