#!/usr/bin/env python3
"""Expected failure rate of rngtest's FIPS 140-2 block tests on an ideal source.

rngtest (rng-tools 5, fips.c) judges each 20000-bit block with five tests and
counts a block as failed if any fails. For independent fair bits:

  monobit     fails if ones <= 9725 or ones >= 10275      exact binomial tail
  poker       fails if sum(f_i^2) < 1563176 or > 1576928   chi-square(15) tails
              (f_i: counts of the 16 nibble values among 5000)
  runs        fails if a count of runs of 0s or of 1s of   normal approximation
              length 1..5 or >= 6 leaves its interval      with exact mean and
                                                           variance, per count
  long run    fails on a run of >= 26 equal bits           exact (run-length DP)
  continuous  fails if a 32-bit word equals the previous   625 * 2^-32

Prints each rate and their sum (an upper bound on the union, the tests being
nearly disjoint events). scripts/stat-tests.sh uses the rounded total and checks
it against rngtest's own count on the kernel's /dev/urandom (a separate
generator). Standard library only.
"""
import math

N = 20000


def binomial_tail_fair(n, lo, hi):
    """P(X <= lo or X >= hi) for X ~ Binomial(n, 1/2)."""
    total = sum(math.comb(n, k) for k in range(0, lo + 1))
    total += sum(math.comb(n, k) for k in range(hi, n + 1))
    return total / 2**n


def chi2_cdf(x, dof):
    """Regularized lower incomplete gamma P(dof/2, x/2), by its series."""
    a, z = dof / 2.0, x / 2.0
    term = 1.0 / a
    total = term
    k = 1
    while term > total * 1e-17:
        term *= z / (a + k)
        total += term
        k += 1
    return math.exp(-z + a * math.log(z) - math.lgamma(a)) * total


def poker_rate():
    # X = 16/5000 * sum f^2 - 5000; the integer bounds are the inclusive pass range.
    lo = 16 / 5000 * 1563176 - 5000  # 2.1632
    hi = 16 / 5000 * 1576928 - 5000  # 46.1696
    # sum f^2 moves in steps of 2 (its parity is fixed), i.e. X in steps of 0.0064:
    # the chi-square approximation at this resolution is far finer than needed.
    return chi2_cdf(lo, 15) + (1 - chi2_cdf(hi, 15))


def long_run_rate(n=N, limit=26):
    """P(some run of equal bits has length >= limit) in n fair bits."""
    # state: length of the current run (1..limit-1); probability mass.
    dist = [0.0] * limit
    dist[1] = 1.0  # after the first bit
    for _ in range(n - 1):
        new = [0.0] * limit
        alive = sum(dist)
        new[1] = alive / 2  # the next bit differs
        for r in range(1, limit - 1):
            new[r + 1] = dist[r] / 2  # the next bit repeats
        # dist[limit-1] / 2 reaches length `limit`: absorbed (failure)
        dist = new
    return 1 - sum(dist)


def run_count_moments(n, bit, k, at_least):
    """Mean and variance of the number of runs of `bit` of length exactly k
    (or >= k if at_least) in n fair bits, from the constraints each run puts
    on the bits: indicators of runs starting at s, exact second moments for
    the pairs whose constraints overlap, independence otherwise."""

    def constraints(s):
        c = {}
        if s > 0:
            c[s - 1] = 1 - bit
        for i in range(s, s + k):
            if i >= n:
                return None
            c[i] = bit
        if not at_least and s + k < n:
            c[s + k] = 1 - bit
        return c

    cons = [constraints(s) for s in range(n)]
    prob = [0.0 if c is None else 2.0 ** -len(c) for c in cons]
    mean = sum(prob)
    var = sum(p * (1 - p) for p in prob)
    span = k + 2
    for s in range(n):
        if cons[s] is None:
            continue
        for t in range(s + 1, min(n, s + span + 1)):
            if cons[t] is None:
                continue
            merged = dict(cons[s])
            ok = True
            for pos, val in cons[t].items():
                if merged.setdefault(pos, val) != val:
                    ok = False
                    break
            joint = 2.0 ** -len(merged) if ok else 0.0
            var += 2 * (joint - prob[s] * prob[t])
    return mean, var


def normal_cdf(z):
    return 0.5 * math.erfc(-z / math.sqrt(2))


def runs_rate():
    bounds = [(2315, 2685), (1114, 1386), (527, 723), (240, 384), (103, 209), (103, 209)]
    total = 0.0
    for bit in (0, 1):
        for i, (lo, hi) in enumerate(bounds):
            k = i + 1
            mean, var = run_count_moments(N, bit, k, at_least=(k == 6))
            sd = math.sqrt(var)
            p = normal_cdf((lo - 0.5 - mean) / sd) + 1 - normal_cdf((hi + 0.5 - mean) / sd)
            total += p
    return total


def main():
    rates = {
        "monobit": binomial_tail_fair(N, 9725, 10275),
        "poker": poker_rate(),
        "runs": runs_rate(),
        "long run": long_run_rate(),
        "continuous run": 625 * 2.0**-32,
    }
    for name, rate in rates.items():
        print(f"{name:15} {rate:.3e}")
    print(f"{'any (sum)':15} {sum(rates.values()):.3e}")


if __name__ == "__main__":
    main()
