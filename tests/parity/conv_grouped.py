"""Twin of conv_grouped.nn: torch.nn.Conv2d with groups of several
channels at strides 1 and 2."""
import torch
import nnlib as L

B = 4


class ConvGrouped(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 12, 3, padding=1)
        self.g1 = torch.nn.Conv2d(12, 12, 3, padding=1, groups=4)
        self.g2 = torch.nn.Conv2d(12, 8, 5, padding=2, groups=2, bias=False)
        self.g3 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1, groups=4)
        self.g4 = torch.nn.Conv2d(16, 16, 3, stride=2, padding=1, groups=2)
        self.fc = L.Dense(16 * 16, 5)

    def forward(self, x):
        h = torch.relu(self.stem(x))
        h = torch.relu(self.g1(h)) + h
        q = self.g4(torch.tanh(self.g3(torch.tanh(self.g2(h)))))
        return self.fc(torch.flatten(q, 1))


def build():
    return ConvGrouped()


def inputs(gen):
    return [torch.randn(B, 3, 16, 16, generator=gen)]


def labels(gen):
    return [torch.randint(0, 4, (B,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
