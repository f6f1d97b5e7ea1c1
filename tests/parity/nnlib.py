"""nnlib.py — PyTorch twins of the nn standard library and primitives.

The case files (<case>.py) build their reference modules from these so that
each twin reads like its .nn model.  Every twin keeps PyTorch's own param
names (weight, bias) so that `state_dict()` keys equal the names nnc gives
the same params (spec: generated-c.md "Checkpoints").

Semantics follow language.md §7/§8:
  - Dense: weight [units, in], y = activation(x @ weightᵀ + bias), over the
    last dim of any-rank input;
  - gelu is the exact (erf) form, PyTorch's default; gelu_tanh is
    approximate="tanh";
  - cross_entropy takes class ids with the class axis last, ignores -100 and
    averages over the other positions;
  - mse and bce_with_logits are means;
  - accuracy is the fraction of positions whose argmax over the last axis
    equals the label.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F


def gelu(x):
    return F.gelu(x)


def gelu_tanh(x):
    return F.gelu(x, approximate="tanh")


def rsqrt(x):
    return torch.rsqrt(x)


def square(x):
    return x * x


def identity(x):
    return x


# The unary elementwise primitives of §7, by their nn names (for fn hparams).
ACT = {
    "identity": identity,
    "relu": torch.relu,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "gelu": gelu,
    "gelu_tanh": gelu_tanh,
    "silu": F.silu,
    "exp": torch.exp,
    "log": torch.log,
    "sqrt": torch.sqrt,
    "rsqrt": rsqrt,
    "abs": torch.abs,
    "square": square,
    "softplus": F.softplus,
    "softsign": F.softsign,
    "elu": F.elu,
    "selu": F.selu,
    "celu": F.celu,
    "mish": F.mish,
}


def param(*shape):
    """An uninitialized trainable param; the harness fills it (seeded)."""
    return nn.Parameter(torch.empty(*shape))


class Dense(nn.Module):
    """Twin of the std `Dense(units, bias = true, activation = identity)`."""

    def __init__(self, in_features, units, bias=True, activation="identity"):
        super().__init__()
        self.weight = param(units, in_features)
        if bias:
            self.bias = param(units)
        else:
            self.register_parameter("bias", None)
        self.activation = ACT[activation]

    def forward(self, x):
        y = x @ self.weight.t()
        if self.bias is not None:
            y = y + self.bias
        return self.activation(y)


class Act(nn.Module):
    """Twin of the parameterless std layers ReLU, GELU, Tanh, Sigmoid, SiLU."""

    def __init__(self, name):
        super().__init__()
        self.fn = ACT[name]

    def forward(self, x):
        return self.fn(x)


class Flatten(nn.Module):
    """Twin of std `Flatten`: all dims but the first into one."""

    def forward(self, x):
        return torch.flatten(x, 1)


class Softmax(nn.Module):
    """Twin of std `Softmax` (over the last axis)."""

    def forward(self, x):
        return torch.softmax(x, dim=-1)


class Dropout(nn.Module):
    """Twin of std `Dropout(rate)`: identity when not training."""

    def __init__(self, rate):
        super().__init__()
        self.rate = rate

    def forward(self, x):
        return F.dropout(x, p=self.rate, training=self.training)


class CausalAttention(nn.Module):
    """Twin of std `MultiHeadAttention(heads, causal: true)` on [b, t, d],
    written by hand as one would in PyTorch: separate query/key/value/out
    Dense layers, scores scaled by 1/sqrt(d / heads), -inf above the
    diagonal, softmax, @ v.  causal=False: `MultiHeadAttention(heads)`,
    no mask."""

    def __init__(self, d, heads, causal=True):
        super().__init__()
        self.heads = heads
        self.causal = causal
        self.query, self.key, self.value, self.out = (Dense(d, d) for _ in range(4))

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        split = lambda z: z.reshape(b, t, h, d // h).transpose(1, 2)
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        s = q @ k.transpose(2, 3) / math.sqrt(d // h)
        if self.causal:
            s = s.masked_fill(torch.triu(torch.ones(t, t, dtype=torch.bool), 1), float("-inf"))
        a = torch.softmax(s, dim=-1) @ v
        return self.out(a.transpose(1, 2).reshape(b, t, d))


class Residual(nn.Module):
    """Twin of std `Residual(body)`: x + body(x).  The sub-layer is named
    `body` (the hparam's name) — see README, an assumption about std.nn."""

    def __init__(self, body):
        super().__init__()
        self.body = body

    def forward(self, x):
        return x + self.body(x)


# ---- losses and metrics ------------------------------------------------------

def cross_entropy(logits, labels):
    """§7 cross_entropy: class axis last, -100 ignored, mean over the rest."""
    v = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, v), labels.reshape(-1).long(),
                           ignore_index=-100, reduction="mean")


def mse(a, b):
    return F.mse_loss(a, b, reduction="mean")


def bce_with_logits(logits, targets):
    return F.binary_cross_entropy_with_logits(logits, targets, reduction="mean")


def accuracy(logits, labels):
    """§7 accuracy: fraction of positions whose argmax is the label."""
    hit = logits.argmax(dim=-1) == labels.long()
    return hit.double().mean().item()
