"""Twin of pool_wide.nn: F.avg_pool2d (count_include_pad true and false)
and F.max_pool2d with padding and overlapping windows on 34x36 images."""
import torch
import torch.nn.functional as F
import nnlib as L

B = 4


class PoolWide(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = torch.nn.Conv2d(2, 3, 3, padding=1)
        self.fc = L.Dense(3, 4)

    def forward(self, x):
        h = torch.relu(self.c(x)) - 0.5
        a = F.avg_pool2d(h, 3, stride=1, padding=1)
        e = F.avg_pool2d(a, 3, stride=2, padding=1, count_include_pad=False)
        m = F.max_pool2d(h, 3, stride=1, padding=1) * a
        t = F.avg_pool2d(m, 2, stride=2)
        p = F.max_pool2d(t + e, 3, stride=2, padding=1)
        return self.fc(p.mean(dim=(2, 3)))


def build():
    return PoolWide()


def inputs(gen):
    return [torch.randn(B, 2, 34, 36, generator=gen)]


def labels(gen):
    return [torch.randint(0, 4, (B,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
