"""Twin of attn_full.nn: two attention layers without a mask (nnlib's
CausalAttention with causal=False: query/key/value/out Linear layers,
heads split by reshape and transpose, scores scaled by 1/sqrt(d /
heads))."""
import torch
import nnlib as L
from attn_causal16 import loss, token_inputs, token_labels  # noqa: F401 (loss: the harness's)

B, T, V, D = 3, 10, 7, 24


class AttnFull(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(V, D)
        self.pos = torch.nn.Parameter(torch.randn(T, D) * 0.3)
        self.a1 = L.CausalAttention(D, 3, causal=False)
        self.a2 = L.CausalAttention(D, 4, causal=False)
        self.head = L.Dense(D, V)

    def forward(self, ids):
        x = self.tok(ids.long()) + self.pos
        h = x + self.a1(x)
        return self.head(h + self.a2(h))


def build():
    return AttnFull()


def inputs(gen):
    return token_inputs(gen, T)


def labels(gen):
    return token_labels(gen, T, 6)
