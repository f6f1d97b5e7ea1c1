"""--save-every, --stop-after and --resume: a run stopped and resumed from
its checkpoint ends with the same bits as one that never stopped.

On digits_cnn (Dropout, whose masks come from the model's random stream,
and BatchNorm, whose running statistics are state), for SGD with momentum,
Adam and AdamW, with a cosine schedule and warmup: run A trains 3 epochs
uninterrupted with --save-every; run B stops after S steps (mid-epoch, on
an epoch's last step, with --accumulate 2) and a second run resumes it.
The two checkpoints must be byte-identical (weights, moments, counters,
the stream), and the resumed run's log must continue the first one's rows.
Then: resuming a checkpoint without training state, or with other
settings, is an error naming them; the model's own load (`eval`) takes a
checkpoint with training state.

Usage: check_resume.py DIGITS_CNN_DRIVER DATA_DIR
"""

import csv
import os
import subprocess
import sys
import tempfile

DRIVER, DATA = sys.argv[1], sys.argv[2]
X, Y = os.path.join(DATA, "x_train_img.npy"), os.path.join(DATA, "y_train.npy")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def train(save, *args, threads=1):
    r = subprocess.run([DRIVER, "train", "--inputs", X, "--labels", Y, "--save", save, "--quiet",
                        "--threads", str(threads)] + [str(a) for a in args], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
    return r


with tempfile.TemporaryDirectory() as tmp:
    a, b = os.path.join(tmp, "a.safetensors"), os.path.join(tmp, "b.safetensors")
    # 1437 examples: 45 steps an epoch at batch 32, 23 with --accumulate 2
    cases = [("sgd", ["--momentum", 0.9, "--lr", 0.05], 30, []),
             ("adam", ["--lr", 3e-3], 45, []),
             ("adamw", ["--lr", 3e-3, "--weight-decay", 0.05], 50, ["--accumulate", 2])]
    for opt, extra, stop, acc in cases:
        common = ["--epochs", 3, "--optimizer", opt, *extra, "--lr-schedule", "cosine", "--warmup", 8,
                  "--seed", 5, "--save-every", 13, *acc]
        la, lb = os.path.join(tmp, "a.csv"), os.path.join(tmp, "b.csv")
        ra = train(a, *common, "--log", la)
        rb1 = train(b, *common, "--log", lb, "--stop-after", stop)
        # the resumed half on 2 threads: the bits do not depend on it
        rb2 = train(b, *common, "--log", lb, "--resume", b, threads=2)
        ok = ra.returncode == 0 and rb1.returncode == 0 and rb2.returncode == 0
        check(ok, f"{opt}: exits {ra.returncode} {rb1.returncode} {rb2.returncode}")
        if not ok:
            continue
        same = open(a, "rb").read() == open(b, "rb").read()
        check(same, f"{opt} {acc}: stopped after {stop} steps and resumed: the checkpoint differs")
        rows_a, rows_b = list(csv.reader(open(la))), list(csv.reader(open(lb)))
        steps_b = [r[0] for r in rows_b[1:]]
        check([r[0] for r in rows_a[1:]] == steps_b, f"{opt}: the resumed log's steps {steps_b[:3]}...")
        check(rows_a[0] == rows_b[0] and rows_b.count(rows_b[0]) == 1, f"{opt}: the log's header")
        check([r[3] for r in rows_a[1:]] == [r[3] for r in rows_b[1:]], f"{opt}: the learning rates")
        print(f"{opt}{' accumulate 2' if acc else ''}: stopped at step {stop}, resumed: "
              f"{'identical' if same else 'DIFFERENT'} checkpoint, {len(steps_b)} log rows")

    # stopping changes the bits: the comparison can fail
    c = os.path.join(tmp, "c.safetensors")
    train(c, "--epochs", 3, "--optimizer", "adam", "--lr", 3e-3, "--lr-schedule", "cosine", "--warmup", 8,
          "--seed", 5, "--save-every", 13, "--stop-after", 45)
    train(c, "--epochs", 3, "--optimizer", "adam", "--lr", 3e-3, "--lr-schedule", "cosine", "--warmup", 8,
          "--seed", 5, "--save-every", 13, "--resume", c, "--weight-decay", 0.01)
    check(open(c, "rb").read() != open(a, "rb").read(), "a resumed run with another weight decay is not identical")

    # errors: no training state; other settings
    w = os.path.join(tmp, "w.safetensors")
    train(w, "--epochs", 1)
    r = train(os.path.join(tmp, "x.safetensors"), "--resume", w)
    check(r.returncode == 2 and "no training state" in r.stderr, f"resume of weights alone: {r.stderr.strip()}")
    r = train(os.path.join(tmp, "x.safetensors"), "--resume", b, "--optimizer", "adamw", "--batch", 16)
    first = r.stderr.splitlines()[0] if r.stderr else ""
    check(r.returncode == 1 and ("--seed" in first or "--batch" in first), f"resume with other settings: {first}")
    r = train(os.path.join(tmp, "x.safetensors"), "--resume", b, "--weights", w)
    check(r.returncode == 1, "--resume with --weights")
    # the model's load ignores the training state
    e = subprocess.run([DRIVER, "eval", "--weights", b, "--inputs", X, "--labels", Y], capture_output=True, text=True)
    check(e.returncode == 0 and "accuracy=" in e.stdout, f"eval of a checkpoint with training state: {e.stderr}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("all resume checks passed")
