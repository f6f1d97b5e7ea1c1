"""Twin of conv_wino_any.nn: torch.nn.Conv2d at padding 1 and 0 on a 12x10
image, a residual, global average pooling and a Linear head."""
import torch
import nnlib as L

B = 3


class ConvWinoAny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 32, 3, padding=1)
        self.c2 = torch.nn.Conv2d(32, 33, 3, padding=1)
        self.c3 = torch.nn.Conv2d(33, 33, 3, padding=1)
        self.c4 = torch.nn.Conv2d(33, 34, 3, padding=0)
        self.fc = L.Dense(34, 5)

    def forward(self, x):
        h = torch.relu(self.c2(torch.relu(self.c1(x))))
        r = torch.relu(self.c3(h) + h)
        return self.fc(torch.relu(self.c4(r)).mean(dim=(2, 3)))


def build():
    return ConvWinoAny()


def inputs(gen):
    return [torch.randn(B, 3, 12, 10, generator=gen)]


def labels(gen):
    return [torch.randint(0, 5, (B,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
