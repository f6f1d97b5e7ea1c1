"""The command-line driver (nnc_driver_main) on a hand-written model.

fake_model.c is a tiny model with two inputs (x f32 [N,3], ids k i32 [N] <
4), two labels (y f32 [N,2], classes c i32 [N] < 2 or -100), params w [2,3],
b [2], e [4,2] and a state tensor counting training examples.  This script
drives its driver through every subcommand and checks results against
independent NumPy / PyTorch computations: eval and predict values, the
gradient against autograd, training that lowers the loss, deterministic
runs; then every bad-file case (exit 2, one stderr line naming the file,
no output written) and usage error (exit 1).

Usage: check_driver.py FAKE_MODEL FAKE_NOLOSS_MODEL
"""

import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch

FAKE, NOLOSS = sys.argv[1], sys.argv[2]
PROG = os.path.basename(FAKE)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, prog=FAKE, env=None):
    return subprocess.run([prog] + [str(a) for a in args], capture_output=True, text=True,
                          env=None if env is None else {**os.environ, **env})


def read_st(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        lo, hi = info["data_offsets"]
        out[name] = np.frombuffer(data[8 + n + lo:8 + n + hi], "<f4").reshape(info["shape"])
    return list(k for k in header if k != "__metadata__"), out


def write_st(path, tensors):
    """{name: array} as safetensors, F32 or I64 by the array's dtype."""
    hdr, blobs, off = {}, [], 0
    for n, a in tensors.items():
        raw = a.tobytes()
        hdr[n] = {"dtype": {"<f4": "F32", "<i8": "I64"}[a.dtype.str], "shape": list(a.shape),
                  "data_offsets": [off, off + len(raw)]}
        blobs.append(raw); off += len(raw)
    txt = json.dumps(hdr).encode()
    open(path, "wb").write(struct.pack("<Q", len(txt)) + txt + b"".join(blobs))


def reference(wts, x, k, y, c):
    """Loss, metrics and output in float64, independent of fake_model.c."""
    p = x.astype(np.float64) @ wts["w"].T.astype(np.float64) + wts["b"] + wts["e"][k]
    mse = np.mean((p - y) ** 2)
    mae = np.mean(np.abs(p - y))
    keep = c != -100
    pk, ck = p[keep], c[keep]
    lse = np.log(np.exp(pk - pk.max(1, keepdims=True)).sum(1)) + pk.max(1)
    ce = np.mean(lse - pk[np.arange(len(ck)), ck])
    acc = np.mean(np.argmax(pk, 1) == ck)
    return mse + ce, mae, acc, p


def close(a, b, tol=1e-5):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.abs(a - b).max() <= tol * max(1.0, np.abs(b).max())


def parse_kv(text):
    out = []
    for line in text.strip().split("\n"):
        key, _, val = line.partition("=")
        out.append((key, float(val)))
    return out


def one_line_error(r, path, what, outputs, code=2, label=""):
    lines = r.stderr.strip().split("\n") if r.stderr.strip() else []
    ok = (r.returncode == code and len(lines) == 1 and lines[0].startswith(PROG + ": ")
          and path in lines[0] and what in lines[0]
          and not any(os.path.exists(o) for o in outputs))
    check(ok, f"{label}: expected exit {code} and one line naming {path} with '{what}', "
              f"got {r.returncode}: {r.stderr!r}")


rs = np.random.RandomState(0)
with tempfile.TemporaryDirectory() as tmp:
    def P(name):
        return os.path.join(tmp, name)

    def make(n, prefix, ignored=True):
        x = rs.randn(n, 3).astype(np.float32)
        k = rs.randint(0, 4, size=n).astype(np.int32)
        w_true = np.array([[1.0, -2.0, 0.5], [0.3, 0.8, -1.0]])
        e_true = np.array([[0.5, -0.5], [1.0, 0.0], [-1.0, 1.0], [0.0, 0.2]])
        y = (x @ w_true.T + e_true[k] + 0.05 * rs.randn(n, 2)).astype(np.float32)
        c = (y[:, 1] > y[:, 0]).astype(np.int32)
        if ignored:
            c[rs.rand(n) < 0.1] = -100
        for name, a in zip("xkyc", (x, k, y, c)):
            np.save(P(f"{prefix}_{name}.npy"), a)
        return x, k, y, c

    x, k, y, c = make(200, "tr")
    xv, kv, yv, cv = make(50, "va")
    IN, LAB = P("tr_x.npy") + "," + P("tr_k.npy"), P("tr_y.npy") + "," + P("tr_c.npy")
    VIN, VLAB = P("va_x.npy") + "," + P("va_k.npy"), P("va_y.npy") + "," + P("va_c.npy")

    # ---- info
    r = run("info")
    check(r.returncode == 0, "info exit 0")
    for line in ["model fake", "params 16 floats", "state 1 floats", "flops per example 16",
                 "  w [2, 3] params", "  b [2] params", "  e [4, 2] params", "  seen [1] state",
                 "input x f32 [N, 3]", "input k i32 [N] values in [0, 4)",
                 "label y f32 [N, 2]", "label c i32 [N] values in [0, 2) or -100 (ignored)",
                 "output f32 [N, 2]", "metric mae", "metric accuracy"]:
        check(line in r.stdout.split("\n"), f"info shows '{line}':\n{r.stdout}")
    # the instruction set of the runtime's kernels: the CPU's best, or NNC_ISA's
    isa = [l for l in r.stdout.split("\n") if l.startswith("isa ")]
    check(len(isa) == 1 and isa[0] in ("isa avx512", "isa avx2", "isa generic"), f"info shows the isa: {isa}")
    r = run("info", env={"NNC_ISA": "generic"})
    check("isa generic" in r.stdout.split("\n") and r.stderr == "", f"NNC_ISA=generic info: {r.stdout}{r.stderr}")
    r = run("info", env={"NNC_ISA": "sse9"})
    check(r.returncode == 0 and "NNC_ISA=sse9 is not avx512, avx2 or generic" in r.stderr,
          f"NNC_ISA=sse9 info warns: {r.stderr}")

    # ---- train: loss decreases, progress lines, final metrics, state saved
    r = run("train", "--inputs", IN, "--labels", LAB, "--epochs", 30, "--batch", 16,
            "--lr", 0.05, "--seed", 1, "--save", P("w1.safetensors"))
    check(r.returncode == 0, f"train exit 0: {r.stderr}")
    prog_lines = r.stderr.strip().split("\n")
    check(len(prog_lines) == 30, f"one progress line per epoch: {len(prog_lines)}")
    losses = [float(l.split("loss ")[1].split()[0]) for l in prog_lines]
    check(prog_lines[0].startswith("epoch 1/30  step 13  loss "), prog_lines[0])
    check(prog_lines[-1].startswith("epoch 30/30  step 390  loss "), prog_lines[-1])
    check("ex/s" in prog_lines[-1], "progress shows examples/s")
    check(losses[-1] < 0.3 * losses[0], f"training lowers the loss: {losses[0]} -> {losses[-1]}")
    kv_train = parse_kv(r.stdout)
    check([kk for kk, _ in kv_train] == ["loss", "mae", "accuracy"], f"train output {r.stdout}")
    names, wts = read_st(P("w1.safetensors"))
    check(names == ["w", "b", "e", "seen"], f"checkpoint tensors {names}")
    check(wts["seen"][0] == 30 * 200, f"state updated by training and saved: {wts['seen']}")
    loss_ref, mae_ref, acc_ref, _ = reference(wts, x, k, y, c)
    # train's final metrics are computed in chunks of the batch size,
    # averaged by example count: exact for mse/mae, close for the
    # ignore-aware cross-entropy and accuracy.
    check(close(kv_train[1][1], mae_ref), f"train mae {kv_train[1][1]} vs {mae_ref}")
    check(abs(kv_train[0][1] - loss_ref) < 0.05 * loss_ref, "train loss near reference")

    # same seed, same bytes; another seed, another model
    r2 = run("train", "--inputs", IN, "--labels", LAB, "--epochs", 30, "--batch", 16,
             "--lr", 0.05, "--seed", 1, "--save", P("w1b.safetensors"), "--quiet")
    check(r2.returncode == 0 and r2.stderr == "", f"--quiet train is silent: {r2.stderr!r}")
    check(open(P("w1.safetensors"), "rb").read() == open(P("w1b.safetensors"), "rb").read(),
          "training is deterministic for a seed")
    check(r2.stdout == r.stdout, "same final metrics for the same seed")
    run("train", "--inputs", IN, "--labels", LAB, "--epochs", 2, "--seed", 2, "--quiet",
        "--save", P("w2.safetensors"))
    check(open(P("w1.safetensors"), "rb").read() != open(P("w2.safetensors"), "rb").read(),
          "another seed gives another model")

    # optimizers and options
    for extra in (["--optimizer", "sgd", "--lr", 0.05, "--momentum", 0.9, "--weight-decay", 1e-4],
                  ["--optimizer", "adamw", "--lr", 0.05, "--weight-decay", 0.01],
                  ["--optimizer", "adam", "--lr", 0.05, "--clip", 0.5],
                  ["--optimizer=sgd", "--lr=0.1", "--batch=200"]):
        r = run("train", "--inputs", IN, "--labels", LAB, "--epochs", 20, "--save",
                P("wo.safetensors"), *extra)
        ls = [float(l.split("loss ")[1].split()[0]) for l in r.stderr.strip().split("\n")]
        check(r.returncode == 0 and ls[-1] < 0.5 * ls[0], f"train {extra}: {r.stderr[-300:]}")
    # a batch larger than N: max_batch = N, one step per epoch
    r = run("train", "--inputs", IN, "--labels", LAB, "--epochs", 3, "--batch", 1000,
            "--save", P("wb.safetensors"))
    check(r.returncode == 0 and "epoch 3/3  step 3  " in r.stderr, f"batch > N: {r.stderr}")
    # a last partial batch is used: 200 = 3 * 64 + 8 -> 4 steps per epoch
    r = run("train", "--inputs", IN, "--labels", LAB, "--epochs", 2, "--batch", 64,
            "--save", P("wb.safetensors"))
    check(r.returncode == 0 and "epoch 2/2  step 8  " in r.stderr, f"partial batch: {r.stderr}")
    _, wb = read_st(P("wb.safetensors"))
    check(wb["seen"][0] == 400, "every example is seen once per epoch")

    # validation set and continuing from weights
    r = run("train", "--inputs", IN, "--labels", LAB, "--epochs", 3, "--lr", 0.05,
            "--val-inputs", VIN, "--val-labels", VLAB, "--weights", P("w1.safetensors"),
            "--save", P("w3.safetensors"))
    check(r.returncode == 0, f"train with val: {r.stderr}")
    check(all("val_loss " in l and "val_mae " in l and "val_accuracy " in l
              for l in r.stderr.strip().split("\n")), f"val metrics per epoch: {r.stderr}")
    keys = [kk for kk, _ in parse_kv(r.stdout)]
    check(keys == ["loss", "mae", "accuracy", "val_loss", "val_mae", "val_accuracy"],
          f"train with val prints {keys}")
    _, w3 = read_st(P("w3.safetensors"))
    check(w3["seen"][0] == 6000 + 600, "--weights loads params and state before training")
    first = float(r.stderr.split("loss ")[1].split()[0])
    check(first < 2 * losses[-1] + 0.1, "training continues from the loaded weights")

    # ---- eval: format and values
    r = run("eval", "--weights", P("w1.safetensors"), "--inputs", IN, "--labels", LAB)
    check(r.returncode == 0, f"eval: {r.stderr}")
    lines = r.stdout.strip().split("\n")
    check([l.split("=")[0] for l in lines] == ["loss", "mae", "accuracy"], f"eval lines {lines}")
    ev = dict(parse_kv(r.stdout))
    check(close(ev["loss"], loss_ref) and close(ev["mae"], mae_ref) and close(ev["accuracy"], acc_ref),
          f"eval values {ev} vs {(loss_ref, mae_ref, acc_ref)}")
    check(all(l.split("=")[1] == "%.9g" % float(l.split("=")[1]) for l in lines),
          "eval prints %.9g")

    # ---- predict: shape, dtype, values
    r = run("predict", "--weights", P("w1.safetensors"), "--inputs", IN, "--output", P("p.npy"))
    check(r.returncode == 0, f"predict: {r.stderr}")
    pr = np.load(P("p.npy"))
    check(pr.dtype == np.float32 and pr.shape == (200, 2), f"predict output {pr.dtype} {pr.shape}")
    check(close(pr, reference(wts, x, k, y, c)[3]), "predict values")

    # ---- --non-strict: a file with a tensor the model lacks (an I64
    # scalar, as PyTorch's num_batches_tracked) and without `seen`
    loose = {n: (wts[n] * 0.5).astype("<f4") for n in "wbe"}
    loose["bn.num_batches_tracked"] = np.array(7, "<i8")
    write_st(P("loose.safetensors"), loose)
    r = run("eval", "--weights", P("loose.safetensors"), "--inputs", IN, "--labels", LAB)
    check(r.returncode == 2 and "unexpected tensor 'bn.num_batches_tracked'" in r.stderr,
          f"a strict load rejects an unknown tensor: {r.returncode} {r.stderr}")
    r = run("eval", "--weights", P("loose.safetensors"), "--inputs", IN, "--labels", LAB, "--non-strict")
    check(r.returncode == 0, f"eval --non-strict: {r.stderr}")
    lines = r.stderr.strip().split("\n")
    check(lines == [P("loose.safetensors") + ": ignored tensor 'bn.num_batches_tracked' (the model has no such "
                    "param or state)",
                    P("loose.safetensors") + ": missing tensor 'seen' (left as it was)"],
          f"--non-strict lists what it ignored and missed: {lines}")
    ev = dict(parse_kv(r.stdout))
    check(close(ev["loss"], reference(loose, x, k, y, c)[0]), "--non-strict loads the tensors it has")
    # a tensor both have must still match in shape
    loose["w"] = np.zeros((3, 2), "<f4")
    write_st(P("loose_bad.safetensors"), loose)
    r = run("predict", "--weights", P("loose_bad.safetensors"), "--inputs", IN, "--output", P("pl.npy"),
            "--non-strict")
    check(r.returncode == 2 and len(r.stderr.strip().split("\n")) == 1 and "'w'" in r.stderr
          and not os.path.exists(P("pl.npy")), f"--non-strict still checks shapes: {r.stderr}")

    # ---- more than 65536 examples: eval and predict run in chunks
    big = make(70000, "big", ignored=False)
    BIN = P("big_x.npy") + "," + P("big_k.npy")
    r = run("eval", "--weights", P("w1.safetensors"), "--inputs", BIN, "--labels",
            P("big_y.npy") + "," + P("big_c.npy"))
    lb, mb, ab, pb = reference(wts, *big)
    ev = dict(parse_kv(r.stdout))
    check(r.returncode == 0 and close(ev["loss"], lb) and close(ev["mae"], mb)
          and close(ev["accuracy"], ab), f"chunked eval {ev} vs {(lb, mb, ab)}")
    r = run("predict", "--weights", P("w1.safetensors"), "--inputs", BIN, "--output",
            P("pbig.npy"))
    pbig = np.load(P("pbig.npy"))
    check(r.returncode == 0 and pbig.shape == (70000, 2) and close(pbig, pb), "chunked predict")

    # ---- grad against autograd
    r = run("grad", "--weights", P("w1.safetensors"), "--inputs", IN, "--labels", LAB,
            "--output", P("g.safetensors"))
    check(r.returncode == 0, f"grad: {r.stderr}")
    gnames, g = read_st(P("g.safetensors"))
    check(gnames == ["w", "b", "e", "loss"], f"grad tensors {gnames}")
    check(g["loss"].shape == (), f"loss is a scalar: {g['loss'].shape}")
    tw = {n: torch.tensor(wts[n].astype(np.float64), requires_grad=True) for n in "wbe"}
    pt = (torch.tensor(x, dtype=torch.float64) @ tw["w"].T + tw["b"]
          + tw["e"][torch.tensor(k, dtype=torch.long)])
    lt = (((pt - torch.tensor(y, dtype=torch.float64)) ** 2).mean()
          + torch.nn.functional.cross_entropy(pt, torch.tensor(c, dtype=torch.long),
                                              ignore_index=-100))
    lt.backward()
    for n in "wbe":
        check(close(g[n], tw[n].grad.numpy()), f"grad {n}: {g[n]} vs {tw[n].grad.numpy()}")
    check(close(g["loss"], lt.item()), f"grad loss {g['loss']} vs {lt.item()}")

    # ---- bad files: exit 2, one line naming the file, no output
    def bad_file_cases():
        np.save(P("x_i4.npy"), rs.randint(0, 3, size=(200, 3)).astype(np.int32))
        np.save(P("x_f8.npy"), rs.randn(200, 3))
        np.save(P("x_wide.npy"), rs.randn(200, 4).astype(np.float32))
        np.save(P("x_flat.npy"), rs.randn(200).astype(np.float32))
        np.save(P("x_199.npy"), rs.randn(199, 3).astype(np.float32))
        np.save(P("y_199.npy"), rs.randn(199, 2).astype(np.float32))
        np.save(P("x_0.npy"), np.zeros((0, 3), np.float32))
        np.save(P("k_0.npy"), np.zeros((0,), np.int32))
        kk = k.copy(); kk[17] = 4
        np.save(P("k_range.npy"), kk)
        kk = k.copy(); kk[3] = -100
        np.save(P("k_ignored.npy"), kk)
        cc = c.copy(); cc[5] = 2
        np.save(P("c_range.npy"), cc)
        cc = c.copy(); cc[5] = -1
        np.save(P("c_neg.npy"), cc)
        raw = open(P("tr_x.npy"), "rb").read()
        open(P("x_trunc.npy"), "wb").write(raw[:-10])
        open(P("garbage.safetensors"), "wb").write(b"not a checkpoint at all")
        bad_w = dict(wts); bad_w["w"] = np.zeros((3, 2), np.float32)
        write_st(P("wrongshape.safetensors"), {n: bad_w[n].astype("<f4") for n in ["w", "b", "e", "seen"]})
        X, K, Y, C = P("tr_x.npy"), P("tr_k.npy"), P("tr_y.npy"), P("tr_c.npy")
        return [
            ("missing input", P("nope.npy") + "," + K, Y + "," + C, P("nope.npy"), "cannot open"),
            ("wrong dtype", P("x_i4.npy") + "," + K, Y + "," + C, P("x_i4.npy"),
             "dtype <i4, expected <f4 for input 'x'"),
            ("unsupported dtype", P("x_f8.npy") + "," + K, Y + "," + C, P("x_f8.npy"), "'<f8'"),
            ("wrong shape", P("x_wide.npy") + "," + K, Y + "," + C, P("x_wide.npy"),
             "shape (200, 4), expected (N, 3) for input 'x'"),
            ("wrong ndim", P("x_flat.npy") + "," + K, Y + "," + C, P("x_flat.npy"), "expected (N, 3)"),
            ("batch mismatch input", P("x_199.npy") + "," + K, Y + "," + C, K, "has 199"),
            ("batch mismatch label", X + "," + K, P("y_199.npy") + "," + C, P("y_199.npy"),
             "199 examples, but"),
            ("no examples", P("x_0.npy") + "," + P("k_0.npy"), Y + "," + C, P("x_0.npy"), "no examples"),
            ("id out of range", X + "," + P("k_range.npy"), Y + "," + C, P("k_range.npy"),
             "value 4 at index 17 out of range for input 'k'"),
            ("-100 where not allowed", X + "," + P("k_ignored.npy"), Y + "," + C,
             P("k_ignored.npy"), "value -100 at index 3"),
            ("label out of range", X + "," + K, Y + "," + P("c_range.npy"), P("c_range.npy"),
             "value 2 at index 5 out of range for label 'c' (expected 0 <= value < 2, or -100)"),
            ("negative label", X + "," + K, Y + "," + P("c_neg.npy"), P("c_neg.npy"), "value -1"),
            ("truncated npy", P("x_trunc.npy") + "," + K, Y + "," + C, P("x_trunc.npy"),
             "truncated data"),
        ]

    for label, ins, labs, path, what in bad_file_cases():
        out = P("out_" + label.replace(" ", "_"))
        r = run("train", "--inputs", ins, "--labels", labs, "--epochs", 1, "--save", out + ".st")
        one_line_error(r, path, what, [out + ".st"], label="train " + label)
        r = run("eval", "--weights", P("w1.safetensors"), "--inputs", ins, "--labels", labs)
        one_line_error(r, path, what, [], label="eval " + label)
        r = run("grad", "--weights", P("w1.safetensors"), "--inputs", ins, "--labels", labs,
                "--output", out + ".g")
        one_line_error(r, path, what, [out + ".g"], label="grad " + label)
        if path in ins.split(","):
            r = run("predict", "--weights", P("w1.safetensors"), "--inputs", ins,
                    "--output", out + ".npy")
            one_line_error(r, path, what, [out + ".npy"], label="predict " + label)
    # Bad validation files and weights files.
    cc = cv.copy(); cc[7] = 3
    np.save(P("cv_range.npy"), cc)
    r = run("train", "--inputs", IN, "--labels", LAB, "--val-inputs", VIN, "--val-labels",
            P("va_y.npy") + "," + P("cv_range.npy"), "--save", P("never.st"))
    one_line_error(r, P("cv_range.npy"), "value 3 at index 7", [P("never.st")], label="val file")
    for wf, what in [(P("garbage.safetensors"), "past end of file"),
                     (P("wrongshape.safetensors"), "tensor 'w': shape [3, 2], expected [2, 3]"),
                     (P("nope.safetensors"), "cannot open")]:
        r = run("eval", "--weights", wf, "--inputs", IN, "--labels", LAB)
        one_line_error(r, wf, what, [], label="eval weights")
        r = run("predict", "--weights", wf, "--inputs", IN, "--output", P("never.npy"))
        one_line_error(r, wf, what, [P("never.npy")], label="predict weights")
        r = run("train", "--weights", wf, "--inputs", IN, "--labels", LAB, "--save", P("never.st"))
        one_line_error(r, wf, what, [P("never.st")], label="train weights")
    # An output that cannot be written.
    r = run("predict", "--weights", P("w1.safetensors"), "--inputs", IN, "--output",
            P("no/such/dir/p.npy"))
    one_line_error(r, "no/such/dir/p.npy", "cannot create", [], label="unwritable output")

    # ---- usage errors: exit 1, usage on stderr, nothing written
    r = run()
    check(r.returncode == 1 and "usage:" in r.stderr and r.stdout == "", "no arguments")
    r = run("--help")
    check(r.returncode == 0 and "usage:" in r.stdout and "train" in r.stdout, "--help")
    check("NNC_ISA=avx512|avx2|generic" in r.stdout, f"--help names NNC_ISA: {r.stdout}")
    r = run("train", "--help")
    check(r.returncode == 0 and "--optimizer" in r.stdout, "train --help")
    usage_cases = [
        ("unknown subcommand", ["bogus"], "unknown subcommand 'bogus'"),
        ("unknown option", ["train", "--inputs", IN, "--labels", LAB, "--save", P("u.st"), "--bogus", "1"],
         "unknown option '--bogus'"),
        ("option of another subcommand", ["predict", "--weights", P("w1.safetensors"), "--inputs", IN,
                                          "--output", P("u.npy"), "--epochs", "3"], "unknown option '--epochs'"),
        ("missing --save", ["train", "--inputs", IN, "--labels", LAB], "missing --save"),
        ("missing --labels", ["train", "--inputs", IN, "--save", P("u.st")], "missing --labels"),
        ("missing --weights", ["eval", "--inputs", IN, "--labels", LAB], "missing --weights"),
        ("missing --output", ["grad", "--weights", P("w1.safetensors"), "--inputs", IN, "--labels", LAB],
         "missing --output"),
        ("missing value", ["train", "--inputs", IN, "--labels", LAB, "--save"], "needs a value"),
        ("bad epochs", ["train", "--inputs", IN, "--labels", LAB, "--save", P("u.st"), "--epochs", "ten"],
         "--epochs"),
        ("bad batch", ["train", "--inputs", IN, "--labels", LAB, "--save", P("u.st"), "--batch", "0"],
         "--batch"),
        ("bad lr", ["train", "--inputs", IN, "--labels", LAB, "--save", P("u.st"), "--lr", "-1"], "--lr"),
        ("bad lr text", ["train", "--inputs", IN, "--labels", LAB, "--save", P("u.st"), "--lr", "1e-3x"],
         "--lr"),
        ("bad seed", ["train", "--inputs", IN, "--labels", LAB, "--save", P("u.st"), "--seed", "-4"],
         "--seed"),
        ("bad optimizer", ["train", "--inputs", IN, "--labels", LAB, "--save", P("u.st"), "--optimizer",
                           "rmsprop"], "--optimizer"),
        ("momentum without sgd", ["train", "--inputs", IN, "--labels", LAB, "--save", P("u.st"),
                                  "--momentum", "0.9"], "--momentum"),
        ("wrong input count", ["train", "--inputs", P("tr_x.npy"), "--labels", LAB, "--save", P("u.st")],
         "takes 2 inputs, got 1"),
        ("wrong label count", ["eval", "--weights", P("w1.safetensors"), "--inputs", IN, "--labels",
                               LAB + "," + LAB], "takes 2 labels, got 4"),
        ("empty name", ["predict", "--weights", P("w1.safetensors"), "--inputs", P("tr_x.npy") + ",",
                        "--output", P("u.npy")], "empty file name"),
        ("option twice", ["eval", "--weights", P("w1.safetensors"), "--weights", P("w1.safetensors"),
                          "--inputs", IN, "--labels", LAB], "given twice"),
        ("positional", ["info", "extra"], "unexpected argument 'extra'"),
        ("val labels alone", ["train", "--inputs", IN, "--labels", LAB, "--save", P("u.st"),
                              "--val-labels", VLAB], "--val-labels needs --val-inputs"),
    ]
    for label, args, what in usage_cases:
        r = run(*args)
        first = r.stderr.split("\n")[0]
        check(r.returncode == 1 and first.startswith(PROG + ": ") and what in first
              and "usage:" in r.stderr and r.stdout == "",
              f"usage error {label}: {r.returncode} {r.stderr!r}")
    check(not any(os.path.exists(P(f)) for f in ("u.st", "u.npy")), "usage errors write nothing")

    # ---- an inference-only model: info and predict only
    r = run("info", prog=NOLOSS)
    check(r.returncode == 0 and "loss no (inference only)" in r.stdout
          and "label" not in r.stdout, f"noloss info: {r.stdout}")
    for sub in ("train", "eval", "grad"):
        r = run(sub, "--inputs", IN, prog=NOLOSS)
        check(r.returncode == 1 and "has no loss" in r.stderr, f"noloss {sub}: {r.stderr!r}")
    r = run("predict", "--weights", P("w1.safetensors"), "--inputs", IN, "--output",
            P("pn.npy"), prog=NOLOSS)
    check(r.returncode == 0 and close(np.load(P("pn.npy")), pr), f"noloss predict: {r.stderr}")
    r = run("predict", "--weights", P("w1.safetensors"), "--inputs", IN, "--labels", LAB,
            "--output", P("pn2.npy"), prog=NOLOSS)
    check(r.returncode == 1 and not os.path.exists(P("pn2.npy")), "noloss rejects --labels")
    r = run("--help", prog=NOLOSS)
    check(r.returncode == 0 and " train " not in r.stdout and "predict" in r.stdout,
          "noloss usage lists info and predict only")

if failures:
    print(f"check_driver: {len(failures)} failures")
    sys.exit(1)
print("check_driver: ok")
