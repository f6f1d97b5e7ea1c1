#!/usr/bin/python3
"""torch_bench.py — the PyTorch side of the nnc training-step benchmark.

    /usr/bin/python3 torch_bench.py MODEL [--threads T] [--batch B] [--warmup W]
        [--min-iters N] [--min-time S] [--max-iters M] [--lr LR] [--seed S]

Times exactly what bench/src/harness.c times for the nnc side: one training
step = forward + F.cross_entropy + opt.zero_grad() + loss.backward() +
opt.step() with torch.optim.Adam or AdamW (defaults, as the model's entry
says), on one fixed batch of random inputs and labels; W warm-up steps, then steps timed one by one
(time.perf_counter) until at least N steps and S seconds (at most M);
median and minimum reported, with the medians of the phases (forward +
loss, zero_grad + backward, optimizer step) timed within the same steps.

Threads: torch.set_num_threads(T) (--threads, else OMP_NUM_THREADS, else 1)
sets the threads of torch's own kernels (libgomp); Debian's torch does its
GEMMs in OpenBLAS, whose threads set_num_threads does not reach: they come
from OPENBLAS_NUM_THREADS in the environment, which bench/run.sh sets per
run (it tries several torch x OpenBLAS combinations and keeps the fastest).
The OpenBLAS thread count and kernel (openblas_get_corename) actually in
effect in this process are read back through ctypes and printed.

To add a model: add a builder to MODELS returning (module, inputs, labels)
with the shapes of the .nn model; the module's output and the labels go to
F.cross_entropy as they are (a sequence model returns [N*T, V] logits and
gets [N*T] labels).
"""
import argparse
import ctypes
import math
import os
import resource
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def mlp(sizes):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def classifier(sizes):
    def build(batch):
        model = mlp(sizes)
        x = torch.randn(batch, sizes[0])
        y = torch.randint(0, sizes[-1], (batch,))
        return model, (x,), y
    return build


class SelfAttention(nn.Module):
    """Hand-written attention, as std MultiHeadAttention: separate
    query/key/value/out Linear layers, scores, softmax, @ v (no fused
    scaled_dot_product_attention); with ctx, causal: masked_fill(-inf)
    above the diagonal first."""

    def __init__(self, d, heads, ctx=None):
        super().__init__()
        self.heads = heads
        self.query, self.key, self.value, self.out = (nn.Linear(d, d) for _ in range(4))
        mask = None if ctx is None else torch.triu(torch.ones(ctx, ctx, dtype=torch.bool), 1)
        self.register_buffer("mask", mask, persistent=False)  # state_dict as nnc's

    def forward(self, x):
        b, t, d = x.shape
        hd = d // self.heads

        def split(z):  # [b, t, d] -> [b, heads, t, hd]
            return z.reshape(b, t, self.heads, hd).transpose(1, 2)

        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        s = (q @ k.transpose(2, 3)) * (1.0 / math.sqrt(hd))
        if self.mask is not None:
            s = s.masked_fill(self.mask[:t, :t], float("-inf"))
        a = torch.softmax(s, dim=-1) @ v
        return self.out(a.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    """Pre-LayerNorm transformer block with a 4x GELU (tanh) MLP."""

    def __init__(self, d, heads, ctx):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = SelfAttention(d, heads, ctx)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.gelu = nn.GELU(approximate="tanh")
        self.proj = nn.Linear(4 * d, d)

    def forward(self, x):
        h = x + self.attn(self.ln1(x))
        return h + self.proj(self.gelu(self.fc(self.ln2(h))))


class Gpt(nn.Module):
    """Twin of bench/gpt_mini.nn: token Embedding + learned positions,
    pre-LayerNorm blocks, final LayerNorm, Linear head; returns [N*T, V]."""

    def __init__(self, vocab, ctx, d, heads, layers):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(ctx, d) * 0.02)
        self.blocks = nn.Sequential(*(Block(d, heads, ctx) for _ in range(layers)))
        self.lnf = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        logits = self.head(self.lnf(self.blocks(self.tok(ids) + self.pos)))
        return logits.reshape(-1, logits.shape[-1])


