"""names_sample (models/names_sample.c), the program that uses the
generated names_gpt.h, on the checkpoint of check_names_train.py: it prints
the attention norms of every block read from the typed structs (initialized
and trained), then the requested number of names made of the vocabulary's
characters; the same seed gives the same names; bad files exit 2, bad
options 1.

Usage: check_names_sample.py NAMES_SAMPLE SCRATCH
"""

import math
import os
import re
import subprocess
import sys

prog, scratch = sys.argv[1:3]
ckpt = os.path.join(scratch, "names_gpt.safetensors")
vocab_path = os.path.join(scratch, "data", "vocab.txt")
vocab = open(vocab_path).read().split("\n")[:-1]
LAYERS, COUNT, CTX = 2, 7, 16


def sample(*extra, check=True):
    r = subprocess.run([prog, "--weights", ckpt, "--vocab", vocab_path, *extra],
                       capture_output=True, text=True)
    if check:
        assert r.returncode == 0 and r.stderr == "", (r.returncode, r.stderr)
    return r


out = sample("--count", str(COUNT), "--temperature", "0.8", "--seed", "3").stdout
lines = out.split("\n")
assert lines[-1] == "", "ends with a newline"
lines = lines[:-1]

# attention |W|_F, initialized / trained: one line per block
norms = {}
i = 0
for what in ("initialized", "trained"):
    assert lines[i] == f"attention |W|_F, {what}:", lines[i]
    i += 1
    for b in range(LAYERS):
        m = re.fullmatch(rf"  blocks\.{b}\.attn  query +(\S+)  key +(\S+)  value +(\S+)  out +(\S+)",
                         lines[i])
        assert m, lines[i]
        norms[what, b] = [float(v) for v in m.groups()]
        assert all(math.isfinite(v) and v > 0 for v in norms[what, b]), lines[i]
        i += 1
# glorot_uniform over 64 x 64 has an expected norm of 8; training moves them
for b in range(LAYERS):
    assert all(6 < v < 10 for v in norms["initialized", b]), norms["initialized", b]
    assert norms["trained", b] != norms["initialized", b]

assert lines[i] == f"{COUNT} names, temperature 0.8, seed 3:", lines[i]
names = lines[i + 1:]
assert len(names) == COUNT, names
letters = set(vocab[1:])
assert "." not in letters
for n in names:
    assert len(n) <= CTX and set(n) <= letters, (n, letters)
assert sum(len(n) >= 2 for n in names) >= COUNT - 1, names
print("sampled:", ", ".join(names))

# Reproducible for a seed; another seed gives other names.
assert sample("--count", str(COUNT), "--temperature", "0.8", "--seed", "3").stdout == out
other = sample("--count", str(COUNT), "--temperature", "0.8", "--seed", "4").stdout
assert other.split("\n")[i + 1:] != lines[i + 1:] + [""]

# Errors: exit 2 naming the bad file, 1 for usage.
r = subprocess.run([prog, "--weights", ckpt + ".missing", "--vocab", vocab_path],
                   capture_output=True, text=True)
assert r.returncode == 2 and ckpt + ".missing" in r.stderr and r.stderr.count("\n") == 1, r.stderr
short = os.path.join(scratch, "vocab_short.txt")
with open(short, "w") as f:
    f.write("".join(c + "\n" for c in vocab[:-1]))
r = subprocess.run([prog, "--weights", ckpt, "--vocab", short], capture_output=True, text=True)
assert r.returncode == 2 and "27 tokens, but names_gpt was compiled for 28" in r.stderr, r.stderr
for args in ([], ["--weights", ckpt], ["--weights", ckpt, "--vocab", vocab_path, "--temperature", "0"],
             ["--weights", ckpt, "--vocab", vocab_path, "--count", "x"],
             ["--weights", ckpt, "--vocab", vocab_path, "--bogus", "1"]):
    r = subprocess.run([prog, *args], capture_output=True, text=True)
    assert r.returncode == 1 and r.stdout == "", (args, r.returncode, r.stderr)
print("check_names_sample: ok")
