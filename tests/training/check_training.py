"""The generated driver's training flags on the digits model (docs/driver.md).

- --lr-schedule constant|step|cosine|linear with and without --warmup: the
  lr column of the log, step by step, against torch.optim.lr_scheduler
  (SequentialLR of a LinearLR warmup and StepLR / CosineAnnealingLR /
  LinearLR / constant);
- --log: the CSV header and JSON keys, one row per logged step (--log-every),
  the validation columns on each epoch's last row only;
- --accumulate K at batch B against one batch of K*B (SGD): the weights
  after two epochs agree within 1e-5;
- --val-split F: the held-out examples are those the seed's permutation
  picks (re-created here with the reference RNG), and the validation loss
  the driver reports equals `eval` of the trained weights on them;
- a bad value of every new flag: exit 1 and an error naming the flag.

Usage: check_training.py DIGITS_DRIVER DATA_DIR RNG_REF_DIR
"""

import csv
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch

DRIVER, DATA, REF = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, REF)
import nnc_rng_ref  # noqa: E402

X, Y = os.path.join(DATA, "x_train.npy"), os.path.join(DATA, "y_train.npy")
N = np.load(X).shape[0]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def train(tmp, *args):
    r = subprocess.run([DRIVER, "train", "--inputs", X, "--labels", Y, "--save", os.path.join(tmp, "w.safetensors"),
                        "--quiet", "--threads", "1"] + [str(a) for a in args], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
    return r


def read_st(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    return {k: np.frombuffer(data[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]], "<f4")
            for k, v in header.items() if k != "__metadata__"}


def read_csv(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def torch_lrs(kind, base, warmup, total, step_size, gamma):
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=base)
    S = torch.optim.lr_scheduler
    T = max(total - warmup, 1)
    main = {"constant": lambda: S.LambdaLR(opt, lambda _: 1.0),
            "step": lambda: S.StepLR(opt, step_size=step_size, gamma=gamma),
            "cosine": lambda: S.CosineAnnealingLR(opt, T_max=T, eta_min=0.0),
            "linear": lambda: S.LinearLR(opt, start_factor=1.0, end_factor=0.0, total_iters=T)}[kind]
    if warmup:
        sched = S.SequentialLR(opt, [S.LinearLR(opt, start_factor=1.0 / warmup, end_factor=1.0,
                                                total_iters=warmup - 1), main()], milestones=[warmup])
    else:
        sched = main()
    out = []
    for _ in range(total):
        out.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return out


with tempfile.TemporaryDirectory() as tmp:
    # ---- schedules: 3 epochs of 1437 / 64 -> 23 steps each, 69 in all
    batch, epochs = 64, 3
    per_epoch = -(-N // batch)
    total = per_epoch * epochs
    for kind in ["constant", "step", "cosine", "linear"]:
        for warmup in [0, 7]:
            extra = ["--lr-step-size", 10, "--lr-gamma", 0.5] if kind == "step" else []
            log = os.path.join(tmp, "s.csv")
            r = train(tmp, "--epochs", epochs, "--batch", batch, "--lr", 0.01, "--optimizer", "sgd",
                      "--lr-schedule", kind, "--warmup", warmup, "--log", log, *extra)
            check(r.returncode == 0, f"{kind} warmup {warmup}: exit {r.returncode}")
            if r.returncode:
                continue
            head, rows = read_csv(log)
            got = [float(row[head.index("lr")]) for row in rows]
            want = torch_lrs(kind, 0.01, warmup, total, 10, 0.5)
            err = max(abs(g - w) / max(abs(w), 1e-12) for g, w in zip(got, want)) if len(got) == len(want) else 1
            check(len(got) == total and err < 1e-6,
                  f"{kind} warmup {warmup}: {len(got)} lrs (want {total}), max relative error {err:.3g}")
    print(f"schedules: 8 runs of {total} steps against torch.optim.lr_scheduler")

    # ---- the log: columns, one row per logged step, validation on epoch ends
    for ext in ["csv", "jsonl"]:
        log = os.path.join(tmp, "l." + ext)
        r = train(tmp, "--epochs", 2, "--batch", 100, "--val-split", 0.25, "--log", log, "--log-every", 5)
        check(r.returncode == 0, f"log {ext}: exit {r.returncode}")
        n_train = N - int(0.25 * N)
        per = -(-n_train // 100)
        want_steps = sorted({s for s in range(1, 2 * per + 1) if s % 5 == 0} | {per, 2 * per})
        cols = ["step", "epoch", "loss", "lr", "examples_per_s", "val_loss", "val_accuracy"]
        if ext == "csv":
            head, rows = read_csv(log)
            check(head == cols, f"csv header {head}")
            recs = [{k: v for k, v in zip(head, row) if v != ""} for row in rows]
        else:
            recs = [json.loads(line) for line in open(log)]
            check(all(set(rec) <= set(cols) and set(cols[:5]) <= set(rec) for rec in recs),
                  f"jsonl keys {sorted(set().union(*recs))}")
        steps = [int(float(rec["step"])) for rec in recs]
        check(steps == want_steps, f"{ext}: logged steps {steps}, want {want_steps}")
        with_val = [int(float(rec["step"])) for rec in recs if "val_loss" in rec]
        check(with_val == [per, 2 * per], f"{ext}: validation on steps {with_val}, want {[per, 2 * per]}")
        check(all(float(rec["loss"]) > 0 and float(rec["examples_per_s"]) > 0 for rec in recs), f"{ext}: values")
    print("log: csv and jsonl columns and rows")

    # ---- accumulation: 4 batches of 16 against one of 64, SGD
    def weights(*args):
        r = train(tmp, "--epochs", 2, "--optimizer", "sgd", "--lr", 0.1, "--seed", 3, *args)
        check(r.returncode == 0, f"accumulate run {args}: exit {r.returncode}")
        return read_st(os.path.join(tmp, "w.safetensors"))

    a, b = weights("--batch", 16, "--accumulate", 4), weights("--batch", 64)
    err = max(float(np.max(np.abs(a[k] - b[k])) / max(np.max(np.abs(b[k])), 1e-30)) for k in b)
    check(err < 1e-5, f"--accumulate 4 x 16 against --batch 64: relative difference {err:.3g}")
    c = weights("--batch", 16)
    diff = max(float(np.max(np.abs(c[k] - b[k]))) for k in b)
    check(diff > 1e-3, f"the check can fail: batch 16 alone differs from 64 by only {diff:.3g}")
    print(f"accumulate: 4 x 16 against 64, relative difference {err:.3g} (batch 16 alone: {diff:.3g})")

    # ---- the held-out split: the seed's permutation, and its val_loss
    seed = 11
    r = train(tmp, "--epochs", 1, "--batch", 50, "--val-split", 0.2, "--seed", seed)
    out = dict(line.split("=", 1) for line in r.stdout.split())
    rng = nnc_rng_ref.Rng(seed ^ 0x53504C4954564C21)
    held = sorted(nnc_rng_ref.shuffle(rng, list(range(N)))[:int(0.2 * N)])
    xv, yv = np.load(X)[held], np.load(Y)[held]
    np.save(os.path.join(tmp, "xv.npy"), xv)
    np.save(os.path.join(tmp, "yv.npy"), yv)
    e = subprocess.run([DRIVER, "eval", "--weights", os.path.join(tmp, "w.safetensors"), "--inputs",
                        os.path.join(tmp, "xv.npy"), "--labels", os.path.join(tmp, "yv.npy")],
                       capture_output=True, text=True)
    ev = dict(line.split("=", 1) for line in e.stdout.split())
    check(abs(float(out["val_loss"]) - float(ev["loss"])) <= 1e-6 * abs(float(ev["loss"])),
          f"val_loss {out.get('val_loss')} against eval on the held-out rows {ev.get('loss')}")
    check(abs(float(out["val_accuracy"]) - float(ev["accuracy"])) < 1e-6,
          f"val_accuracy {out.get('val_accuracy')} against eval {ev.get('accuracy')}")
    print(f"val-split: {len(held)} held out, val_loss {out['val_loss']} = eval {ev['loss']}")

    # ---- progress within an epoch: plain lines off a terminal, a bar on one
    r = subprocess.run([DRIVER, "train", "--inputs", X, "--labels", Y, "--save", os.path.join(tmp, "w.safetensors"),
                        "--epochs", "2", "--batch", "100", "--progress", "1e-9"], capture_output=True, text=True)
    lines = [ln for ln in r.stderr.splitlines() if " batch " in ln]
    check(r.returncode == 0 and len(lines) >= 10 and all("elapsed" in ln and "eta" in ln for ln in lines),
          f"progress lines: {lines[:2]}")
    check(len([ln for ln in r.stderr.splitlines() if ln.startswith("epoch 2/2  step")]) == 1, "the epoch line")
    master, slave = os.openpty()
    p = subprocess.Popen([DRIVER, "train", "--inputs", X, "--labels", Y, "--save", os.path.join(tmp, "w.safetensors"),
                          "--epochs", "1", "--batch", "100", "--progress", "1e-9"], stdout=subprocess.DEVNULL,
                         stderr=slave)
    os.close(slave)
    tty = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        tty += chunk
    p.wait()
    os.close(master)
    check(p.returncode == 0 and b"\repoch 1/1 [" in tty and b"=>" in tty and b"eta" in tty,
          f"progress bar on a terminal: {tty[:120]!r}")
    print(f"progress: {len(lines)} plain lines, a bar on a terminal")

    # ---- bad values: exit 1, the flag named
    for flag, val in [("--lr-schedule", "exp"), ("--warmup", "-1"), ("--accumulate", "0"), ("--val-split", "1"),
                      ("--val-split", "0"), ("--log", "x.txt"), ("--log-every", "0"), ("--lr-gamma", "0"),
                      ("--progress", "-2"), ("--lr-step-size", "0"), ("--save-every", "0"),
                      ("--stop-after", "x")]:
        extra = ["--lr-schedule", "step"] if flag in ("--lr-gamma", "--lr-step-size") else []
        r = train(tmp, flag, val, *extra)
        first = r.stderr.splitlines()[0] if r.stderr else ""
        check(r.returncode == 1 and flag in first, f"{flag} {val}: exit {r.returncode}, '{first}'")
    r = train(tmp, "--lr-gamma", "0.5")
    check(r.returncode == 1 and "step only" in r.stderr, "--lr-gamma without the step schedule")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("all training-flag checks passed")
