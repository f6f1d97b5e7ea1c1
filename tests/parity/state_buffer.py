"""Twin of state_buffer.nn: Center keeps a running_mean buffer."""
import torch
import nnlib as L

B = 6


class Center(torch.nn.Module):
    def __init__(self, d, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("running_mean", torch.zeros(d))

    def forward(self, x):
        c = self.running_mean
        if self.training:
            c = x.mean(dim=0)
            with torch.no_grad():
                self.running_mean.mul_(1 - self.momentum).add_(c * self.momentum)
        return x - c


class StateBuffer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = L.Dense(5, 6, activation="tanh")
        self.center = Center(6)
        self.fc2 = L.Dense(6, 4)

    def forward(self, x):
        return self.fc2(self.center(self.fc1(x)))


def build():
    return StateBuffer()


def inputs(gen):
    return [torch.randn(B, 5, generator=gen)]


def labels(gen):
    return [torch.randn(B, 4, generator=gen)]


def loss(m, xs, ys):
    return L.mse(m(*xs), ys[0])
