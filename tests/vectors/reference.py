#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""An independent reference for the golden vectors (tests/vectors/noise.json): every sampler of
the SDK written again, in Python, from its definition (sdk/include/dpm/expert/noise.h and the header
comments of sdk/src/noise/*.c), fed the same byte stream, so that a vector records what the
definition gives and not what the C code happened to do.

  reference.py --write [FILE]   compute every case of CASES and write the vector file
  reference.py --check [FILE]   recompute every case of FILE and compare (TAP; exit 1 on a miss)

Independence. Probabilities are exact rationals (fractions.Fraction) and the lazy comparisons
read U's binary digits one at a time against them; nothing is copied from the C fast paths
(lookup tables, lanes, 256-bit arithmetic, the certified soft-float exp). Where the SDK has a
fast path and a sequential definition (the Laplace mechanism, sdk/src/noise/laplace.c), this
follows the sequential definition. Where the SDK's parameters come from a certified bound of
exp (GRR/RR thresholds, the fixed-draw Laplace digits), this computes exp to 80 digits
(decimal) and checks that every integer the SDK may derive from ANY bound within its stated
error (2^-62 relative) is the same; if a case sat that close to a rounding boundary it would
stop with an error instead of guessing.

The random source (noise.h, "The stream"): the port's bytes, DPM_RAND_BUF_BYTES = 256 at a
time, read as one bit string, low bit of each byte first. Draws take the next n bits from the
front; the Laplace mechanism's V bytes come from the back (the unread byte just before the
end). A draw that needs more bits than are unread (or a reserve of 128 bits at the start of a
Laplace draw) appends the next 256 bytes after the unread middle. The port is
tests/support/test_rng.c: xoshiro256** seeded by splitmix64, 64-bit words little-endian."""
import json
import math
import os
import sys
from decimal import Decimal, getcontext
from fractions import Fraction

getcontext().prec = 80
M64 = (1 << 64) - 1
BUF_BYTES = 256  # DPM_RAND_BUF_BYTES, the default build
PRODUCER = "tests/vectors/reference.py (Python, from the definitions)"


# ---- the byte stream ------------------------------------------------------------------------

class TestRng:
    """xoshiro256** seeded through splitmix64 (tests/support/test_rng.c)."""

    def __init__(self, seed):
        self.s = []
        x = seed
        for _ in range(4):
            x = (x + 0x9E3779B97F4A7C15) & M64
            z = x
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
            self.s.append(z ^ (z >> 31))

    def next(self):
        s = self.s
        rotl = lambda v, k: ((v << k) | (v >> (64 - k))) & M64
        result = (rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def fill(self, n):
        out = b""
        while len(out) < n:
            out += self.next().to_bytes(8, "little")
        return out[:n]


class Stream:
    """The unread bits as an integer: bit 0 is the next front bit, bit n-1 the last one."""

    def __init__(self, rng):
        self.rng = rng
        self.bits = 0
        self.n = 0

    def reserve(self, k):
        if self.n < k:
            self.bits |= int.from_bytes(self.rng.fill(BUF_BYTES), "little") << self.n
            self.n += 8 * BUF_BYTES

    def take(self, k):
        self.reserve(k)
        v = self.bits & ((1 << k) - 1)
        self.bits >>= k
        self.n -= k
        return v

    def take_back_byte(self):
        self.reserve(8)
        self.n -= 8
        b = self.bits >> self.n
        self.bits &= (1 << self.n) - 1
        return b


# ---- exact Bernoulli trials (CKS 2020) -----------------------------------------------------

def bern_lazy(s, p):
    """U < p for p in (0, 1): U's bits, one at a time, against p's binary expansion; the first
    difference decides; an expansion that ends (p dyadic) with U equal so far means U >= p."""
    x = Fraction(p)
    assert 0 < x < 1
    while True:
        x *= 2
        p_bit = 1 if x >= 1 else 0
        x -= p_bit
        if s.take(1) != p_bit:
            return p_bit
        if x == 0:
            return 0


def below_by_byte(s, u, x):
    """U < x (0 <= x < 1) when U's first byte u is already read: u / 256 >= x decides no, a
    remaining gap 256 x - u >= 1 decides yes, else the rest of U against the gap."""
    gap = 256 * Fraction(x) - u
    if gap <= 0:
        return 0
    if gap >= 1:
        return 1
    return bern_lazy(s, gap)


def bernoulli(s, num, den):
    if num == 0 or num == den:
        return 1 if num else 0
    return bern_lazy(s, Fraction(num, den))


def bern_recip(s, k):
    """Bernoulli(1/k), k >= 2: with 2^z <= k < 2^(z+1), U < 1/k iff U's first z bits (drawn at
    once) are zero and the rest of U is below 2^z / k."""
    z = k.bit_length() - 1
    if s.take(z) != 0:
        return 0
    if k == 1 << z:
        return 1
    return bern_lazy(s, Fraction(1 << z, k))


def bexp_from(s, gamma, k):
    """CKS Algorithm 1 for Bernoulli(exp(-gamma)), gamma in (0, 1], from trial k (the earlier
    trials succeeded): trial j succeeds with probability gamma / j, drawn as Bernoulli(1/j)
    (skipped for j = 1) and then Bernoulli(gamma) (skipped for gamma = 1); the result is 1
    iff the first failing trial has an odd index."""
    while True:
        ok = 1 if k == 1 else bern_recip(s, k)
        if ok and gamma != 1:
            ok = bern_lazy(s, gamma)
        if not ok:
            return k & 1
        k += 1


def bexp1_from_byte(s, b):
    """Bernoulli(exp(-1)) whose trials share one uniform W: K > k iff W < 1/k!; W = (b + f) /
    256 with b the byte read, f never drawn: "f < c" is a fresh Bernoulli(c). Past 1/5! the
    trials go on one by one from k = 6. Result: K odd."""
    for k in range(2, 6):
        c = Fraction(256, math.factorial(k))  # W < 1/k!  iff  b + f < c
        if b + 1 <= c:
            continue  # below, whatever f is
        if b >= c:
            return k & 1  # above: K = k
        if bern_lazy(s, c - b):
            continue  # f < c - b: below
        return k & 1
    return bexp_from(s, Fraction(1), 6)


def bexp_one(s):
    return bexp1_from_byte(s, s.take(8))


def bexp_unit(s, gamma):
    """Bernoulli(exp(-gamma)) for gamma in [0, 1]."""
    if gamma == 0:
        return 1
    if gamma == 1:
        return bexp_one(s)
    return bexp_from(s, gamma, 1)


def bernoulli_exp(s, num, den):
    """exp(-num/den) = exp(-1)^floor * exp(-frac): one factor at a time, stop at a failure."""
    b = 1
    for _ in range(num // den):
        b = bexp_unit(s, Fraction(1))
        if not b:
            return 0
    return bexp_unit(s, Fraction(num % den, den))


def uniform(s, n):
    """Rejection on the smallest covering power of two."""
    if n == 1:
        return 0
    k = (n - 1).bit_length()
    while True:
        v = s.take(k)
        if v < n:
            return v


def geometric_exp1(s, from_back):
    """Successes of Bernoulli(exp(-1)) before the first failure, each trial's byte from the
    front or from the back of the stream (its extra bits always from the front)."""
    v = 0
    while True:
        b = s.take_back_byte() if from_back else s.take(8)
        if not bexp1_from_byte(s, b):
            return v
        v += 1


def dlap(s, num, den):
    """CKS Algorithm 2 with scale t = num / den (reduced): U uniform in [0, t) kept with
    probability exp(-U/t), V geometric, Y = floor((U + t V) / s), a fair sign, "-0" refused."""
    g = math.gcd(num, den)
    t, d = num // g, den // g
    while True:
        u = uniform(s, t)
        if not bexp_unit(s, Fraction(u, t)):
            continue
        v = geometric_exp1(s, False)
        sign = s.take(1)
        y = (u + t * v) // d
        if y == 0 and sign:
            continue
        return -y if sign else y


def dgauss(s, sigma2):
    """CKS Algorithm 3 with integer sigma2: t = floor(sqrt(sigma2)) + 1, Y = dlap(t), kept with
    probability exp(-(|Y| - sigma2 / t)^2 / (2 sigma2)) (whole part one Bernoulli(exp(-1))
    at a time, then the fraction, as bernoulli_exp)."""
    t = math.isqrt(sigma2) + 1
    while True:
        y = dlap(s, t, 1)
        gamma = (Fraction(abs(y)) - Fraction(sigma2, t)) ** 2 / (2 * sigma2)
        if bernoulli_exp(s, gamma.numerator, gamma.denominator):
            return y


# ---- the Laplace mechanism: the sequential definition of sdk/src/noise/laplace.c ------------

def laplace_add(s, sensitivity, eps, value):
    num, den = sensitivity << 16, eps
    g = math.gcd(num, den)
    num, den = num // g, den // g
    n = (num - 1).bit_length()
    K = n - 4 if n > 4 else 0
    M = n - K
    mA = -(-num // (1 << K))
    while True:
        s.reserve(128)  # step 0
        low, accept = 0, 1  # step 1: L and its test
        if K > 0:
            lu = s.take(K + 8)
            low, u = lu & ((1 << K) - 1), lu >> K
            gamma = Fraction(low, num)
            if below_by_byte(s, u, gamma):  # trial 1 succeeded
                if below_by_byte(s, s.take(8), gamma / 2):  # trial 2 succeeded
                    accept = bexp_from(s, gamma, 3)
                else:
                    accept = 0  # K = 2
            # trial 1 failed: K = 1, accept
        if not accept:
            continue
        sign = s.take(1)  # step 2
        a = 0  # step 3
        if mA > 1:
            while True:
                a = s.take(M)
                if a >= mA:
                    s.take(8)  # the place of its W byte
                    continue
                if step_a(s, Fraction(a << K, num)):
                    break
        v = geometric_exp1(s, True)  # step 4: V bytes from the back
        U = low + (a << K)
        if U >= num:  # step 5
            continue
        y = (U + num * v) // den  # step 6
        if y == 0 and sign:
            continue
        return value - y if sign else value + y


def step_a(s, gamma):
    """CKS Algorithm 1 for gamma < 1 with all trials sharing one uniform W: K > k iff W < T_k =
    gamma^k / k!. W is read as a byte, a second byte, then bit by bit, until its prefix
    [P, P + 2^-n) places it below or above the thresholds as far as K needs; W < T_4 goes on
    trial by trial from k = 5. Accept iff K is odd."""
    T = [gamma ** k / math.factorial(k) for k in range(1, 5)]
    P, nbits = s.take(8), 8
    while True:
        lo, hi = Fraction(P, 1 << nbits), Fraction(P + 1, 1 << nbits)
        status = ["below" if hi <= t else "above" if lo >= t else None for t in T]
        below = 0
        while below < 4 and status[below] == "below":
            below += 1
        if below == 4:
            return bexp_from(s, gamma, 5)
        if status[below] == "above":
            return (below + 1) & 1
        if nbits == 8:
            P, nbits = (P << 8) | s.take(8), 16
        else:
            P, nbits = (P << 1) | s.take(1), nbits + 1


# ---- parameters that come from certified bounds of exp --------------------------------------

REL = Decimal(2) ** -60  # generous: the SDK's bounds are within 2^-62 relative


def exp_q16(q):
    return (Decimal(q) / 65536).exp()


def determined(lo, hi, what):
    """The one integer every value in [lo, hi] maps to, or stop: the SDK's bound might fall on
    either side of a rounding boundary."""
    if lo != hi:
        sys.exit(f"reference: {what} is within the SDK's rounding error of a boundary "
                 f"({lo} vs {hi}): choose another case")
    return lo


def grr_params(k, eps):
    """other = ceil(2^32 / (L + k - 1)) for a certified lower bound L <= e^eps (noise.h)."""
    d = exp_q16(eps) + (k - 1)
    q = Decimal(2 ** 32) / d
    other = determined(math.ceil(q), math.ceil(q / (1 - REL)), f"GRR other (k={k}, eps={eps})")
    keep = 2 ** 32 - (k - 1) * other
    assert keep > other >= 2
    return keep, other


def grr(s, k, keep, other, x):
    """One 32-bit uniform u: u < keep reports x, else (x + 1 + (u - keep) / other) mod k."""
    u = s.take(32)
    return x if u < keep else (x + 1 + (u - keep) // other) % k


def laplace_fixed_params(sensitivity, eps):
    """Digit j of each geometric is Bernoulli(q_j), q_j = 1 / (1 + exp(2^j / t)), t =
    sensitivity 2^16 / eps; nbits is the smallest n >= 1 with delta_tv = 2 (sum_{j<n} err_j +
    tail_n) <= 2^-48 (units of 2^-64), tail_n >= 2^65 exp(-2^n / t), err_j the SDK's few units
    of rounding per threshold. Returns (nbits, [2^64 q_j as exact Decimals])."""
    t = Decimal(sensitivity * 65536) / Decimal(eps)
    qs = []
    for n in range(0, 49):
        x = Decimal(2 ** n) / t
        tail = Decimal(2 ** 65) * (-x).exp() if x < 200 else Decimal(0)
        lo = 2 * tail  # no rounding error at all
        hi = 2 * (8 * n + tail + 2)  # every err_j and the tail's rounding at their largest
        done_lo, done_hi = lo <= 2 ** 16, hi <= 2 ** 16
        if n >= 1 and (done_lo or done_hi):
            determined(done_lo, done_hi, f"fixed Laplace nbits (s={sensitivity}, eps={eps})")
            return n, qs
        qs.append(Decimal(2 ** 64) / (1 + x.exp()) if x < 200 else Decimal(0))
    sys.exit("reference: fixed Laplace needs more than 48 digits")


def laplace_fixed_add(s, nbits, thresholds, value):
    """Z = G1 - G2, each geometric from nbits digits, digit j = (64-bit uniform < 2^64 q_j)."""
    def geometric():
        g = 0
        for j in range(nbits):
            u = s.take(64)
            t = thresholds[j]
            # the SDK's threshold is within a few units of t: the digit must not depend on it
            determined(Decimal(u) < t - 64, Decimal(u) < t + 64, f"fixed Laplace digit {j}")
            g |= (1 if Decimal(u) < t else 0) << j
        return g
    g1 = geometric()
    return value + g1 - geometric()


# ---- the cases ---------------------------------------------------------------------------------

CASES = [
    ("uniform.n1", "uniform", 1, {"n": 1}),
    ("uniform.n10", "uniform", 2, {"n": 10}),
    ("uniform.n2^40+3", "uniform", 3, {"n": 1099511627779}),
    ("bernoulli.1/3", "bernoulli", 4, {"num": 1, "den": 3}),
    ("bernoulli.999/1000", "bernoulli", 5, {"num": 999, "den": 1000}),
    ("bernoulli_exp.1/10", "bernoulli_exp", 6, {"num": 1, "den": 10}),
    ("bernoulli_exp.5/2", "bernoulli_exp", 7, {"num": 5, "den": 2}),
    ("dlap.t1/2", "dlap", 8, {"num": 1, "den": 2}),
    ("dlap.t1", "dlap", 9, {"num": 1, "den": 1}),
    ("dlap.t10", "dlap", 10, {"num": 10, "den": 1}),
    ("dlap.t1000", "dlap", 11, {"num": 1000, "den": 1}),
    ("dlap.t2^33/6553", "dlap", 12, {"num": 8589934592, "den": 6553}),
    ("laplace.s2^17.eps1", "laplace", 13, {"sensitivity": 131072, "eps": 65536, "value": 1000}),
    ("laplace.s2^17.eps0.1", "laplace", 14, {"sensitivity": 131072, "eps": 6553, "value": -5}),
    ("laplace_fixed.s2^17.eps1", "laplace_fixed", 15,
     {"sensitivity": 131072, "eps": 65536, "value": 7}),
    ("laplace_fixed.s1.eps10", "laplace_fixed", 16, {"sensitivity": 1, "eps": 655360, "value": 0}),
    ("grr.k2.eps1", "grr", 17, {"k": 2, "eps": 65536, "x": 1}),
    ("grr.k4.eps0.1", "grr", 18, {"k": 4, "eps": 6553, "x": 3}),
    ("grr.k64.eps1", "grr", 19, {"k": 64, "eps": 65536, "x": 17}),
    ("grr.k256.eps5", "grr", 20, {"k": 256, "eps": 327680, "x": 0}),
    ("rr.eps1", "rr", 21, {"eps": 65536, "x": 1}),
    ("rr.eps10", "rr", 22, {"eps": 655360, "x": 0}),
    # longer runs, so the rare branches of the definitions occur too (bytes 0, 1, 2, 10, 42 of
    # Bernoulli(exp(-1)), K >= 5, a second W byte and W bits, A >= mA, refills mid-draw)
    ("dlap.t3/7.long", "dlap", 23, {"num": 3, "den": 7}, 1024),
    ("laplace.s3.eps0.7.long", "laplace", 24, {"sensitivity": 3, "eps": 45875, "value": 0},
     1024),
    ("laplace.s2^17.eps1.long", "laplace", 25,
     {"sensitivity": 131072, "eps": 65536, "value": 0}, 1024),
    ("laplace_fixed.s3.eps0.7.long", "laplace_fixed", 26,
     {"sensitivity": 3, "eps": 45875, "value": -2}, 1024),
    ("grr.k17.eps2.long", "grr", 27, {"k": 17, "eps": 131072, "x": 16}, 1024),
    ("dgauss.s1", "dgauss", 28, {"sigma2": 1}),
    ("dgauss.s3", "dgauss", 29, {"sigma2": 3}),
    ("dgauss.s10000", "dgauss", 30, {"sigma2": 10000}),
    ("dgauss.s2^30", "dgauss", 31, {"sigma2": 1073741824}),
    ("dgauss.s2.long", "dgauss", 32, {"sigma2": 2}, 1024),
]
OUTPUTS = 64


def run_case(sampler, seed, p, outputs=OUTPUTS):
    s = Stream(TestRng(seed))
    if sampler == "uniform":
        return [uniform(s, p["n"]) for _ in range(outputs)]
    if sampler == "bernoulli":
        return [bernoulli(s, p["num"], p["den"]) for _ in range(outputs)]
    if sampler == "bernoulli_exp":
        return [bernoulli_exp(s, p["num"], p["den"]) for _ in range(outputs)]
    if sampler == "dlap":
        return [dlap(s, p["num"], p["den"]) for _ in range(outputs)]
    if sampler == "laplace":
        return [laplace_add(s, p["sensitivity"], p["eps"], p["value"]) for _ in range(outputs)]
    if sampler == "laplace_fixed":
        nbits, th = laplace_fixed_params(p["sensitivity"], p["eps"])
        return [laplace_fixed_add(s, nbits, th, p["value"]) for _ in range(outputs)]
    if sampler == "dgauss":
        return [dgauss(s, p["sigma2"]) for _ in range(outputs)]
    if sampler in ("grr", "rr"):
        k = p.get("k", 2)
        keep, other = grr_params(k, p["eps"])
        return [grr(s, k, keep, other, p["x"]) for _ in range(outputs)]
    raise ValueError(f"unknown sampler {sampler}")


DEFAULT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "noise.json")


def write(path):
    with open(path, "w") as f:
        f.write(" {\n".replace(" {", "{"))
        f.write(f' "about": "first outputs of each sampler, computed by {PRODUCER} '
                "from the random bytes of tests/support/test_rng (xoshiro256** seeded by "
                "splitmix64, little-endian), DPM_RAND_BUF_BYTES = 256; checked against the "
                'C SDK by test_vectors; regenerate with tests/vectors/reference.py --write",\n')
        f.write(f' "producer": "{PRODUCER}",\n "cases": [\n')
        for i, (name, sampler, seed, params, *count) in enumerate(CASES):
            ps = ", ".join(f'"{k}": {v}' for k, v in params.items())
            out = ", ".join(str(v) for v in run_case(sampler, seed, params, *count))
            f.write(f'  {{"name": "{name}", "sampler": "{sampler}", "seed": {seed}, '
                    f'"params": {{{ps}}}, "producer": "python",\n   "outputs": [{out}]}}'
                    f'{"," if i + 1 < len(CASES) else ""}\n')
        f.write(" ]\n}\n")


def check(path):
    with open(path) as f:
        data = json.load(f)
    n = failed = 0
    for c in data["cases"]:
        n += 1
        got = run_case(c["sampler"], c["seed"], c["params"], len(c["outputs"]))
        ok = got == c["outputs"] and c.get("producer") == "python"
        failed += not ok
        print(f"{'ok' if ok else 'not ok'} {n} - {c['name']}: the Python reference gives the "
              f"file's {len(got)} outputs")
        if not ok:
            bad = next((i for i, (a, b) in enumerate(zip(got, c["outputs"])) if a != b), None)
            print(f"# producer {c.get('producer')!r}; first difference at output {bad}: "
                  f"reference {got[bad] if bad is not None else '-'}, file "
                  f"{c['outputs'][bad] if bad is not None else '-'}")
    return n, failed


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--write":
        write(sys.argv[2] if len(sys.argv) > 2 else DEFAULT)
    elif len(sys.argv) >= 2 and sys.argv[1] == "--check":
        total, bad = check(sys.argv[2] if len(sys.argv) > 2 else DEFAULT)
        print(f"1..{total}")
        sys.exit(1 if bad else 0)
    else:
        sys.exit(__doc__)
