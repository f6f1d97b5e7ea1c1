"""Twin of gpt_tiny.nn, written as one would in PyTorch (manual causal
attention with separate query/key/value/out Linear layers: nnlib's
CausalAttention)."""
import torch
import nnlib as L

B, T, V, D, H = 4, 5, 11, 8, 2


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(D)
        self.attn = L.CausalAttention(D, H)
        self.ln2 = torch.nn.LayerNorm(D)
        self.fc = L.Dense(D, 4 * D, activation="gelu")
        self.proj = L.Dense(4 * D, D)

    def forward(self, x):
        h = x + self.attn(self.ln1(x))
        return h + self.proj(self.fc(self.ln2(h)))


class GptTiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(V, D)
        self.pos = torch.nn.Parameter(torch.randn(T, D) * 0.3)
        self.blocks = torch.nn.Sequential(Block(), Block())
        self.lnf = torch.nn.LayerNorm(D)
        self.head = L.Dense(D, V)
        with torch.no_grad():       # non-trivial norms
            for mod in self.modules():
                if isinstance(mod, torch.nn.LayerNorm):
                    mod.weight.add_(0.3 * torch.randn(D))
                    mod.bias.add_(0.3 * torch.randn(D))

    def forward(self, ids):
        return self.head(self.lnf(self.blocks(self.tok(ids.long()) + self.pos)))


def build():
    return GptTiny()


def inputs(gen):
    return [torch.randint(0, V, (B, T), generator=gen, dtype=torch.int32)]


def labels(gen):
    y = torch.randint(0, V, (B, T), generator=gen, dtype=torch.int32)
    y[1, 3:] = -100
    return [y]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])
