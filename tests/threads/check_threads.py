"""Bitwise determinism across thread counts (runtime/threads.c).

For each model given: compile it with nnc (--emit=all), build the driver
with -fopenmp, make a small random training file from the driver's `info`
(inputs and labels of the declared shapes and ranges), train one epoch of
a few batches with the same seed at each thread count, and require the
saved weights to be the same bytes; then `predict` with those weights at
each thread count and require the same output bytes.

usage: check_threads.py NNC RUNTIME_LIB RUNTIME_INCLUDE CC THREADS MODEL.nn[:BATCH] ...
  THREADS: comma-separated, e.g. 1,2,3
"""
import os
import subprocess
import sys
import tempfile

from model_data import driver_args, write_data


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if p.returncode != 0:
        sys.exit("check_threads: %s failed (%d):\n%s" % (" ".join(cmd), p.returncode, p.stdout[-3000:]))
    return p.stdout


def main():
    nnc, rtlib, rtinc, cc, threads = sys.argv[1:6]
    threads = [int(t) for t in threads.split(",")]
    failures = 0
    for arg in sys.argv[6:]:
        # path:batch[:opt], opt the generated C's optimization level (O1)
        path, _, rest = arg.partition(":")
        batch, _, opt = rest.partition(":")
        batch, opt = int(batch or 8), opt or "O1"
        name = os.path.splitext(os.path.basename(path))[0]
        with tempfile.TemporaryDirectory() as tmp:
            gen = os.path.join(tmp, "gen")
            run([nnc, os.path.abspath(path), "--emit=all", "-o", gen], cwd=os.path.dirname(os.path.abspath(path)))
            srcs = sorted(os.path.join(gen, f) for f in os.listdir(gen) if f.endswith(".c"))
            drv = os.path.join(tmp, "drv")
            run([cc, "-std=c11", "-" + opt, "-fopenmp", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-I" + rtinc]
                + srcs + [rtlib, "-lopenblas", "-lm", "-fopenmp", "-o", drv])
            count = 3 * batch  # three batches
            inputs, labels = write_data(drv, tmp, count, 7)
            args = driver_args(inputs, labels)
            weights = {}
            for t in threads:
                w = os.path.join(tmp, "w%d.safetensors" % t)
                run([drv, "train"] + args + ["--epochs", "1", "--batch", str(batch), "--seed", "3", "--save", w,
                                             "--threads", str(t), "--quiet"])
                weights[t] = open(w, "rb").read()
            outs = {}
            for t in threads:
                o = os.path.join(tmp, "p%d.npy" % t)
                run([drv, "predict", "--weights", os.path.join(tmp, "w%d.safetensors" % threads[0]), "--inputs",
                     ",".join(inputs), "--output", o, "--threads", str(t)])
                outs[t] = open(o, "rb").read()
            base = threads[0]
            for t in threads[1:]:
                for what, d in (("trained weights", weights), ("predictions", outs)):
                    if d[t] != d[base]:
                        print("check_threads: %s: %s at %d threads differ from %d threads" % (name, what, t, base))
                        failures += 1
            if not failures:
                print("check_threads: %s (batch %d, %d examples): weights and predictions identical at threads %s"
                      % (name, batch, count, ",".join(map(str, threads))))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
