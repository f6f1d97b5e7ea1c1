"""Twin of pool_padding.nn: torch.nn.MaxPool2d/AvgPool2d with padding,
count_include_pad true and false."""
import torch
import torch.nn.functional as F
import nnlib as L

B = 5


class PoolPadding(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = torch.nn.Conv2d(2, 3, 3, padding=1)
        self.mp = torch.nn.MaxPool2d(3, stride=2, padding=1)
        self.ai = torch.nn.AvgPool2d(3, stride=1, padding=1)
        self.ae = torch.nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)
        self.m2 = torch.nn.MaxPool2d(2, padding=1)
        self.fc = L.Dense(12, 4)

    def forward(self, x):
        h = self.mp(torch.relu(self.c(x)) - 0.5)
        a = self.ai(h) + F.avg_pool2d(h, 2, stride=2, padding=1).mean(dim=(2, 3), keepdim=True)
        b = self.ae(a)
        return self.fc(torch.flatten(self.m2(b), 1))


def build():
    return PoolPadding()


def inputs(gen):
    return [torch.randn(B, 2, 9, 9, generator=gen)]


def labels(gen):
    return [torch.randint(0, 4, (B,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
