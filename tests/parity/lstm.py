"""Twin of lstm.nn: torch.nn.LSTM, its output sequence."""
import torch
import nnlib as L

B = 5


class Lstm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(4, 6, batch_first=True)

    def forward(self, x):
        return self.rnn(x)[0]


def build():
    return Lstm()


def inputs(gen):
    return [torch.randn(B, 5, 4, generator=gen)]


def labels(gen):
    return [torch.randn(B, 5, 6, generator=gen) * 0.5]


def loss(m, xs, ys):
    return L.mse(m(*xs), ys[0])