def gpt(vocab, ctx, d, heads, layers):
    def build(batch):
        model = Gpt(vocab, ctx, d, heads, layers)
        ids = torch.randint(0, vocab, (batch, ctx))      # int64, as nn.Embedding wants
        y = torch.randint(0, vocab, (batch * ctx,))      # labels of [N, T], flattened
        return model, (ids,), y
    return build


class Lenet5(nn.Module):
    """Twin of bench/lenet5.nn: LeNet-5 on 1x28x28 (conv 6@5x5 pad 2, relu,
    max pool 2; conv 16@5x5, relu, max pool 2; fc 120, 84, 10 with relu).
    Field names and order as nnc's, so the flat parameters line up."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.pool2 = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, classes)

    def forward(self, x):
        h = self.pool1(torch.relu(self.conv1(x)))
        h = self.pool2(torch.relu(self.conv2(h)))
        h = torch.relu(self.fc1(h.flatten(1)))
        return self.fc3(torch.relu(self.fc2(h)))


class BasicBlock(nn.Module):
    """bench/resnet_small.nn's BasicBlock: two 3x3 convs (bias=False) with
    BatchNorm2d, and a 1x1 projection with BatchNorm2d where the stride or
    the width changes."""

    def __init__(self, cin, filters, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, filters, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(filters)
        self.conv2 = nn.Conv2d(filters, filters, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(filters)
        self.project = stride != 1 or cin != filters
        if self.project:
            self.proj = nn.Conv2d(cin, filters, 1, stride=stride, bias=False)
            self.proj_bn = nn.BatchNorm2d(filters)

    def forward(self, x):
        h = torch.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return torch.relu(h + (self.proj_bn(self.proj(x)) if self.project else x))


class ResnetSmall(nn.Module):
    """Twin of bench/resnet_small.nn (= models/resnet.nn): 3x3 stem (16) with
    BatchNorm2d and relu, stages of two BasicBlocks at 16, 32 (stride 2),
    64 (stride 2) channels, global average pooling, Linear(64, 10).  Field
    names and order as nnc's (state_dict as nnc's, the BatchNorm2d
    num_batches_tracked counters included)."""

    def __init__(self, widths=(16, 32, 64), classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, widths[0], 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(widths[0])
        self.stage1 = nn.Sequential(BasicBlock(widths[0], widths[0]), BasicBlock(widths[0], widths[0]))
        self.stage2 = nn.Sequential(BasicBlock(widths[0], widths[1], 2), BasicBlock(widths[1], widths[1]))
        self.stage3 = nn.Sequential(BasicBlock(widths[1], widths[2], 2), BasicBlock(widths[2], widths[2]))
        self.fc = nn.Linear(widths[2], classes)

    def forward(self, x):
        h = torch.relu(self.bn(self.stem(x)))
        h = self.stage3(self.stage2(self.stage1(h)))
        return self.fc(h.mean(dim=(2, 3)))


class Resnet18(nn.Module):
    """Twin of bench/resnet18.nn: a 7x7 stride-2 stem (24, bias=False) with
    BatchNorm2d and relu (64x64 -> 32x32, no max pool), four stages of two
    BasicBlocks at 24, 48 (stride 2), 96 (stride 2), 192 (stride 2)
    channels, global average pooling, Linear(192, 200).  Field names and
    order as nnc's."""

    def __init__(self, widths=(24, 48, 96, 192), classes=200):
        super().__init__()
        self.stem = nn.Conv2d(3, widths[0], 7, stride=2, padding=3, bias=False)
        self.bn = nn.BatchNorm2d(widths[0])
        self.stage1 = nn.Sequential(BasicBlock(widths[0], widths[0]), BasicBlock(widths[0], widths[0]))
        self.stage2 = nn.Sequential(BasicBlock(widths[0], widths[1], 2), BasicBlock(widths[1], widths[1]))
        self.stage3 = nn.Sequential(BasicBlock(widths[1], widths[2], 2), BasicBlock(widths[2], widths[2]))
        self.stage4 = nn.Sequential(BasicBlock(widths[2], widths[3], 2), BasicBlock(widths[3], widths[3]))
        self.fc = nn.Linear(widths[3], classes)

    def forward(self, x):
        h = torch.relu(self.bn(self.stem(x)))
        h = self.stage4(self.stage3(self.stage2(self.stage1(h))))
        return self.fc(h.mean(dim=(2, 3)))


