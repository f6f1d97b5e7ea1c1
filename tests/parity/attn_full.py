"""Twin of attn_full.nn: two attention layers without a mask, written by
hand as one would in PyTorch (query/key/value/out Linear layers, heads
split by reshape and transpose, scores scaled by 1/sqrt(d / heads))."""
import math

import torch
import nnlib as L
from attn_causal16 import token_inputs, token_labels

B, T, V, D = 3, 10, 7, 24


class Attention(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.query, self.key, self.value, self.out = (L.Dense(d, d) for _ in range(4))

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        split = lambda z: z.reshape(b, t, h, d // h).transpose(1, 2)
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        s = q @ k.transpose(2, 3) / math.sqrt(d // h)
        a = torch.softmax(s, dim=-1) @ v
        return self.out(a.transpose(1, 2).reshape(b, t, d))


class AttnFull(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(V, D)
        self.pos = torch.nn.Parameter(torch.randn(T, D) * 0.3)
        self.a1 = Attention(D, 3)
        self.a2 = Attention(D, 4)
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


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
