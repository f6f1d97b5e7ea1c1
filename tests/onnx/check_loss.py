#!/usr/bin/python3
"""check_loss.py -- PyTorch's NLLLoss and CrossEntropyLoss, with a class
weight and an ignore_index, exported to ONNX (NegativeLogLikelihoodLoss,
SoftmaxCrossEntropyLoss), imported, and checked against PyTorch.

Each model is a Linear layer and the loss module, whose forward returns
the loss; it is exported with a fixed batch, so the import makes a
fixed-shape model whose output is the scalar loss. For each:

  1. `nnc import m.onnx`: the loss's weight is a `state` (PyTorch's
     buffer), not a param;
  2. `predict` equals PyTorch's loss (<= 1e-4), with targets that are
     ignored (ignore_index inside [0, C) for one model, PyTorch's -100
     for the other);
  3. (const) a tensor built in forward, an ONNX Constant, is a state of
     its values, and stays so through training;
  4. with `loss self(x, t)` added to the imported model, `grad` equals the
     gradient PyTorch's backward gives the Linear's weight and bias, and
     three SGD steps equal PyTorch's; the loss weight is not trained, and
     the checkpoint loads back with load_state_dict(strict=True).

    check_loss.py --nnc NNC --runtime-lib LIB --runtime-include DIR [--include DIR] [--keep]
"""
import os
import shutil
import sys
import tempfile
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(SRC, "tests", "parity"))
sys.path.insert(0, os.path.join(SRC, "tests", "port"))
import parity  # noqa: E402
from portlib import check, failures  # noqa: E402
import torch  # noqa: E402

STEPS = 3
LR = 0.5


class CE(torch.nn.Module):
    """cross_entropy over [6, 5] logits, ignore_index 1 (a real class):
    SoftmaxCrossEntropyLoss"""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 5)
        self.crit = torch.nn.CrossEntropyLoss(weight=torch.tensor([0.5, 2.0, 1.0, 3.0, 0.25]), ignore_index=1)

    def forward(self, x, t):
        return self.crit(self.fc(x), t)


class NLL(torch.nn.Module):
    """nll_loss over [2, 5, 3] log-probabilities (a class axis 1 and one
    more), PyTorch's ignore_index -100: NegativeLogLikelihoodLoss"""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 5)
        self.crit = torch.nn.NLLLoss(weight=torch.tensor([1.0, 0.5, 3.0, 2.0, 1.5]))

    def forward(self, x, t):
        # log(softmax), which the exporter does not fuse with the loss
        return self.crit(torch.log(torch.softmax(self.fc(x).permute(0, 2, 1), dim=1)), t)


# a constant tensor made in forward: the exporter writes a Constant node
POISSON_TARGET = [[0.5 * ((3 * i + 2 * j) % 5) for j in range(5)] for i in range(6)]


class ConstTarget(CE):
    """CE plus a Poisson NLL term against a [6, 5] tensor built in
    forward (ONNX Constant): the import makes it a state, which training
    leaves alone"""

    def forward(self, x, t):
        z = self.fc(x)
        return self.crit(z, t) + (torch.exp(z) - torch.tensor(POISSON_TARGET) * z).mean()


# name: (module, x's shape, target, opset, the ONNX op)
MODELS = {
    "ce": (CE, (6, 4), [[0, 1, 4, 3, 1, 2]], 13, "SoftmaxCrossEntropyLoss"),
    "nll": (NLL, (2, 3, 4), [[0, -100, 4], [3, 2, -100]], 17, "NegativeLogLikelihoodLoss"),
    "poisson": (ConstTarget, (6, 4), [[0, 1, 4, 3, 1, 2]], 13, "Constant"),
}