class VggSmall(nn.Module):
    """Twin of bench/vgg_small.nn: three stages of two 3x3 convolutions
    (padding 1, bias, relu) and a 2x2 max pool at 24, 48, 96 channels on
    3x32x32, then Linear(1536, 128), relu, Linear(128, 10).  Field names
    and order as nnc's."""

    def __init__(self, widths=(24, 48, 96), classes=10):
        super().__init__()
        c = [3, *widths]
        self.conv1a = nn.Conv2d(c[0], c[1], 3, padding=1)
        self.conv1b = nn.Conv2d(c[1], c[1], 3, padding=1)
        self.pool1 = nn.MaxPool2d(2)
        self.conv2a = nn.Conv2d(c[1], c[2], 3, padding=1)
        self.conv2b = nn.Conv2d(c[2], c[2], 3, padding=1)
        self.pool2 = nn.MaxPool2d(2)
        self.conv3a = nn.Conv2d(c[2], c[3], 3, padding=1)
        self.conv3b = nn.Conv2d(c[3], c[3], 3, padding=1)
        self.pool3 = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(c[3] * 4 * 4, 128)
        self.fc2 = nn.Linear(128, classes)

    def forward(self, x):
        h = self.pool1(torch.relu(self.conv1b(torch.relu(self.conv1a(x)))))
        h = self.pool2(torch.relu(self.conv2b(torch.relu(self.conv2a(h)))))
        h = self.pool3(torch.relu(self.conv3b(torch.relu(self.conv3a(h)))))
        return self.fc2(torch.relu(self.fc1(h.flatten(1))))


class Cnn48(nn.Module):
    """Twin of bench/cnn48.nn: conv 32@5x5 stride 2 padding 2, relu; conv
    40@3x3 padding 1, relu; max pool 2; conv 80@3x3, relu, twice; average
    pool 2; Linear(2880, 10).  Field names and order as nnc's."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 5, stride=2, padding=2)
        self.conv2 = nn.Conv2d(32, 40, 3, padding=1)
        self.pool1 = nn.MaxPool2d(2)
        self.conv3 = nn.Conv2d(40, 80, 3, padding=1)
        self.conv4 = nn.Conv2d(80, 80, 3, padding=1)
        self.pool2 = nn.AvgPool2d(2)
        self.fc = nn.Linear(80 * 6 * 6, classes)

    def forward(self, x):
        h = self.pool1(torch.relu(self.conv2(torch.relu(self.conv1(x)))))
        h = self.pool2(torch.relu(self.conv4(torch.relu(self.conv3(h)))))
        return self.fc(h.flatten(1))


class Separable(nn.Module):
    """bench/mobile_dw.nn's Separable: a 3x3 depthwise convolution (groups =
    channels, padding 1, the block's stride) and a 1x1 one, each with relu."""

    def __init__(self, cin, filters, stride=1):
        super().__init__()
        self.dw = nn.Conv2d(cin, cin, 3, stride=stride, padding=1, groups=cin)
        self.pw = nn.Conv2d(cin, filters, 1)

    def forward(self, x):
        return torch.relu(self.pw(torch.relu(self.dw(x))))


