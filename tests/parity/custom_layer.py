"""Twin of custom_layer.nn: the user layer Affine and its two instances."""
import torch
import nnlib as L

B = 5


class Affine(torch.nn.Module):
    def __init__(self, in_features, units, use_bias=True, activation="identity"):
        super().__init__()
        self.weight = L.param(units, in_features)
        if use_bias:
            self.bias = L.param(units)
        else:
            self.register_parameter("bias", None)
        self.activation = L.ACT[activation]

    def forward(self, x):
        y = x @ torch.transpose(self.weight, 0, 1)
        if self.bias is not None:
            y = y + self.bias
        return self.activation(y)


class CustomLayer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Affine(7, 6, activation="tanh")
        self.head = Affine(18, 4, use_bias=False)

    def forward(self, x):
        return self.head(torch.flatten(self.inner(x), 1))


def build():
    return CustomLayer()


def inputs(gen):
    return [torch.randn(B, 3, 7, generator=gen)]


def labels(gen):
    return [torch.randn(B, 4, generator=gen)]


def loss(m, xs, ys):
    return L.mse(m(*xs), ys[0])
