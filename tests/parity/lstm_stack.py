"""Twin of lstm_stack.nn: a 2-layer bidirectional torch.nn.LSTM, a head per step."""
import torch
import nnlib as L

B = 5


class LstmStack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(4, 5, num_layers=2, bidirectional=True, batch_first=True)
        self.head = L.Dense(10, 3)

    def forward(self, x):
        return self.head(self.rnn(x)[0])


def build():
    return LstmStack()


def inputs(gen):
    return [torch.randn(B, 3, 4, generator=gen)]


def labels(gen):
    return [torch.randint(0, 3, (B, 3), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