class MobileDw(nn.Module):
    """Twin of bench/mobile_dw.nn: a 3x3 stem (32) with relu, Separable
    blocks to 64, 128 (stride 2), 128 and 256 (stride 2), global average
    pooling, Linear(256, 10).  Field names and order as nnc's."""

    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, 32, 3, padding=1)
        self.s1 = Separable(32, 64)
        self.s2 = Separable(64, 128, 2)
        self.s3 = Separable(128, 128)
        self.s4 = Separable(128, 256, 2)
        self.fc = nn.Linear(256, classes)

    def forward(self, x):
        h = self.s4(self.s3(self.s2(self.s1(torch.relu(self.stem(x))))))
        return self.fc(h.mean(dim=(2, 3)))


class Inverted(nn.Module):
    """bench/mbv2.nn's Inv and InvRes: a 1x1 convolution to 3x the
    channels with relu, a k x k depthwise one (groups = channels, the
    block's stride and padding) with relu, and a 1x1 to `out`; InvRes
    (res=True) adds the block's input."""

    def __init__(self, cin, out, stride=1, k=3, pad=1, res=False):
        super().__init__()
        wide = 3 * cin
        self.ex = nn.Conv2d(cin, wide, 1)
        self.dw = nn.Conv2d(wide, wide, k, stride=stride, padding=pad, groups=wide)
        self.pr = nn.Conv2d(wide, out, 1)
        self.res = res

    def forward(self, x):
        h = self.pr(torch.relu(self.dw(torch.relu(self.ex(x)))))
        return x + h if self.res else h


class Mbv2(nn.Module):
    """Twin of bench/mbv2.nn: a 3x3 stem (24) with relu, inverted residual
    blocks 24 (residual), to 40 (5x5, stride 2), 40 (5x5, residual), to 80
    (stride 2), 80 (residual), global average pooling, Linear(80, 10).
    Field names and order as nnc's."""

    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, 24, 3, padding=1)
        self.b1 = Inverted(24, 24, res=True)
        self.b2 = Inverted(24, 40, stride=2, k=5, pad=2)
        self.b3 = Inverted(40, 40, k=5, pad=2, res=True)
        self.b4 = Inverted(40, 80, stride=2)
        self.b5 = Inverted(80, 80, res=True)
        self.fc = nn.Linear(80, classes)

    def forward(self, x):
        h = self.b5(self.b4(self.b3(self.b2(self.b1(torch.relu(self.stem(x)))))))
        return self.fc(h.mean(dim=(2, 3)))


def image_classifier(module, shape, classes=10):
    def build(batch):
        model = module()
        x = torch.randn(batch, *shape)
        y = torch.randint(0, classes, (batch,))
        return model, (x,), y
    return build


class LstmLm(nn.Module):
    """lstm_lm.nn: Embedding(65, 64), LSTM(64 -> 256, batch_first), Linear(256, 65)."""

    def __init__(self, vocab=65, dim=64, hidden=256):
        super().__init__()
        self.vocab = vocab
        self.tok = nn.Embedding(vocab, dim)
        self.rnn = nn.LSTM(dim, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, ids):
        h, _ = self.rnn(self.tok(ids))
        return self.head(h).reshape(-1, self.vocab)


def lstm_lm(batch, ctx=32, vocab=65):
    ids = torch.randint(0, vocab, (batch, ctx))
    return LstmLm(vocab), (ids,), torch.randint(0, vocab, (batch * ctx,))


class Enc(nn.Module):
    """vit_tiny.nn's Enc: pre-LayerNorm attention and a 4x GELU (erf) MLP."""

    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = SelfAttention(d, heads)
        self.fc, self.proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        h = x + self.attn(self.ln1(x))
        return h + self.proj(F.gelu(self.fc(self.ln2(h))))


class VitTiny(nn.Module):
    """vit_tiny.nn: 4x4 patches of 3x32x32 to 64 tokens of 96, positions,
    4 encoder blocks (4 heads), LayerNorm, the mean over tokens, Linear."""

    def __init__(self, d=96, layers=4, classes=10):
        super().__init__()
        self.d = d
        self.patch = nn.Conv2d(3, d, 4, stride=4)
        self.pos = nn.Parameter(torch.randn(64, d) * 0.02)
        self.blocks = nn.Sequential(*[Enc(d, 4) for _ in range(layers)])
        self.lnf = nn.LayerNorm(d)
        self.fc = nn.Linear(d, classes)

    def forward(self, x):
        t = self.patch(x).reshape(x.shape[0], self.d, 64).transpose(1, 2) + self.pos
        return self.fc(self.lnf(self.blocks(t)).mean(1))


