"""Twin of lenet_like.nn: torch.nn.Conv2d with bias and relu, MaxPool2d."""
import torch
import nnlib as L

B = 5


class LenetLike(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 6, 5, padding=2)
        self.pool1 = torch.nn.MaxPool2d(2)
        self.conv2 = torch.nn.Conv2d(6, 5, 3)
        self.conv3 = torch.nn.Conv2d(5, 4, 3, padding=1)
        self.fc = L.Dense(4, 3)

    def forward(self, x):
        h = self.pool1(torch.relu(self.conv1(x)))
        h = self.conv3(torch.relu(self.conv2(h)))
        return self.fc(h.mean(dim=(2, 3)))


def build():
    return LenetLike()


def inputs(gen):
    return [torch.randn(B, 1, 12, 12, generator=gen)]


def labels(gen):
    return [torch.randint(0, 3, (B,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
