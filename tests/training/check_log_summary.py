"""A `summary` in the training log: running_center.nn reports
summary "hidden_rms" = sqrt(mean(h.square())).  The log has a hidden_rms
column on every row, finite and positive, and each epoch's last row holds
the value the epoch line prints.

Usage: check_log_summary.py CENTERED_DRIVER
"""

import csv
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

DRIVER = sys.argv[1]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


with tempfile.TemporaryDirectory() as tmp:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 5)).astype(np.float32)
    y = (x[:, :2] * 0.5 + 0.1).astype(np.float32)
    np.save(os.path.join(tmp, "x.npy"), x)
    np.save(os.path.join(tmp, "y.npy"), y)
    log = os.path.join(tmp, "log.csv")
    r = subprocess.run([DRIVER, "train", "--inputs", os.path.join(tmp, "x.npy"), "--labels", os.path.join(tmp, "y.npy"),
                        "--save", os.path.join(tmp, "w.safetensors"), "--epochs", "3", "--batch", "40", "--log", log,
                        "--progress", "0"], capture_output=True, text=True)
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr}")
    rows = list(csv.reader(open(log)))
    head, rows = rows[0], rows[1:]
    check(head == ["step", "epoch", "loss", "lr", "examples_per_s", "hidden_rms"], f"header {head}")
    col = head.index("hidden_rms") if "hidden_rms" in head else None
    vals = [float(row[col]) for row in rows] if col is not None else []
    check(len(vals) == 15 and all(0 < v < 100 for v in vals), f"hidden_rms values {vals[:3]}...")
    printed = [float(m) for m in re.findall(r"hidden_rms ([0-9.eE+-]+)", r.stderr)]
    ends = [float(f"{vals[i]:.6g}") for i in (4, 9, 14)] if len(vals) == 15 else []
    check(printed == ends, f"epoch lines {printed} against the log's epoch ends {ends}")
    print(f"summary column: {len(vals)} rows, epoch ends {ends}")

if failures:
    sys.exit(1)
print("summary log checks passed")