class MlpBn(nn.Module):
    """mlp_bn.nn: 1000 -> 512 -> BatchNorm1d -> relu -> 256 -> BatchNorm1d
    -> relu -> Dropout(0.1) -> 20."""

    def __init__(self, classes=20):
        super().__init__()
        self.f1, self.b1 = nn.Linear(1000, 512), nn.BatchNorm1d(512)
        self.f2, self.b2 = nn.Linear(512, 256), nn.BatchNorm1d(256)
        self.drop = nn.Dropout(0.1)
        self.f3 = nn.Linear(256, classes)

    def forward(self, x):
        h = F.relu(self.b1(self.f1(x)))
        return self.f3(self.drop(F.relu(self.b2(self.f2(h)))))


class Cnn1d(nn.Module):
    """cnn1d.nn: Conv1d 9 -> 64 (7 taps), 64 (5), 128 (5, stride 2), 128
    (3), 'same' padding, relu after each, the mean over time, Linear 6."""

    def __init__(self, classes=6):
        super().__init__()
        self.c1 = nn.Conv1d(9, 64, 7, padding=3)
        self.c2 = nn.Conv1d(64, 64, 5, padding=2)
        self.c3 = nn.Conv1d(64, 128, 5, stride=2, padding=2)
        self.c4 = nn.Conv1d(128, 128, 3, padding=1)
        self.fc = nn.Linear(128, classes)

    def forward(self, x):
        h = F.relu(self.c2(F.relu(self.c1(x))))
        h = F.relu(self.c4(F.relu(self.c3(h))))
        return self.fc(h.mean(2))


class Bottleneck(nn.Module):
    """resnext.nn's Bottleneck: 1x1 -> grouped 3x3 (8 groups) -> 1x1, each
    with BatchNorm, a 1x1 projection where the shape changes."""

    def __init__(self, cin, width, cout, stride=1):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width)
        self.c2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, groups=8, bias=False)
        self.b2 = nn.BatchNorm2d(width)
        self.c3, self.b3 = nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout)
        self.proj = None
        if stride != 1 or cin != cout:
            self.proj = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        h = F.relu(self.b1(self.c1(x)))
        h = F.relu(self.b2(self.c2(h)))
        h = self.b3(self.c3(h))
        return F.relu(h + (self.proj(x) if self.proj is not None else x))


class Resnext(nn.Module):
    """resnext.nn: 3x3 stem (64) + BN + relu, Bottlenecks 64 -> 128 (width
    64), 128 -> 256 (width 128, stride 2), 256 -> 256 (width 128, stride
    2), global average pool, Linear 10."""

    def __init__(self, classes=10):
        super().__init__()
        self.stem, self.bn = nn.Conv2d(3, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64)
        self.s1 = Bottleneck(64, 64, 128)
        self.s2 = Bottleneck(128, 128, 256, 2)
        self.s3 = Bottleneck(256, 128, 256, 2)
        self.fc = nn.Linear(256, classes)

    def forward(self, x):
        h = self.s3(self.s2(self.s1(F.relu(self.bn(self.stem(x))))))
        return self.fc(h.mean((2, 3)))


class Stem96(nn.Module):
    """stem96.nn: Conv2d 3 -> 32 (7x7, stride 2, padding 3, no bias),
    BatchNorm2d, relu, MaxPool2d(3, 2, padding 1), Conv2d 48 (3x3) + relu,
    Conv2d 64 (3x3, stride 2) + relu, mean over the grid, Linear 10."""

    def __init__(self, classes=10):
        super().__init__()
        self.stem, self.bn = nn.Conv2d(3, 32, 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(32)
        self.c1 = nn.Conv2d(32, 48, 3, padding=1)
        self.c2 = nn.Conv2d(48, 64, 3, stride=2, padding=1)
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.bn(self.stem(x))), 3, stride=2, padding=1)
        return self.fc(F.relu(self.c2(F.relu(self.c1(h)))).mean((2, 3)))


