"""Twin of infer_only.nn (no loss, no labels)."""
import torch
import nnlib as L

B = 5


class InferOnly(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.flat = L.Flatten()
        self.fc1 = L.Dense(12, 9, activation="gelu")
        self.fc2 = L.Dense(9, 5)
        self.probs = L.Softmax()

    def forward(self, x):
        return self.probs(self.fc2(self.fc1(self.flat(x))))


def build():
    return InferOnly()


def inputs(gen):
    return [torch.randn(B, 3, 4, generator=gen)]
