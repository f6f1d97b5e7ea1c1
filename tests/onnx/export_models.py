"""export_models.py -- the PyTorch models that tests/onnx/check_import.py
exports to ONNX and imports: a ResNet-style CNN with BatchNorm, a
depthwise-separable CNN (ReLU6), a causal transformer with erf GELU and a
learned position embedding, an LSTM tagger, a small CNN of ops the
import writes as formulas (PReLU, PixelShuffle, InstanceNorm2d,
logsumexp), and (for the fixed-batch exports only) an LSTM tagger over
[T, N].  docs/import.md shows two of them beside the source `nnc import`
writes.
"""
import math, torch, torch.nn as nn, torch.nn.functional as F

class Block(nn.Module):
    def __init__(s, cin, cout, stride):
        super().__init__()
        s.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False); s.bn1 = nn.BatchNorm2d(cout)
        s.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False); s.bn2 = nn.BatchNorm2d(cout)
        s.downsample = None
        if stride != 1 or cin != cout:
            s.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
    def forward(s, x):
        y = F.relu(s.bn1(s.conv1(x)))
        y = s.bn2(s.conv2(y))
        return F.relu(y + (s.downsample(x) if s.downsample is not None else x))

class ResNet(nn.Module):
    def __init__(s):
        super().__init__()
        s.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False); s.bn1 = nn.BatchNorm2d(16)
        s.layer1 = nn.Sequential(Block(16, 16, 1), Block(16, 16, 1))
        s.layer2 = nn.Sequential(Block(16, 32, 2), Block(32, 32, 1))
        s.fc = nn.Linear(32, 10)
    def forward(s, x):
        x = F.relu(s.bn1(s.conv1(x)))
        x = s.layer2(s.layer1(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return s.fc(x)

class Attn(nn.Module):
    def __init__(s, d, heads):
        super().__init__()
        s.heads = heads
        s.qkv = nn.Linear(d, 3 * d); s.proj = nn.Linear(d, d)
    def forward(s, x):
        B, T, C = x.shape
        q, k, v = s.qkv(x).split(C, dim=2)
        q = q.view(B, T, s.heads, C // s.heads).transpose(1, 2)
        k = k.view(B, T, s.heads, C // s.heads).transpose(1, 2)
        v = v.view(B, T, s.heads, C // s.heads).transpose(1, 2)
        a = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
        a = a.masked_fill(~mask, float("-inf"))
        y = F.softmax(a, dim=-1) @ v
        return s.proj(y.transpose(1, 2).reshape(B, T, C))

class TBlock(nn.Module):
    def __init__(s, d, heads):
        super().__init__()
        s.ln1 = nn.LayerNorm(d); s.attn = Attn(d, heads); s.ln2 = nn.LayerNorm(d)
        s.fc = nn.Linear(d, 4 * d); s.gelu = nn.GELU(); s.proj = nn.Linear(4 * d, d)
    def forward(s, x):
        x = x + s.attn(s.ln1(x))
        return x + s.proj(s.gelu(s.fc(s.ln2(x))))

class GPT(nn.Module):
    def __init__(s, vocab=32, d=32, heads=4, T=8, n=2):
        super().__init__()
        s.wte = nn.Embedding(vocab, d); s.wpe = nn.Embedding(T, d)
        s.h = nn.ModuleList([TBlock(d, heads) for _ in range(n)])
        s.ln_f = nn.LayerNorm(d); s.head = nn.Linear(d, vocab, bias=False)
    def forward(s, idx):
        T = idx.shape[1]
        x = s.wte(idx) + s.wpe(torch.arange(T))
        for b in s.h: x = b(x)
        return s.head(s.ln_f(x))

class DSConv(nn.Module):
    def __init__(s, cin, cout, stride):
        super().__init__()
        s.dw = nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False); s.bn1 = nn.BatchNorm2d(cin)
        s.pw = nn.Conv2d(cin, cout, 1, bias=False); s.bn2 = nn.BatchNorm2d(cout)
    def forward(s, x):
        return F.relu6(s.bn2(s.pw(F.relu6(s.bn1(s.dw(x))))))

class MobileNet(nn.Module):
    def __init__(s):
        super().__init__()
        s.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU6())
        s.blocks = nn.Sequential(DSConv(16, 24, 1), DSConv(24, 48, 2), DSConv(48, 48, 1))
        s.classifier = nn.Linear(48, 10)
    def forward(s, x):
        x = s.blocks(s.stem(x))
        return s.classifier(x.mean([2, 3]))

class Tagger(nn.Module):
    def __init__(s, vocab=30, d=16, hidden=24, tags=5):
        super().__init__()
        s.emb = nn.Embedding(vocab, d); s.lstm = nn.LSTM(d, hidden, batch_first=True)
        s.out = nn.Linear(hidden, tags)
    def forward(s, ids):
        y, _ = s.lstm(s.emb(ids))
        return s.out(y)


class TaggerSeqFirst(Tagger):
    """Tagger over [T, N] ids, as nn.LSTM's default layout."""
    def __init__(s):
        super().__init__()
        s.lstm = nn.LSTM(16, 24)


class PixelNet(nn.Module):
    """PReLU (a slope per channel, then one), PixelShuffle (ONNX's
    DepthToSpace, CRD), InstanceNorm2d with affine params and logsumexp
    (ReduceLogSumExp): ops the import writes as formulas."""
    def __init__(s):
        super().__init__()
        s.conv = nn.Conv2d(3, 16, 3, 1, 1); s.act = nn.PReLU(16)
        s.shuffle = nn.PixelShuffle(2); s.norm = nn.InstanceNorm2d(4, affine=True); s.act2 = nn.PReLU()
        s.fc = nn.Linear(32, 10)
    def forward(s, x):
        x = s.act2(s.norm(s.shuffle(s.act(s.conv(x)))))
        return s.fc(torch.logsumexp(x, dim=3).flatten(1))