class Speech1d(nn.Module):
    """speech1d.nn: Conv1d 40 -> 64 (3 taps, padding 1, no bias) +
    BatchNorm1d + relu, Conv1d 96 (likewise), MaxPool1d(2) (101 -> 50),
    Conv1d 128 (3, padding 1) + relu, the mean over time, Linear 12."""

    def __init__(self, feats=40, classes=12):
        super().__init__()
        self.c1, self.b1 = nn.Conv1d(feats, 64, 3, padding=1, bias=False), nn.BatchNorm1d(64)
        self.c2, self.b2 = nn.Conv1d(64, 96, 3, padding=1, bias=False), nn.BatchNorm1d(96)
        self.c3 = nn.Conv1d(96, 128, 3, padding=1)
        self.fc = nn.Linear(128, classes)

    def forward(self, x):
        h = F.relu(self.b2(self.c2(F.relu(self.b1(self.c1(x))))))
        h = F.relu(self.c3(F.max_pool1d(h, 2)))
        return self.fc(h.mean(2))


# name -> (default batch, builder(batch) -> (module, inputs, target), optimizer)
MODELS = {
    "digits_mlp": (64, classifier([64, 128, 10]), torch.optim.Adam),
    "mlp_big": (128, classifier([784, 1024, 1024, 10]), torch.optim.Adam),
    "gpt_mini": (16, gpt(vocab=65, ctx=64, d=128, heads=4, layers=4), torch.optim.AdamW),
    "lenet5": (64, image_classifier(Lenet5, (1, 28, 28)), torch.optim.Adam),
    "resnet_small": (32, image_classifier(ResnetSmall, (3, 32, 32)), torch.optim.Adam),
    # models no kernel of nnc was written for
    "resnet18": (16, image_classifier(Resnet18, (3, 64, 64), classes=200), torch.optim.Adam),
    "gpt_h6": (16, gpt(vocab=256, ctx=96, d=96, heads=6, layers=4), torch.optim.AdamW),
    "vgg_small": (32, image_classifier(VggSmall, (3, 32, 32)), torch.optim.Adam),
    "gpt_t50": (16, gpt(vocab=65, ctx=50, d=80, heads=5, layers=3), torch.optim.AdamW),
    "gpt_hd128": (8, gpt(vocab=65, ctx=40, d=256, heads=2, layers=2), torch.optim.AdamW),
    "gpt_t256": (4, gpt(vocab=65, ctx=256, d=128, heads=2, layers=2), torch.optim.AdamW),
    # found by a held-out sweep, then their layers' classes made fast
    "cnn48": (16, image_classifier(Cnn48, (3, 48, 48)), torch.optim.Adam),
    "mobile_dw": (32, image_classifier(MobileDw, (3, 32, 32)), torch.optim.Adam),
    "lstm_lm": (16, lstm_lm, torch.optim.AdamW),
    "mbv2": (16, image_classifier(Mbv2, (3, 40, 40)), torch.optim.Adam),
    "vit_tiny": (32, image_classifier(VitTiny, (3, 32, 32)), torch.optim.Adam),
    "mlp_bn": (256, image_classifier(MlpBn, (1000,), classes=20), torch.optim.Adam),
    "cnn1d": (64, image_classifier(Cnn1d, (9, 128), classes=6), torch.optim.Adam),
    "resnext": (32, image_classifier(Resnext, (3, 32, 32)), torch.optim.Adam),
    "stem96": (16, image_classifier(Stem96, (3, 96, 96)), torch.optim.Adam),
    "speech1d": (64, image_classifier(Speech1d, (40, 101), classes=12), torch.optim.Adam),
}