def one(name, args, tmp):
    ctor, xshape, target, opset, op = MODELS[name]
    run = parity.Runner(False, dict(os.environ, OPENBLAS_NUM_THREADS="1")).run
    torch.manual_seed(7)
    m = ctor()
    x = torch.randn(*xshape)
    t = torch.tensor(target).reshape(xshape[:-1] if name == "nll" else xshape[:1])
    np.save(os.path.join(tmp, "x.npy"), x.numpy().astype("<f4"))
    np.save(os.path.join(tmp, "t.npy"), t.numpy().astype("<i4"))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, (x, t), os.path.join(tmp, name + ".onnx"), opset_version=opset,
                          input_names=["x", "t"], output_names=["loss"], training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False)
    import onnx
    ops = [n.op_type for n in onnx.load(os.path.join(tmp, name + ".onnx")).graph.node]
    check(op in ops, "%s: the export has no %s: %s" % (name, op, ops))
    run([args.nnc, "import", name + ".onnx"], tmp, "nnc import")
    path = os.path.join(tmp, name + ".nn")
    with open(path) as f:
        src = f.read()
    check("state weight: [5]" in src and "param weight: [5]" not in src,
          "%s: the loss weight is not a state beside the Linear's param:\n%s" % (name, src))
    const_keys = []
    if name == "poisson":
        # the constant target: a state of its values under a name of the import's
        states = [ln.split()[1].rstrip(":") for ln in src.splitlines() if ln.strip().startswith("state ")
                  and ln.rstrip().endswith("[6, 5]")]
        check(len(states) == 1, "const: no [6, 5] state for the constant tensor:\n%s" % src)
        const_keys = [k for k in parity.st_read(os.path.join(tmp, name + ".safetensors")) if k.split(".")[-1] in states]
        check(len(const_keys) == 1, "const: the constant's state is not in the weights")
    # the model's output is the loss: train on it
    end = src.rstrip().rindex("}")
    with open(path, "w") as f:
        f.write(src[:end] + "    loss self(x, t)\n}\n")
    case = types.SimpleNamespace(nn_path=path, nnc_args=[])
    bargs = types.SimpleNamespace(nnc=args.nnc, cc="gcc", opt="-O1", sanitize=False,
                                  runtime_include=args.runtime_include, include=args.include,
                                  runtime_lib=args.runtime_lib)
    exe = parity.build_driver(case, bargs, run.__self__, tmp, [])
    weights = name + ".safetensors"
    imported = parity.st_read(os.path.join(tmp, weights))
    for k in const_keys:  # not PyTorch's: the values of its Constant node
        check(np.array_equal(np.array(imported.pop(k)), np.array(POISSON_TARGET, dtype=np.float32)),
              "const: the state holds other values than the constant")
    m.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in imported.items()}, strict=True)
    sd0 = {k: v.detach().clone() for k, v in m.state_dict().items()}

    # predict: the loss
    run([exe, "predict", "--weights", weights, "--inputs", "x.npy,t.npy", "--output", "out.npy"], tmp, "predict")
    m.zero_grad()
    loss = m(x, t)
    loss.backward()
    rows = []
    got = parity.npy_read(os.path.join(tmp, "out.npy"), "out")
    err = parity.compare(name + ":loss", got, loss.detach().numpy(), parity.TOL, rows)
    check(err <= parity.TOL, "%s: predict: %s" % (name, rows[-1][2]))
    print("%-4s loss %.6f (PyTorch %.6f), rel err %.2g" % (name, float(np.asarray(got)), float(loss), err))

    # grad: the Linear's gradients
    run([exe, "grad", "--weights", weights, "--inputs", "x.npy,t.npy", "--output", "g.safetensors"], tmp, "grad")
    grads = parity.st_read(os.path.join(tmp, "g.safetensors"))
    for k, p in m.named_parameters():
        rows = []
        check(k in grads, "%s: grad: %s missing (%s)" % (name, k, sorted(grads)))
        if k in grads:
            e = parity.compare(k, np.array(grads[k]), p.grad.numpy(), parity.TOL, rows)
            check(e <= parity.TOL, "%s: grad %s: %s" % (name, k, rows[-1][2]))
            print("%-4s grad %s rel err %.2g" % (name, k, e))

    # SGD steps; the loss weight stays
    m.load_state_dict(sd0)
    opt = torch.optim.SGD(m.parameters(), lr=LR)
    for _ in range(STEPS):
        opt.zero_grad()
        m(x, t).backward()
        opt.step()
    run([exe, "train", "--weights", weights, "--inputs", "x.npy,t.npy", "--epochs", str(STEPS), "--optimizer",
         "sgd", "--lr", str(LR), "--quiet", "--save", "sgd.safetensors"], tmp, "train")
    saved = {k: v for k, v in parity.st_read(os.path.join(tmp, "sgd.safetensors")).items() if not k.startswith("nnc:")}
    for k, v in m.state_dict().items():
        rows = []
        if check(k in saved, "%s: sgd: %s missing from the checkpoint" % (name, k)):
            e = parity.compare(k, np.array(saved[k]), v.numpy(), parity.TOL, rows)
            check(e <= parity.TOL, "%s: sgd: %s: %s" % (name, k, rows[-1][2]))
            print("%-4s %d SGD steps: %s rel err %.2g" % (name, STEPS, k, e))
    check(np.array_equal(np.array(saved["crit.weight"]), sd0["crit.weight"].numpy()),
          "%s: training changed the loss weight" % name)
    for k in const_keys:
        check(np.array_equal(np.array(saved.pop(k)), np.array(POISSON_TARGET, dtype=np.float32)),
              "const: training changed the constant's state")
    try:
        ctor().load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in saved.items()}, strict=True)
    except RuntimeError as e:
        check(False, "%s: the checkpoint does not load with strict=True: %s" % (name, e))


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nnc", required=True)
    ap.add_argument("--runtime-lib", required=True)
    ap.add_argument("--runtime-include", required=True)
    ap.add_argument("--include", action="append", default=[])
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    args.nnc, args.runtime_lib, args.runtime_include = (
        os.path.abspath(p) for p in (args.nnc, args.runtime_lib, args.runtime_include))
    torch.set_num_threads(1)
    for name in MODELS:
        tmp = tempfile.mkdtemp(prefix="nnc-loss-%s-" % name)
        try:
            one(name, args, tmp)
        except parity.ParityError as e:
            check(False, "%s: %s" % (name, e))
        finally:
            if args.keep:
                print("kept " + tmp)
            else:
                shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("the three models: ok")


if __name__ == "__main__":
    main()
