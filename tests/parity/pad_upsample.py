"""Twin of pad_upsample.nn: F.pad (constant with a value and a crop,
reflect, replicate) and nn.Upsample (nearest, bilinear with align_corners False)."""
import torch
import torch.nn.functional as F
import nnlib as L

B = 5


class PadUpsample(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = torch.nn.Conv2d(2, 3, 3, padding=1)
        self.up = torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.fc = L.Dense(3, 4)

    def forward(self, x):
        h = self.c(x)
        a = F.pad(h, (1, 2, -1, 1), value=0.5)
        b = F.pad(h, (2, 1, 1, 3), mode="reflect")
        r = F.pad(h, (3, 1, 2, 5), mode="replicate")
        u = F.interpolate(h, scale_factor=3, mode="nearest")
        v = self.up(h)
        s = (a * a).mean(dim=(2, 3)) + (b * b).mean(dim=(2, 3)) + (r * torch.tanh(r)).mean(dim=(2, 3))
        return self.fc(s + (u * torch.tanh(u)).mean(dim=(2, 3)) + (v * v).mean(dim=(2, 3)))


def build():
    return PadUpsample()


def inputs(gen):
    return [torch.randn(B, 2, 6, 5, generator=gen)]


def labels(gen):
    return [torch.randint(0, 4, (B,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
