"""The runtime's optimizers and clip_grad_norm against PyTorch.

The same initial params and the same sequence of gradients go through
nnc_optim_step (via rt_probe) and through torch.optim on three separate
tensors that together form the flat view (so the global norm of clipping
spans tensors, as in a model).  After every step the params must agree to a
relative error of 1e-5 (max abs difference over max abs value)."""

import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

probe = sys.argv[1]
# ctest runs this once per instruction set (NNC_ISA): skipped (77) where
# the CPU lacks the one asked for
want = os.environ.get("NNC_ISA")
have = subprocess.run([probe, "isa"], capture_output=True, text=True, check=True).stdout.strip()
if want and want != have:
    print(f"check_optim: skipped: NNC_ISA={want}, and this CPU runs {have}")
    sys.exit(77)
print(f"check_optim: instruction set {have}")
SHAPES = [(3, 4), (5,), (2, 3)]
P = sum(int(np.prod(s)) for s in SHAPES)
STEPS = 12
TOL = 1e-5

rs = np.random.RandomState(0)
p0 = rs.randn(P).astype(np.float32)
# Gradient scales vary so that clipping is active on some steps only.
scales = np.array([0.2, 3.0, 1.0, 0.05, 8.0, 0.5, 2.0, 0.1, 1.5, 4.0, 0.3, 1.0])
grads = (rs.randn(STEPS, P) * scales[:, None]).astype(np.float32)


def torch_run(kind, lr, momentum, wd, clip):
    flat = torch.tensor(p0)
    params, at = [], 0
    for s in SHAPES:
        n = int(np.prod(s))
        params.append(torch.nn.Parameter(flat[at:at + n].clone().reshape(s)))
        at += n
    if kind == "sgd":
        opt = torch.optim.SGD(params, lr=lr, momentum=momentum, weight_decay=wd)
    elif kind == "adam":
        opt = torch.optim.Adam(params, lr=lr, weight_decay=wd)
    else:
        opt = torch.optim.AdamW(params, lr=lr, **({} if wd is None else {"weight_decay": wd}))
    out, norms = [], []
    for s in range(STEPS):
        at = 0
        for prm, shp in zip(params, SHAPES):
            n = int(np.prod(shp))
            prm.grad = torch.tensor(grads[s, at:at + n]).reshape(shp)
            at += n
        if clip > 0:
            norms.append(float(torch.nn.utils.clip_grad_norm_(params, clip)))
        else:
            norms.append(0.0)
        opt.step()
        out.append(np.concatenate([prm.detach().numpy().ravel() for prm in params]))
    return np.array(out), np.array(norms)


def c_run(kind, lr, momentum, wd, clip, tmp):
    np.save(os.path.join(tmp, "p0.npy"), p0)
    np.save(os.path.join(tmp, "g.npy"), grads)
    out, nrm = os.path.join(tmp, "out.npy"), os.path.join(tmp, "norms.npy")
    subprocess.run([probe, "optim", kind, repr(lr), repr(momentum),
                    "default" if wd is None else repr(wd), repr(clip),
                    os.path.join(tmp, "p0.npy"), os.path.join(tmp, "g.npy"), out, nrm],
                   check=True)
    return np.load(out), np.load(nrm)


CASES = [
    ("sgd", 0.1, 0.9, 0.01, 0.0),
    ("sgd", 0.05, 0.0, 0.0, 0.0),
    ("sgd", 0.1, 0.5, 0.0, 1.0),
    ("adam", 0.01, 0.0, 0.01, 0.0),
    ("adam", 0.001, 0.0, 0.0, 0.0),
    ("adam", 0.01, 0.0, 0.0, 1.0),
    ("adamw", 0.01, 0.0, 0.05, 0.0),
    ("adamw", 0.003, 0.0, None, 0.0),   # AdamW's default weight_decay 0.01
    ("adamw", 0.01, 0.0, 0.1, 2.5),
]

failed = 0
with tempfile.TemporaryDirectory() as tmp:
    for case in CASES:
        want, want_norms = torch_run(*case)
        got, got_norms = c_run(*case, tmp)
        assert got.shape == want.shape
        worst = 0.0
        for s in range(STEPS):
            err = np.abs(got[s] - want[s]).max() / np.abs(want[s]).max()
            worst = max(worst, err)
        nerr = np.abs(got_norms - want_norms).max() / max(1e-30, np.abs(want_norms).max())
        clipped = int(np.sum(want_norms > case[4])) if case[4] > 0 else 0
        ok = worst <= TOL and nerr <= TOL
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {case}: max rel err {worst:.2e}, "
              f"norm rel err {nerr:.2e}, clipped steps {clipped}")
        if case[4] > 0:
            assert 0 < clipped < STEPS, "clip threshold should bite on some steps only"
sys.exit(1 if failed else 0)
