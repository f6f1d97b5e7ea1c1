"""Twin of pool_general.nn: F.max_pool2d/avg_pool2d with pairs, dilation
and ceil_mode, and F.max_pool1d/avg_pool1d."""
import torch
import torch.nn.functional as F
import nnlib as L

B = 5


class PoolGeneral(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = torch.nn.Conv2d(2, 3, 3, padding=1)
        self.fc = L.Dense(3 * (2 * 3 + 3 * 3 + 28 + 19 + 28 + 4 * 3 + 7 * 4), 4)

    def forward(self, x):
        h = torch.tanh(self.c(x))
        a = F.max_pool2d(h, (3, 2), stride=(2, 1), padding=(1, 0))
        b = F.max_pool2d(a, 2, dilation=(1, 2), ceil_mode=True)
        d = F.avg_pool2d(h, (2, 3), stride=2, padding=(1, 1), ceil_mode=True)
        e = F.avg_pool2d(d, 2, stride=2, padding=1, count_include_pad=False, ceil_mode=True)
        s = h.reshape(h.shape[0], 3, 56)
        f = F.max_pool1d(s, 3, stride=2, padding=1, dilation=2, ceil_mode=True)
        g = F.avg_pool1d(s, 4, stride=3, ceil_mode=True)
        k = F.max_pool1d(s, 2)
        m = F.max_pool2d(h, (2, 3), stride=(2, 3), padding=(1, 1))
        q = F.avg_pool2d(h, (1, 2), stride=(1, 2))
        assert (k.shape[2], m.shape[2:], q.shape[2:]) == (28, (4, 3), (7, 4)), (k.shape, m.shape, q.shape)
        assert (a.shape[2:], b.shape[2:], d.shape[2:], e.shape[2:], f.shape[2], g.shape[2]) == \
            ((4, 7), (2, 3), (4, 5), (3, 3), 28, 19), (a.shape, b.shape, d.shape, e.shape, f.shape, g.shape)
        return self.fc(torch.cat([b.flatten(1), e.flatten(1), f.flatten(1), g.flatten(1), k.flatten(1), m.flatten(1),
                                  q.flatten(1)], 1))


def build():
    return PoolGeneral()


def inputs(gen):
    return [torch.randn(B, 2, 7, 8, generator=gen)]


def labels(gen):
    return [torch.randint(0, 4, (B,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
