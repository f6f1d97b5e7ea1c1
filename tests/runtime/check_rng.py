"""The C RNG against the reference model in nnc_rng_ref.py.

First checks the reference itself against the published splitmix64 test
vector (seed 1234567), then compares every sampler of rt_probe's output for
several seeds, bit for bit (floats to the last printed digit)."""

import subprocess
import sys

from nnc_rng_ref import Rng, splitmix64_stream

probe = sys.argv[1]

g = splitmix64_stream(1234567)
published = [6457827717110365317, 3203168211198807973, 9817491932198370423,
             4593380528125082431, 16408922859458223821]
assert [next(g) for _ in range(5)] == published, "reference splitmix64 is wrong"

for seed in (0, 1, 42, 2**32 + 17, 2**64 - 1):
    out = subprocess.run([probe, "rng", str(seed), "100"], check=True,
                         capture_output=True, text=True).stdout.split()
    r = Rng(seed)
    want = [r.next() for _ in range(100)]
    assert [int(v) for v in out[:100]] == want, f"seed {seed}: raw outputs differ"
    assert [int(v) for v in out[100:105]] == [r.below(1000) for _ in range(5)], \
        f"seed {seed}: below differs"
    for k in range(3):
        got, ref = float(out[105 + k]), r.uniform()
        assert got == ref, f"seed {seed}: uniform {got} != {ref}"
    for k in range(3):
        got, ref = float(out[108 + k]), r.normal()
        assert abs(got - ref) <= 1e-15 * max(1.0, abs(ref)), f"seed {seed}: normal {got} != {ref}"
print("check_rng: ok")
