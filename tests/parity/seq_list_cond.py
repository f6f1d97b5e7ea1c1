"""Twin of seq_list_cond.nn (with_extra = true, with_proj = false)."""
import torch
import nnlib as L

B = 5


class SeqListCond(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.Sequential(
            *[L.Dense(8, 8, activation="tanh") for _ in range(3)])
        self.stage = torch.nn.Sequential(
            L.Dense(8, 8, activation="relu"), L.Dense(8, 6))
        self.extra = L.Dense(8, 6)
        # proj does not exist: with_proj is false

    def forward(self, x):
        h = self.blocks(x)
        h = h + self.blocks[1](x)
        o = self.stage(h)
        o = o + self.extra(h)
        return o


def build():
    return SeqListCond()


def inputs(gen):
    return [torch.randn(B, 8, generator=gen)]


def labels(gen):
    return [torch.randn(B, 6, generator=gen)]


def loss(m, xs, ys):
    return L.mse(m(*xs), ys[0])
