"""nnc_fans against torch.nn.init._calculate_fan_in_and_fan_out.

PyTorch defines fans for tensors of 2 or more dims; for 1-D (and 0-D)
tensors, where PyTorch raises, the language spec says fan_in = fan_out =
the element count, which is checked instead."""

import subprocess
import sys

import torch

probe = sys.argv[1]


def fans(shape):
    out = subprocess.run([probe, "fans"] + [str(d) for d in shape], check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[0]), float(out[1])


for shape in [(10, 20), (128, 64), (1, 1), (3, 7, 5), (16, 3, 5, 5), (64, 32, 3, 3),
              (2, 3, 4, 5, 6)]:
    want = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    got = fans(shape)
    assert got == tuple(float(w) for w in want), f"{shape}: {got} != {want}"

for shape in [(7,), (1,), (1000,)]:
    try:
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
        raise AssertionError("torch no longer raises for 1-D; revisit the spec rule")
    except ValueError:
        pass
    assert fans(shape) == (float(shape[0]), float(shape[0])), shape
assert fans(()) == (1.0, 1.0)
print("check_fans: ok")
