"""Twin of gru_stack.nn: a 4-layer bidirectional torch.nn.GRU without
biases, time-major, a head on the last step."""
import torch
import nnlib as L

B = 5


class GruStack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.GRU(3, 4, num_layers=4, bias=False, bidirectional=True)
        self.head = L.Dense(8, 3)

    def forward(self, x):
        h = self.rnn(x.transpose(0, 1))[0]        # [T, N, 8]
        return self.head(h[-1])


def build():
    return GruStack()


def inputs(gen):
    return [torch.randn(B, 2, 3, generator=gen)]


def labels(gen):
    return [torch.randint(0, 3, (B,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
