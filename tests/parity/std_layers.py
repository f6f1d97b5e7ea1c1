"""Twin of std_layers.nn."""
import torch
import nnlib as L

B = 5


class StdLayers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.flat = L.Flatten()
        self.fc1 = L.Dense(8, 8)
        self.act1 = L.Act("relu")
        self.fc2 = L.Dense(8, 8)
        self.act2 = L.Act("gelu")
        self.fc3 = L.Dense(8, 8)
        self.act3 = L.Act("tanh")
        self.fc4 = L.Dense(8, 8)
        self.act4 = L.Act("sigmoid")
        self.fc5 = L.Dense(8, 7, bias=False)
        self.act5 = L.Act("silu")
        self.fc6 = L.Dense(7, 5, bias=False, activation="gelu")

    def forward(self, x):
        for layer in self.children():
            x = layer(x)
        return x


def build():
    return StdLayers()


def inputs(gen):
    return [torch.randn(B, 2, 4, generator=gen)]


def labels(gen):
    return [torch.randn(B, 5, generator=gen)]


def loss(m, xs, ys):
    return L.mse(m(*xs), ys[0])
