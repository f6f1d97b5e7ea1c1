"""Reference model of the nnc runtime RNG, written from the published
algorithms (splitmix64 and xoshiro256** by Blackman & Vigna,
https://prng.di.unimi.it/) independently of runtime/rng.c, so that tests can
check the C code bit for bit, and re-create shuffles (prepare_digits)."""

import math

M64 = (1 << 64) - 1


def splitmix64_stream(seed):
    x = seed & M64
    while True:
        x = (x + 0x9E3779B97F4A7C15) & M64
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        yield z ^ (z >> 31)


def _rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M64


class Rng:
    """xoshiro256** seeded with four splitmix64 outputs."""

    def __init__(self, seed):
        g = splitmix64_stream(seed)
        self.s = [next(g) for _ in range(4)]

    def next(self):
        s = self.s
        result = (_rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return result

    def uniform(self):
        return (self.next() >> 11) * 2.0 ** -53

    def normal(self):
        u1 = 1.0 - self.uniform()
        u2 = self.uniform()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)

    def below(self, n):
        """Lemire's unbiased multiply-shift on the top 32 bits of a draw."""
        if n == 0:
            return 0
        m = (self.next() >> 32) * n
        low = m & 0xFFFFFFFF
        if low < n:
            threshold = ((1 << 32) - n) % n
            while low < threshold:
                m = (self.next() >> 32) * n
                low = m & 0xFFFFFFFF
        return m >> 32


def shuffle(rng, items):
    """Fisher–Yates from the end, as the driver and prepare_digits do."""
    for i in range(len(items) - 1, 0, -1):
        j = rng.below(i + 1)
        items[i], items[j] = items[j], items[i]
    return items
