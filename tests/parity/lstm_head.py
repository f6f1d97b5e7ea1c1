"""Twin of lstm_head.nn: torch.nn.LSTM(bias=False), a head on the last step."""
import torch
import nnlib as L

B = 5


class LstmHead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(4, 6, bias=False, batch_first=True)
        self.head = L.Dense(6, 3)

    def forward(self, x):
        return self.head(self.rnn(x)[0][:, -1])


def build():
    return LstmHead()


def inputs(gen):
    return [torch.randn(B, 8, 4, generator=gen)]


def labels(gen):
    return [torch.randint(0, 3, (B,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])


def metrics(m, xs, ys):
    return {"accuracy": L.accuracy(m(*xs), ys[0])}
