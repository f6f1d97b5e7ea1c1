#!/usr/bin/python3
"""check_resnet18.py -- torchvision's resnet18, ported: examples/resnet18.

The port of docs/from-pytorch.md, run as a user would run it:

  1. PyTorch builds torchvision.models.resnet18(weights=None,
     num_classes=10) from a fixed seed, gives every BatchNorm random
     running statistics and affine params (so that eval mode depends on
     them), and saves its state_dict with torch.save;
  2. scripts/pt2safetensors.py converts the .pt file;
  3. nnc compiles examples/resnet18/resnet18.nn and the driver is built
     (tests/parity's build_driver: gcc -Werror);
  4. `predict` on 4 images of 3x64x64 matches torchvision in eval mode
     (normwise relative error <= 1e-4 against float64) and picks the same
     classes;
  5. `grad` matches the training-mode loss and every param's gradient;
  6. `train` takes one SGD step; the checkpoint it saves loads back into
     torchvision's resnet18 and equals PyTorch's own step (params and
     running statistics).

    check_resnet18.py --nnc NNC --runtime-lib LIB --runtime-include DIR [--include DIR] [--keep]
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(SRC, "tests", "parity"))
import parity  # noqa: E402  (compare, the driver build, the safetensors reader)
from portlib import check, failures, parse_args  # noqa: E402  (command line, failure list)
import torch  # noqa: E402
import torchvision  # noqa: E402

MODEL = os.path.join(SRC, "examples", "resnet18", "resnet18.nn")
GUIDE = os.path.join(SRC, "docs", "from-pytorch.md")
SCRIPT = os.path.join(SRC, "scripts", "pt2safetensors.py")
SEED, CLASSES, BATCH, SIZE, LR = 18, 10, 4, 64, 0.05

# The whole state_dict is converted and loaded strictly, BatchNorm's I64
# num_batches_tracked included, and the saved checkpoint must hold each
# count advanced by the one training step (False: the conversion drops the
# counters, as for a checkpoint from before PyTorch kept them).
NUM_BATCHES_TRACKED = True
NBT = "num_batches_tracked"



def torchvision_resnet18():
    torch.manual_seed(SEED)
    m = torchvision.models.resnet18(weights=None, num_classes=CLASSES)
    g = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for i, mod in enumerate(x for x in m.modules() if isinstance(x, torch.nn.BatchNorm2d)):
            c = mod.num_features
            mod.weight.copy_(torch.rand(c, generator=g) * 0.6 + 0.7)
            mod.bias.copy_(torch.randn(c, generator=g) * 0.1)
            mod.running_mean.copy_(torch.randn(c, generator=g) * 0.1)
            mod.running_var.copy_(torch.rand(c, generator=g) * 1.5 + 0.5)
            mod.num_batches_tracked.fill_(1000 + i)
        # A random network gives every input nearly the same logits (the
        # same class for all): centering the classifier's bias on a
        # calibration batch leaves the differences between images, so that
        # the classes predicted say something.
        m.eval()
        m.fc.bias -= m(torch.randn(16, 3, SIZE, SIZE, generator=g)).mean(0)
    return m


def report(rows):
    """parity.compare's rows: count the failures, print them."""
    worst = 0.0
    for r in rows:
        if r[0] == "ok":
            worst = max(worst, r[2])
        else:
            check(False, "%s: %s" % (r[1], r[2]))
    return worst


