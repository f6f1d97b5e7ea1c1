"""Twin of attn_causal16.nn: two causal attention layers written by hand
(query/key/value/out Linear layers, a -inf mask above the diagonal)."""
import math
import torch
import nnlib as L

B, T, V, D = 3, 32, 7, 32


class Attention(torch.nn.Module):
    def __init__(self, heads):
        super().__init__()
        self.heads = heads
        self.query, self.key, self.value, self.out = (L.Dense(D, D) for _ in range(4))

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        split = lambda z: z.reshape(b, t, h, d // h).transpose(1, 2)
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        s = q @ k.transpose(2, 3) / math.sqrt(d // h)
        s = s.masked_fill(torch.triu(torch.ones(t, t, dtype=torch.bool), 1), float("-inf"))
        a = torch.softmax(s, dim=-1) @ v
        return self.out(a.transpose(1, 2).reshape(b, t, d))


class AttnCausal16(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(V, D)
        self.pos = torch.nn.Parameter(torch.randn(T, D) * 0.3)
        self.a1 = Attention(2)
        self.a2 = Attention(1)
        self.head = L.Dense(D, V)

    def forward(self, ids):
        x = self.tok(ids.long()) + self.pos
        h = x + self.a1(x)
        return self.head(h + self.a2(h))


def build():
    return AttnCausal16()


def inputs(gen):
    return [torch.randint(0, V, (B, T), generator=gen, dtype=torch.int32)]


def labels(gen):
    y = torch.randint(0, V, (B, T), generator=gen, dtype=torch.int32)
    y[2, 20:] = -100
    return [y]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
