"""A short training run of models/names_gpt.nn learns: 150 steps (AdamW, lr
3e-3, batch 32: one epoch over the first 4,800 training names) bring the
held-out loss from about ln(28) = 3.33 nats per character (a uniform guess)
to below 2.6 (it reaches about 2.26; a bigram model reaches about 2.45, the
full `train_names` run about 2.0).  Leaves the data and the checkpoint in
SCRATCH for check_names_sample.py.

Usage: check_names_train.py PREPARE_NAMES NAMES_GPT NAMES_TXT SCRATCH
"""

import math
import os
import re
import shutil
import subprocess
import sys

import numpy as np

prepare, driver, src, scratch = sys.argv[1:5]
MAX_LOSS = 2.6
STEPS, BATCH = 150, 32

shutil.rmtree(scratch, ignore_errors=True)
data = os.path.join(scratch, "data")
ckpt = os.path.join(scratch, "names_gpt.safetensors")
subprocess.run([prepare, src, data], check=True, capture_output=True)
for f in ("ids", "y"):
    a = np.load(f"{data}/{f}_train.npy")
    np.save(f"{scratch}/{f}_short.npy", a[:STEPS * BATCH])


def eval_loss(weights):
    r = subprocess.run([driver, "eval", "--weights", weights, "--inputs", f"{data}/ids_test.npy",
                        "--labels", f"{data}/y_test.npy"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    m = re.search(r"^loss=(\S+)$", r.stdout, re.M)
    assert m, r.stdout
    return float(m.group(1))


r = subprocess.run([driver, "train", "--inputs", f"{scratch}/ids_short.npy",
                    "--labels", f"{scratch}/y_short.npy", "--optimizer", "adamw", "--lr", "3e-3",
                    "--batch", str(BATCH), "--epochs", "1", "--seed", "1", "--quiet", "--save", ckpt],
                   capture_output=True, text=True)
assert r.returncode == 0, r.stderr
loss = eval_loss(ckpt)
uniform = math.log(28)
print(f"held-out loss after {STEPS} steps: {loss:.4f} (uniform {uniform:.4f}, bound {MAX_LOSS})")
assert loss < MAX_LOSS, loss
print("check_names_train: ok")
