"""Twin of fixed_rows.nn: torch.nn.Conv2d and BatchNorm2d over a fixed
batch of 2 images, num_batches_tracked included."""
import torch
import nnlib as L


class FixedRows(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(4)
        self.fc = L.Dense(4, 5)

    def forward(self, x):
        return self.fc(torch.relu(self.bn(self.conv(x))).mean(dim=(2, 3)))


def build():
    return FixedRows()


def init_weights(module, gen):
    from parity import default_init
    default_init(module, gen)
    with torch.no_grad():     # running variances must be positive
        module.bn.running_var.copy_(module.bn.running_var.abs() + 0.5)


def inputs(gen):
    return [torch.randn(2, 3, 6, 6, generator=gen)]


def labels(gen):
    return [torch.randint(0, 5, (2,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])


def metrics(m, xs, ys):
    return {"accuracy": L.accuracy(m(*xs), ys[0])}