def openblas_info():
    """Threads and kernel name of the OpenBLAS loaded in this process (torch's BLAS)."""
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return lib.openblas_get_num_threads(), lib.openblas_get_corename().decode()
    except (OSError, AttributeError):
        return -1, "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=sorted(MODELS))
    ap.add_argument("--threads", type=int, help="torch.set_num_threads (default: OMP_NUM_THREADS or 1)")
    ap.add_argument("--batch", type=int)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--min-iters", type=int, default=50)
    ap.add_argument("--max-iters", type=int, default=20000)
    ap.add_argument("--min-time", type=float, default=3.0)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    threads = a.threads or int(os.environ.get("OMP_NUM_THREADS", "1"))
    torch.set_num_threads(threads)
    torch.manual_seed(a.seed)
    default_batch, build, optimizer = MODELS[a.model]
    batch = a.batch or default_batch
    model, inputs, target = build(batch)
    model.train()
    opt = optimizer(model.parameters(), lr=a.lr)  # AdamW: weight_decay 0.01 (default)
    opt_name = optimizer.__name__
    nparams = sum(p.numel() for p in model.parameters())

    def step():
        loss = F.cross_entropy(model(*inputs), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    clock = time.perf_counter

    def timed_step():
        # the same step, with the phases timed as harness.c does
        t0 = clock()
        loss = F.cross_entropy(model(*inputs), target)
        t1 = clock()
        opt.zero_grad()
        loss.backward()
        t2 = clock()
        opt.step()
        t3 = clock()
        return loss, t3 - t0, t1 - t0, t2 - t1, t3 - t2

    first_loss = loss = float("nan")
    for i in range(a.warmup):
        loss = step()
        if i == 0:
            first_loss = loss.item()

    times, tf, tb, to = [], [], [], []
    total = 0.0
    while len(times) < a.max_iters and (len(times) < a.min_iters or total < a.min_time):
        loss, dt, f, b, o = timed_step()
        times.append(dt)
        tf.append(f)
        tb.append(b)
        to.append(o)
        total += dt
        if a.warmup == 0 and len(times) == 1:
            first_loss = loss.item()
    last_loss = loss.item()
    times.sort()
    median = statistics.median(times)
    med_f, med_b, med_o = (statistics.median(x) for x in (tf, tb, to))
    mean = total / len(times)
    p90 = times[int(0.9 * (len(times) - 1))]
    ob, core = openblas_info()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KB
    print(f"torch {a.model}: batch {batch}, {nparams} params, torch {torch.__version__}, "
          f"torch threads {torch.get_num_threads()}, OpenBLAS threads {ob}, core {core}\n"
          f"  {a.warmup} warm-up + {len(times)} timed steps in {total:.2f} s: "
          f"median {1e3 * median:.4f} ms, min {1e3 * times[0]:.4f} ms, "
          f"mean {1e3 * mean:.4f} ms, p90 {1e3 * p90:.4f} ms\n"
          f"  phases (medians): forward+loss {1e3 * med_f:.4f} ms, zero_grad+backward "
          f"{1e3 * med_b:.4f} ms, {opt_name} step {1e3 * med_o:.4f} ms\n"
          f"  loss {first_loss:.4f} (first step) -> {last_loss:.4f} (last step); peak RSS {rss_mb:.1f} MB",
          file=sys.stderr)
    print(f"RESULT side=torch model={a.model} batch={batch} median_ms={1e3 * median:.6f} "
          f"min_ms={1e3 * times[0]:.6f} mean_ms={1e3 * mean:.6f} p90_ms={1e3 * p90:.6f} "
          f"iters={len(times)} warmup={a.warmup} threads={torch.get_num_threads()} "
          f"openblas_threads={ob} params={nparams} optim={opt_name.lower()} fwd_ms={1e3 * med_f:.6f} "
          f"bwd_ms={1e3 * med_b:.6f} opt_ms={1e3 * med_o:.6f} first_loss={first_loss:.6f} "
          f"last_loss={last_loss:.6f} blas_core={core} maxrss_mb={rss_mb:.1f}")


if __name__ == "__main__":
    main()
