"""Twin of conv_groups.nn: torch.nn.Conv2d with groups (depthwise
included), dilation, a rectangular kernel and [h, w] stride and padding."""
import torch
import nnlib as L

B = 5


class Rect(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(12, 6, (3, 2), stride=(2, 1), padding=(1, 0), groups=3)
        # the state_dict's names are rect.weight and rect.bias
        self.weight = self.conv.weight
        self.bias = self.conv.bias
        del self.conv

    def forward(self, x):
        return torch.nn.functional.conv2d(x, self.weight, self.bias, stride=(2, 1), padding=(1, 0), groups=3)


class ConvGroups(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 6, 3, padding=1)
        self.grouped = torch.nn.Conv2d(6, 6, 3, padding=2, dilation=2, groups=3)
        self.depthwise = torch.nn.Conv2d(6, 12, 3, stride=2, padding=1, groups=6)
        self.rect = Rect()
        self.fc = L.Dense(54, 5)

    def forward(self, x):
        h = torch.relu(self.stem(x))
        g = torch.relu(self.grouped(h)) + h
        d = torch.tanh(self.depthwise(g))
        r = torch.relu(self.rect(d))
        return self.fc(torch.flatten(r, 1))


def build():
    return ConvGroups()


def inputs(gen):
    return [torch.randn(B, 3, 11, 8, generator=gen)]


def labels(gen):
    return [torch.randint(0, 5, (B,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
