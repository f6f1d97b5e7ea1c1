"""BatchNorm's num_batches_tracked against torch.nn.BatchNorm2d/1d.

bn_count.nn's driver loads a checkpoint as PyTorch writes it (F32 tensors
and the I64 scalar counters), evaluates it as PyTorch does, trains a few
full-batch SGD steps as PyTorch does (weights, running statistics and the
counters compared), and saves the counters as I64 scalars that PyTorch
loads back with strict=True.  Then the edge cases: a file without the
counters (PyTorch's old checkpoints: they start again at 0), a counter
stored as F32 (rejected), a non-strict load that lacks one (kept, listed).

Usage: check_counters.py DRIVER
"""

import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "parity"))
import parity  # noqa: E402  (its safetensors writer: F32, and int64 arrays as I64)

DRV = sys.argv[1]
failures = []
N = 20


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    return subprocess.run([DRV] + [str(a) for a in args], capture_output=True, text=True)


def st_read(path):
    """{name: (dtype, array)}, without the driver's training state."""
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    out = {}
    for name, info in json.loads(data[8:8 + n]).items():
        if name == "__metadata__" or name.startswith("nnc:train/"):
            continue
        lo, hi = info["data_offsets"]
        np_dt = {"F32": "<f4", "I64": "<i8"}[info["dtype"]]
        out[name] = (info["dtype"], np.frombuffer(data[8 + n + lo:8 + n + hi], np_dt).reshape(info["shape"]))
    return out


class Twin(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 3, 3)
        self.bn = torch.nn.BatchNorm2d(3)
        self.fc = torch.nn.Linear(48, 4)
        self.bn1 = torch.nn.BatchNorm1d(4, momentum=0.3)

    def forward(self, x):
        return self.bn1(self.fc(torch.relu(self.bn(self.conv(x))).flatten(1)))


torch.manual_seed(7)
twin = Twin()
with torch.no_grad():
    for name, t in twin.state_dict(keep_vars=True).items():
        if name.endswith("running_var"):
            t.copy_(torch.randn(t.shape).abs() * 0.5 + 0.5)
        elif t.is_floating_point():
            t.copy_(torch.randn(t.shape) * 0.5)
twin.bn.num_batches_tracked.fill_(17)
twin.bn1.num_batches_tracked.fill_(5)
rs = np.random.RandomState(3)
x = rs.randn(N, 2, 6, 6).astype(np.float32)
y = rs.randint(0, 4, size=N).astype(np.int32)


def sd_numpy(m):
    return {k: v.detach().numpy().copy() for k, v in m.state_dict().items()}


def close(a, b, tol=1e-4):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and np.all(np.abs(a - b) <= tol * np.maximum(1.0, np.abs(b)))


