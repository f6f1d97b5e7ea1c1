"""Twin of prim_resize.nn: F.interpolate in modes nearest, nearest-exact,
bilinear, bicubic (align_corners False and True) and linear."""
import torch
import torch.nn.functional as F
import nnlib as L

B = 5


def sq(t):
    return (t * t).mean(dim=tuple(range(2, t.dim())))


def th(t):
    return (t * torch.tanh(t)).mean(dim=tuple(range(2, t.dim())))


class PrimResize(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = torch.nn.Conv2d(2, 3, 3, padding=1)
        self.fc = L.Dense(3, 4)

    def forward(self, x):
        h = self.c(x)
        a = F.interpolate(h, size=(9, 13), mode="nearest")
        b = F.interpolate(h, size=(4, 11), mode="nearest-exact")
        d = F.interpolate(h, size=(9, 13), mode="bilinear", align_corners=False)
        e = F.interpolate(h, size=(4, 3), mode="bilinear", align_corners=True)
        f = F.interpolate(h, scale_factor=1.5, mode="bilinear", align_corners=False)
        g = F.interpolate(h, size=(11, 7), mode="bicubic", align_corners=False)
        i = F.interpolate(h, size=(4, 8), mode="bicubic", align_corners=True)
        l = F.interpolate(h.reshape(h.shape[0], 3, 30), size=17, mode="linear", align_corners=False)
        s = th(a) + sq(b) + th(d) + sq(e) + th(f) + sq(g) + th(i) + sq(l)
        return self.fc(s)


def build():
    return PrimResize()


def inputs(gen):
    return [torch.randn(B, 2, 6, 5, generator=gen)]


def labels(gen):
    return [torch.randint(0, 4, (B,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
