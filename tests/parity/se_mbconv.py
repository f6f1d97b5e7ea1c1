"""Twin of se_mbconv.nn: nn.Conv2d (1x1, 5x5 depthwise), nn.BatchNorm2d,
F.silu, a squeeze-excitation gate, as an EfficientNet block is written."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import nnlib as L

B = 3


class Se(nn.Module):
    def __init__(self, c, squeeze=8):
        super().__init__()
        self.r = L.Dense(c, squeeze, activation="silu")
        self.e = L.Dense(squeeze, c, activation="sigmoid")

    def forward(self, x):
        return x * self.e(self.r(x.mean(dim=(2, 3))))[:, :, None, None]


class MbBlock(nn.Module):
    def __init__(self, c, out, stride=1):
        super().__init__()
        self.expand = nn.Conv2d(c, 4 * c, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(4 * c)
        self.dw = nn.Conv2d(4 * c, 4 * c, 5, stride=stride, padding=2, groups=4 * c, bias=False)
        self.bn2 = nn.BatchNorm2d(4 * c)
        self.se = Se(4 * c)
        self.proj = nn.Conv2d(4 * c, out, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out)

    def forward(self, x):
        return self.bn3(self.proj(self.se(F.silu(self.bn2(self.dw(F.silu(self.bn1(self.expand(x)))))))))


class SeMbconv(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 24, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(24)
        self.b1 = MbBlock(24, 24)
        self.b2 = MbBlock(24, 40, 2)
        self.fc = L.Dense(40, 6)

    def forward(self, x):
        s = F.silu(self.bn(self.stem(x)))
        t = s + self.b1(s)
        return self.fc(self.b2(t).mean(dim=(2, 3)))


def build():
    return SeMbconv()


def inputs(gen):
    return [torch.randn(B, 3, 16, 16, generator=gen)]


def labels(gen):
    return [torch.randint(0, 6, (B,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