with tempfile.TemporaryDirectory() as tmp:
    def P(name):
        return os.path.join(tmp, name)

    np.save(P("x.npy"), x)
    np.save(P("y.npy"), y)
    w0 = sd_numpy(twin)
    check(w0["bn.num_batches_tracked"].dtype == np.int64, "PyTorch's counter is int64")
    parity.st_write(P("w0.safetensors"), list(w0.items()))

    # ---- info names the counters
    r = run("info")
    for line in ("  bn.num_batches_tracked [] state i64", "  bn1.num_batches_tracked [] state i64"):
        check(line in r.stdout.split("\n"), f"info shows '{line}': {r.stdout}")

    # ---- eval: the file as PyTorch wrote it loads strictly; the values agree
    r = run("eval", "--weights", P("w0.safetensors"), "--inputs", P("x.npy"), "--labels", P("y.npy"))
    check(r.returncode == 0, f"eval of PyTorch's state_dict: {r.stderr}")
    twin.eval()
    with torch.no_grad():
        ref = torch.nn.functional.cross_entropy(twin(torch.from_numpy(x)), torch.from_numpy(y).long()).item()
    got = float(r.stdout.split("loss=")[1].split()[0]) if "loss=" in r.stdout else float("nan")
    check(close(got, ref), f"eval loss {got} vs PyTorch {ref}")

    # ---- train 3 full-batch SGD steps, in nnc and in PyTorch
    STEPS, LR = 3, 0.05
    r = run("train", "--weights", P("w0.safetensors"), "--inputs", P("x.npy"), "--labels", P("y.npy"),
            "--epochs", STEPS, "--batch", N, "--optimizer", "sgd", "--lr", LR, "--quiet",
            "--save", P("w1.safetensors"))
    check(r.returncode == 0, f"train: {r.stderr}")
    ref_m = Twin()
    ref_m.load_state_dict({k: torch.from_numpy(v) for k, v in w0.items()}, strict=True)
    ref_m.train()
    opt = torch.optim.SGD(ref_m.parameters(), lr=LR)
    for _ in range(STEPS):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(ref_m(torch.from_numpy(x)), torch.from_numpy(y).long())
        loss.backward()
        opt.step()
    want = sd_numpy(ref_m)
    got = st_read(P("w1.safetensors")) if r.returncode == 0 else {}
    check(sorted(got) == sorted(want), f"saved names {sorted(got)} are PyTorch's {sorted(want)}")
    for name, w in want.items():
        if name not in got:
            continue
        dt, a = got[name]
        if name.endswith("num_batches_tracked"):
            check(dt == "I64" and a.shape == () and int(a) == int(w),
                  f"{name}: {dt} {a.shape} {a} vs PyTorch's {int(w)} (17/5 + {STEPS})")
        else:
            check(dt == "F32" and close(a, w), f"{name} after {STEPS} steps: max diff "
                  f"{np.max(np.abs(a - w)) if a.shape == w.shape else a.shape}")
    check(int(want["bn.num_batches_tracked"]) == 17 + STEPS, "PyTorch counts one per training pass")

    # ---- the saved checkpoint goes back into PyTorch with strict=True
    back = Twin()
    try:
        back.load_state_dict({k: torch.from_numpy(a.copy()) for k, (_, a) in got.items()}, strict=True)
        check(back.bn1.num_batches_tracked.item() == 5 + STEPS, "PyTorch reads the counter back")
    except Exception as e:  # noqa: BLE001 - any failure is the finding
        check(False, f"load_state_dict(strict=True) of nnc's checkpoint: {e}")

    # ---- predict and eval count nothing: a pass in inference mode
    r = run("predict", "--weights", P("w1.safetensors"), "--inputs", P("x.npy"), "--output", P("p.npy"))
    check(r.returncode == 0, f"predict: {r.stderr}")

    # ---- a file without the counters (PyTorch before 0.4.1): they restart at 0
    parity.st_write(P("old.safetensors"), [(k, v) for k, v in w0.items() if "num_batches" not in k])
    r = run("train", "--weights", P("old.safetensors"), "--inputs", P("x.npy"), "--labels", P("y.npy"),
            "--epochs", 2, "--batch", 8, "--quiet", "--save", P("w2.safetensors"))
    check(r.returncode == 0, f"train from a file without counters: {r.stderr}")
    if r.returncode == 0:
        w2 = st_read(P("w2.safetensors"))
        # 20 examples in batches of 8: 3 training passes an epoch
        check(int(w2["bn.num_batches_tracked"][1]) == 6 and int(w2["bn1.num_batches_tracked"][1]) == 6,
              f"counters restart at 0 and count 6 passes: {w2['bn.num_batches_tracked']}")

    # ---- a counter stored as F32 is an error naming it
    bad = dict(w0)
    bad["bn.num_batches_tracked"] = np.array(17, np.float32)
    parity.st_write(P("bad.safetensors"), list(bad.items()))
    r = run("eval", "--weights", P("bad.safetensors"), "--inputs", P("x.npy"), "--labels", P("y.npy"))
    check(r.returncode == 2 and r.stderr.count("\n") == 1
          and P("bad.safetensors") + ": tensor 'bn.num_batches_tracked': dtype F32, expected I64" in r.stderr,
          f"F32 counter: {r.returncode} {r.stderr!r}")

    # ---- non-strict: a missing counter is listed and keeps its value
    part = {k: v for k, v in w0.items() if k != "bn1.num_batches_tracked"}
    parity.st_write(P("part.safetensors"), list(part.items()))
    r = run("train", "--weights", P("part.safetensors"), "--non-strict", "--inputs", P("x.npy"), "--labels",
            P("y.npy"), "--epochs", 1, "--batch", N, "--quiet", "--save", P("w3.safetensors"))
    check(r.returncode == 0 and "missing tensor 'bn1.num_batches_tracked' (left as it was)" in r.stderr,
          f"non-strict lists the missing counter: {r.stderr}")
    if r.returncode == 0:
        w3 = st_read(P("w3.safetensors"))
        check(int(w3["bn.num_batches_tracked"][1]) == 18 and int(w3["bn1.num_batches_tracked"][1]) == 1,
              f"loaded counter counts on, missing one from its init: {w3['bn.num_batches_tracked']}, "
              f"{w3['bn1.num_batches_tracked']}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("counters: ok")