def main():
    args = parse_args(__doc__)
    torch.set_num_threads(1)
    t0 = time.time()

    # the guide shows the model this test runs
    with open(MODEL, encoding="utf-8") as f:
        src = f.read().rstrip("\n")
    with open(GUIDE, encoding="utf-8") as f:
        check(src in f.read(), "docs/from-pytorch.md does not show examples/resnet18/resnet18.nn as it is")

    tmp = tempfile.mkdtemp(prefix="nnc_resnet18_")
    try:
        run(args, tmp)
    except parity.ParityError as e:
        check(False, str(e))
    finally:
        if args.keep:
            print("kept " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print("%s: resnet18 port, %d failures, %.1fs" % ("FAIL" if failures else "ok", len(failures),
                                                     time.time() - t0))
    return 1 if failures else 0


def run(args, tmp):
    runner = parity.Runner(False, dict(os.environ, OPENBLAS_NUM_THREADS="1"))

    # 1. PyTorch's side, as a user has it: a state_dict saved by torch.save
    tv = torchvision_resnet18()
    sd = {k: v.detach().clone() for k, v in tv.state_dict().items()}
    torch.save(tv.state_dict(), os.path.join(tmp, "resnet18.pt"))

    # 2. the conversion
    conv = [sys.executable, SCRIPT, "resnet18.pt", "resnet18.safetensors"]
    if not NUM_BATCHES_TRACKED:
        conv[2:2] = ["--drop", NBT + "$"]
    runner.run(conv, tmp, "pt2safetensors.py")

    # 3. nnc and the driver
    case = types.SimpleNamespace(nn_path=MODEL, nnc_args=["-D", "classes=%d" % CLASSES, "-D", "size=%d" % SIZE])
    bargs = types.SimpleNamespace(nnc=args.nnc, cc="gcc", opt="-O1", sanitize=False,
                                  runtime_include=args.runtime_include, include=args.include,
                                  runtime_lib=args.runtime_lib)
    notes = []
    exe = parity.build_driver(case, bargs, runner, tmp, notes)
    for n in notes:
        print("note: " + n)

    g = torch.Generator().manual_seed(SEED + 1)
    x = torch.randn(BATCH, 3, SIZE, SIZE, generator=g)
    y = torch.randint(0, CLASSES, (BATCH,), generator=g, dtype=torch.int32)
    np.save(os.path.join(tmp, "x.npy"), x.numpy().astype("<f4"))
    np.save(os.path.join(tmp, "y.npy"), y.numpy().astype("<i4"))

    def reference():
        """torchvision's resnet18 in float64, with the saved weights."""
        m = torchvision.models.resnet18(weights=None, num_classes=CLASSES)
        m.load_state_dict(sd, strict=True)
        return m.double()

    # 4. predict: eval mode, the running statistics
    runner.run([exe, "predict", "--weights", "resnet18.safetensors", "--inputs", "x.npy",
                "--output", "out.npy"], tmp, "predict")
    got = parity.npy_read(os.path.join(tmp, "out.npy"), "predict output")
    m = reference().eval()
    with torch.no_grad():
        want = m(x.double()).numpy()
    rows = []
    parity.compare("predict", got, want, parity.TOL, rows)
    err_predict = report(rows)
    tv.eval()
    with torch.no_grad():
        want32 = tv(x).numpy()
    check(np.array_equal(got.argmax(1), want32.argmax(1)),
          "predicted classes %s, torchvision's %s" % (got.argmax(1).tolist(), want32.argmax(1).tolist()))
    check(len(set(want32.argmax(1).tolist())) > 1, "torchvision predicts one class for every image: "
          "the class check says nothing")
    top2 = np.sort(want, axis=1)[:, -2:]
    print("predict: rel err %.2g against float64; classes %s, as torchvision's (margins >= %.2g)"
          % (err_predict, got.argmax(1).tolist(), float((top2[:, 1] - top2[:, 0]).min())))

    # 5. grad: training mode, the batch's statistics
    runner.run([exe, "grad", "--weights", "resnet18.safetensors", "--inputs", "x.npy", "--labels", "y.npy",
                "--output", "grads.safetensors"], tmp, "grad")
    got = parity.st_read(os.path.join(tmp, "grads.safetensors"))
    m = reference().train()
    loss = torch.nn.functional.cross_entropy(m(x.double()), y.long())
    loss.backward()
    rows = []
    parity.compare("grad:loss", got.pop("loss").reshape(()), loss.item(), parity.TOL, rows)
    grads = {n: p.grad.numpy() for n, p in m.named_parameters()}
    floor = max(parity.DENOM_FLOOR, parity.GRAD_SCALE_FLOOR * max(float(np.abs(v).max()) for v in grads.values()))
    for n, want in grads.items():
        if check(n in got, "grad: %s missing from the grad file" % n):
            parity.compare("grad:" + n, got.pop(n), want, parity.TOL, rows, floor)
    check(not got, "grad: unexpected tensors %s" % sorted(got))
    err_grad = report(rows)
    print("grad: loss %.6f, %d gradients, worst rel err %.2g" % (loss.item(), len(grads), err_grad))

    # 6. one SGD step, saved, loaded back into torchvision
    runner.run([exe, "train", "--weights", "resnet18.safetensors", "--inputs", "x.npy", "--labels", "y.npy",
                "--epochs", "1", "--batch", str(BATCH), "--optimizer", "sgd", "--lr", str(LR), "--quiet",
                "--save", "tuned.safetensors"], tmp, "train (one step)")
    saved = {k: torch.from_numpy(v) for k, v in parity.st_read(os.path.join(tmp, "tuned.safetensors")).items()
             if not k.startswith("nnc:train/")}
    back = torchvision.models.resnet18(weights=None, num_classes=CLASSES)
    # strict: every name torchvision has, nothing else (a state_dict
    # without num_batches_tracked passes too: BatchNorm fills in 0 for
    # old checkpoints without the key)
    try:
        back.load_state_dict(saved, strict=True)
    except RuntimeError as e:
        check(False, "the tuned checkpoint does not load into torchvision's resnet18: %s" % " ".join(str(e).split()))
        return
    if NUM_BATCHES_TRACKED:
        check(all(k in saved for k in sd if k.endswith(NBT)), "tuned checkpoint: no %s" % NBT)
    m = reference().train()
    opt = torch.optim.SGD(m.parameters(), lr=LR)
    torch.nn.functional.cross_entropy(m(x.double()), y.long()).backward()
    opt.step()
    rows = []
    mine = back.state_dict()
    params = dict(m.named_parameters())
    for k, want in m.state_dict().items():
        if k.endswith(NBT):
            if NUM_BATCHES_TRACKED:
                check(int(mine[k]) == int(want), "tuned %s: %d, PyTorch's %d" % (k, int(mine[k]), int(want)))
            continue
        after, want = mine[k].double().numpy(), want.numpy()
        parity.compare("tuned:" + k, after, want, parity.TOL, rows)
        if k in params:
            # the step itself, which the weights it started from would
            # dilute: each change against PyTorch's, measured against at
            # least 2e-3 of the weight's scale, where float32's rounding of
            # the stored weight (up to 6e-8 of it) is 3e-5, a third of the
            # tolerance
            before = sd[k].double().numpy()
            parity.compare("step:" + k, after - before, want - before, parity.TOL, rows,
                           max(floor * LR, 2e-3 * float(np.abs(before).max())))
    err_step = report(rows)
    print("train: one SGD step (lr %g), %d tensors loaded back into torchvision, as PyTorch's step "
          "(worst rel err %.2g)" % (LR, len(mine), err_step))


if __name__ == "__main__":
    sys.exit(main())
