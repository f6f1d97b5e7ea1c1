"""Twin of vision_cnn.nn with torch.nn.Conv2d, MaxPool2d, AvgPool2d and
torch.nn.BatchNorm2d/1d, num_batches_tracked included: the weights file
holds the I64 counters, and the state after a training step is compared,
counters too."""
import torch
import torch.nn.functional as F
import nnlib as L

B = 6


def bn(cls, c, momentum=0.1):
    return cls(c, momentum=momentum)


class BasicBlock(torch.nn.Module):
    def __init__(self, cin, f, stride=1):
        super().__init__()
        self.stride = stride
        self.conv1 = torch.nn.Conv2d(cin, f, 3, stride=stride, padding=1, bias=False)
        self.bn1 = bn(torch.nn.BatchNorm2d, f)
        self.conv2 = torch.nn.Conv2d(f, f, 3, padding=1, bias=False)
        self.bn2 = bn(torch.nn.BatchNorm2d, f)
        if stride != 1:
            self.proj = torch.nn.Conv2d(cin, f, 1, stride=stride, bias=False)

    def forward(self, x):
        h = torch.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return torch.relu(h + (self.proj(x) if self.stride != 1 else x))


class VisionCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 4, 3, padding=1, bias=False)
        self.bn = bn(torch.nn.BatchNorm2d, 4, momentum=0.2)
        self.b1 = BasicBlock(4, 4)
        self.b2 = BasicBlock(4, 6, stride=2)
        self.mp = torch.nn.MaxPool2d(2, stride=1)
        self.c3 = torch.nn.Conv2d(6, 6, 1)
        self.ap = torch.nn.AvgPool2d(2)
        self.mt = torch.nn.MaxPool2d(2)
        self.fc1 = L.Dense(6, 7, bias=False)
        self.bnf = bn(torch.nn.BatchNorm1d, 7)
        self.fc = L.Dense(7, 5)

    def forward(self, x):
        h = self.mp(self.b2(self.b1(torch.relu(self.bn(self.stem(x))))))
        r = torch.relu(self.c3(h))
        h = self.ap(r) + self.mt(r)
        return self.fc(self.bnf(self.fc1(h.mean(dim=(2, 3)))))


def build():
    return VisionCnn()


def init_weights(module, gen):
    from parity import default_init
    default_init(module, gen)
    with torch.no_grad():     # running variances must be positive
        for name, t in module.state_dict(keep_vars=True).items():
            if name.endswith("running_var"):
                t.copy_(t.abs() + 0.5)


def inputs(gen):
    return [torch.randn(B, 3, 9, 9, generator=gen)]


def labels(gen):
    return [torch.randint(0, 5, (B,), generator=gen, dtype=torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
