"""Twin of attn_causal16.nn: two causal attention layers written by hand
(nnlib's CausalAttention: query/key/value/out Linear layers, a -inf mask
above the diagonal).  attn_causal_odd.py builds the same at other sizes."""
import torch
import nnlib as L

B, T, V, D = 3, 32, 7, 32


class AttnCausal(torch.nn.Module):
    def __init__(self, T, V, D, heads1):
        super().__init__()
        self.tok = torch.nn.Embedding(V, D)
        self.pos = torch.nn.Parameter(torch.randn(T, D) * 0.3)
        self.a1 = L.CausalAttention(D, heads1)
        self.a2 = L.CausalAttention(D, 1)
        self.head = L.Dense(D, V)

    def forward(self, ids):
        x = self.tok(ids.long()) + self.pos
        h = x + self.a1(x)
        return self.head(h + self.a2(h))


def build():
    return AttnCausal(T, V, D, 2)


def token_inputs(gen, T):
    return [torch.randint(0, V, (B, T), generator=gen, dtype=torch.int32)]


def token_labels(gen, T, ignore_from):
    y = torch.randint(0, V, (B, T), generator=gen, dtype=torch.int32)
    y[2, ignore_from:] = -100
    return [y]


def inputs(gen):
    return token_inputs(gen, T)


def labels(gen):
    return token_labels(gen, T, 20)


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
