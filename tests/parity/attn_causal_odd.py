"""Twin of attn_causal_odd.nn: two causal attention layers written by hand
(nnlib's CausalAttention: query/key/value/out Linear layers, a -inf mask
above the diagonal)."""
import torch
import nnlib as L

B, T, V, D = 3, 21, 7, 36


class AttnCausalOdd(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(V, D)
        self.pos = torch.nn.Parameter(torch.randn(T, D) * 0.3)
        self.a1 = L.CausalAttention(D, 3)
        self.a2 = L.CausalAttention(D, 1)
        self.head = L.Dense(D, V)

    def forward(self, ids):
        x = self.tok(ids.long()) + self.pos
        h = x + self.a1(x)
        return self.head(h + self.a2(h))


def build():
    return AttnCausalOdd()


def inputs(gen):
    return [torch.randint(0, V, (B, T), generator=gen, dtype=torch.int32)]


def labels(gen):
    y = torch.randint(0, V, (B, T), generator=gen, dtype=torch.int32)
    y[2, 15:] = -100
    return [y]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
