"""Twin of conv_transpose.nn: torch.nn.ConvTranspose2d (F.conv_transpose2d
with groups, dilation and [h, w] stride and padding) and Conv1d."""
import torch
import torch.nn.functional as F
import nnlib as L

B = 4


class Up(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = L.param(6, 1, 3, 2)

    def forward(self, x):
        return F.conv_transpose2d(x, self.weight, stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=3)


class ConvTranspose(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.ConvTranspose2d(3, 6, 3, stride=2, padding=1, output_padding=1)
        self.up2 = Up()
        self.c1 = torch.nn.Conv1d(3, 6, 3, padding=2, dilation=2)
        self.c2 = torch.nn.Conv1d(6, 6, 3, stride=2, groups=3)
        self.fc = L.Dense(3 * 18 + 36, 4)

    def forward(self, x, s):
        u = torch.tanh(self.up(x))
        v = self.up2(u)
        q = self.c2(torch.relu(self.c1(s)))
        return self.fc(torch.cat([torch.flatten(v.mean(dim=2, keepdim=True), 1), torch.flatten(q, 1)], dim=1))


def build():
    return ConvTranspose()


def inputs(gen):
    return [torch.randn(B, 3, 8, 8, generator=gen), torch.randn(B, 3, 13, generator=gen)]


def labels(gen):
    return [torch.randint(0, 4, (B,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
