"""Twin of conv1d.nn: torch.nn.Conv1d with padding and strides 1, 2, 3."""
import torch
import nnlib as L

B = 4


class Conv1d(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv1d(5, 16, 7, padding=3)
        self.c2 = torch.nn.Conv1d(16, 20, 5, stride=2, padding=2)
        self.c3 = torch.nn.Conv1d(20, 12, 3, padding=1)
        self.c4 = torch.nn.Conv1d(12, 8, 4, stride=2)
        self.c5 = torch.nn.Conv1d(8, 6, 3, stride=3, padding=1, bias=False)
        self.fc = L.Dense(12 + 66, 4)

    def forward(self, s):
        h = torch.relu(self.c3(torch.tanh(self.c2(torch.relu(self.c1(s))))))
        q = self.c5(self.c4(h))
        return self.fc(torch.cat([h.mean(dim=2), torch.flatten(q, 1)], dim=1))


def build():
    return Conv1d()


def inputs(gen):
    return [torch.randn(B, 5, 133, generator=gen)]


def labels(gen):
    return [torch.randint(0, 4, (B,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
