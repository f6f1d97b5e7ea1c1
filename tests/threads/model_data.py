"""Random data for a compiled model's driver, shaped by its `info`: each
input and label of the declared shape (the batch dim `count`), floats
standard-normal, integers uniform in the declared range.  Used by
check_threads.py and run_tsan.sh.

As a command: model_data.py DRIVER DIR COUNT SEED writes DIR/input0.npy,
... and prints the driver's arguments (--inputs A,B [--labels C])."""
import os
import re
import subprocess
import sys

import numpy as np


def write_data(drv, out_dir, count, seed):
    """(input files, label files) written into out_dir"""
    info = subprocess.run([drv, "info"], capture_output=True, text=True, check=True).stdout
    rng = np.random.default_rng(seed)
    files = {"input": [], "label": []}
    for k, line in enumerate(l for l in info.splitlines() if re.match(r"^(input|label) ", l)):
        m = re.match(r"^(input|label) \S+ (f32|i32) \[([^\]]*)\](?: values in \[(-?\d+), (-?\d+)\))?", line)
        if not m:
            sys.exit("model_data: cannot read the driver's line %r" % line)
        shape = [count] + [int(d) for d in m.group(3).split(",")[1:]]
        if m.group(2) == "f32":
            a = rng.standard_normal(shape).astype(np.float32)
        else:
            a = rng.integers(int(m.group(4)), int(m.group(5)), size=shape).astype(np.int32)
        f = os.path.join(out_dir, "%s%d.npy" % (m.group(1), k))
        np.save(f, a)
        files[m.group(1)].append(f)
    return files["input"], files["label"]


def driver_args(inputs, labels):
    """--inputs and, if the model has labels, --labels"""
    args = ["--inputs", ",".join(inputs)]
    return args + ["--labels", ",".join(labels)] if labels else args


if __name__ == "__main__":
    ins, labs = write_data(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    print(" ".join(driver_args(ins, labs)))
