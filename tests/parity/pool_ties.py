"""Twin of pool_ties.nn: torch.nn.MaxPool2d on integer-valued conv outputs
(many ties), so the gradient's routing to the first maximum is checked."""
import torch
import nnlib as L

B = 5


class PoolTies(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = torch.nn.Conv2d(2, 3, 3, padding=1, bias=False)
        self.mt = torch.nn.MaxPool2d(2)
        self.mo = torch.nn.MaxPool2d(2, stride=1)
        self.fc = L.Dense(3, 4)

    def forward(self, x):
        h = self.c(x)
        return self.fc(self.mt(torch.relu(h)).mean(dim=(2, 3)) + self.mo(h).mean(dim=(2, 3)))


def build():
    return PoolTies()


def init_weights(module, gen):
    from parity import default_init
    default_init(module, gen)
    with torch.no_grad():     # integer taps in {-1, 0, 1}
        module.c.weight.copy_(torch.randint(-1, 2, module.c.weight.shape, generator=gen).float())


def inputs(gen):
    # {0, 1}: integer sums of up to 18 terms, equal at many positions
    return [torch.randint(0, 2, (B, 2, 6, 6), generator=gen).float()]


def labels(gen):
    return [torch.randint(0, 4, (B,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
