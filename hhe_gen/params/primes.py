"""Prime search for every modulus form the implemented papers use.

Forms
-----
``ntt``            q = 1 (mod 2N): any NTT-friendly prime (Lattigo, RACE, the KV260 design).
``dna-hhe``        q = 2^k - 2N*bnd + 1 with 1 <= bnd < 2^bnd_bits (DNA-HHE eq. 2).  For these primes
                   mu = floor(2^(2k) / q) = 2^k + Delta - 1 (DNA-HHE eq. 3), which turns the two k x k
                   products of Barrett reduction into k x 12 and k x 10 products.
``abc-fhe``        q = 2^e + kk*2N + 1 with kk a signed sum of at most three powers of two (ABC-FHE
                   eq. 8), which makes Montgomery's q^-1 a shift-and-add constant.

All searches are deterministic and exhaustive within their stated order, so the same call always
returns the same primes.
"""

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, product

from .errors import ParameterError

__all__ = [
    "is_prime", "ntt_primes", "prime_factors", "primitive_root", "root_of_unity",
    "SpecialPrime", "dna_hhe_primes", "dna_hhe_mu_claim_holds",
    "SparsePrime", "abc_fhe_primes", "PRIME_FORMS", "check_ntt_prime",
]

PRIME_FORMS = ("ntt", "dna-hhe", "abc-fhe")

# Deterministic Miller-Rabin witnesses: correct for every n < 3.3 * 10^24 (Sorenson & Webster).
_MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)


def is_prime(n: int) -> bool:
    """Deterministic primality test for n < 3.3e24 (covers every modulus up to 64 bits and more)."""
    if n < 2:
        return False
    for p in _MR_BASES:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for a in _MR_BASES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _check_log_n(n: int, name: str = "N") -> int:
    if not isinstance(n, int) or n < 2 or n & (n - 1):
        raise ParameterError(name, n, "a power of two 2^1 .. 2^17")
    log_n = n.bit_length() - 1
    if log_n > 17:
        raise ParameterError(name, n, "a power of two 2^1 .. 2^17")
    return log_n


def _check_bits(bits: int, low: int = 8, high: int = 64) -> None:
    if not isinstance(bits, int) or not low <= bits <= high:
        raise ParameterError("bits", bits, f"an integer bit length in {low} .. {high}")


def check_ntt_prime(q: int, n: int, name: str = "q") -> None:
    """Raise ParameterError unless q is a prime below 2^64 with q = 1 (mod 2N)."""
    _check_log_n(n)
    if not isinstance(q, int) or q < 3 or q >= 1 << 64:
        raise ParameterError(name, q, "a prime 3 .. 2^64 - 1 (moduli are at most 64 bits wide)")
    if q % (2 * n) != 1:
        raise ParameterError(name, q, f"a prime with q = 1 (mod 2N = {2 * n}); q mod 2N is {q % (2 * n)}")
    if not is_prime(q):
        raise ParameterError(name, q, "a prime (this value is composite)")


def ntt_primes(n: int, bits: int, count: int, exclude=()) -> list[int]:
    """The ``count`` largest primes q = 1 (mod 2N) of exactly ``bits`` bits, descending.

    Parameters
    ----------
    n : ring degree N (power of two).
    bits : bit length of every prime (q in [2^(bits-1), 2^bits)).
    count : how many primes.
    exclude : primes to skip (so several calls can build one RNS basis without repeats).
    """
    _check_log_n(n)
    _check_bits(bits)
    if not isinstance(count, int) or count < 1:
        raise ParameterError("count", count, "a positive number of primes")
    step = 2 * n
    q = ((1 << bits) - 1) // step * step + 1
    if q >= 1 << bits:
        q -= step
    found, excluded = [], set(exclude)
    while len(found) < count:
        if q < 1 << (bits - 1):
            raise ParameterError(
                "count", count,
                f"at most {len(found)} primes q = 1 mod {step} have exactly {bits} bits")
        if q not in excluded and is_prime(q):
            found.append(q)
        q -= step
    return found


@lru_cache(maxsize=None)
def prime_factors(m: int) -> tuple[int, ...]:
    """Distinct prime factors of m (Pollard rho with Brent's cycle finding; m < 2^128)."""
    factors, stack = set(), [m]
    while stack:
        x = stack.pop()
        if x == 1:
            continue
        for p in (2, 3, 5, 7, 11, 13):
            if x % p == 0:
                factors.add(p)
                while x % p == 0:
                    x //= p
        if x == 1:
            continue
        if is_prime(x):
            factors.add(x)
            continue
        d = _pollard_brent(x)
        stack += [d, x // d]
    return tuple(sorted(factors))


def _pollard_brent(n: int) -> int:
    from math import gcd
    for c in range(1, 100):
        y, r, q, g = 2, 1, 1, 1
        f = lambda v: (v * v + c) % n  # noqa: E731
        while g == 1:
            x = y
            for _ in range(r):
                y = f(y)
            k = 0
            while k < r and g == 1:
                ys = y
                for _ in range(min(128, r - k)):
                    y = f(y)
                    q = q * abs(x - y) % n
                g = gcd(q, n)
                k += 128
            r *= 2
        if g == n:
            g = 1
            while g == 1:
                ys = f(ys)
                g = gcd(abs(x - ys), n)
        if g != n:
            return g
    raise ArithmeticError(f"could not factor {n}")


def primitive_root(q: int) -> int:
    """The smallest primitive root modulo the prime q (the generator Lattigo v6 picks)."""
    if not is_prime(q):
        raise ParameterError("q", q, "a prime")
    factors = prime_factors(q - 1)
    g = 2
    while any(pow(g, (q - 1) // f, q) == 1 for f in factors):
        g += 1
    return g


def root_of_unity(q: int, order: int) -> int:
    """g^((q-1)/order) for the smallest primitive root g: a primitive ``order``-th root of unity."""
    if (q - 1) % order:
        raise ParameterError("order", order, f"a divisor of q - 1 = {q - 1}")
    return pow(primitive_root(q), (q - 1) // order, q)


@dataclass(frozen=True)
class SpecialPrime:
    """A DNA-HHE prime q = 2^k - 2N*bnd + 1 and its Barrett constant mu = 2^k + delta - 1."""
    q: int
    k: int
    log_n: int
    bnd: int
    delta: int

    @property
    def mu(self) -> int:
        return (1 << self.k) + self.delta - 1


def dna_hhe_primes(k: int, n: int, bnd_bits: int = 10, count: int | None = None) -> list[SpecialPrime]:
    """Every prime q = 2^k - 2N*bnd + 1 with 1 <= bnd < 2^bnd_bits, in increasing bnd.

    ``delta`` is defined by floor(2^(2k)/q) = 2^k + delta - 1 (DNA-HHE eq. 3); it is computed exactly,
    not from the paper's bound, so :func:`dna_hhe_mu_claim_holds` can check the claim.
    """
    log_n = _check_log_n(n)
    _check_bits(k, 16)
    if not isinstance(bnd_bits, int) or not 1 <= bnd_bits <= 16:
        raise ParameterError("bnd_bits", bnd_bits, "1 .. 16")
    out = []
    for bnd in range(1, 1 << bnd_bits):
        q = (1 << k) - 2 * n * bnd + 1
        if q < 1 << (k - 1):
            break
        if is_prime(q):
            mu = (1 << (2 * k)) // q
            out.append(SpecialPrime(q, k, log_n, bnd, mu - (1 << k) + 1))
            if count is not None and len(out) == count:
                break
    return out


def dna_hhe_mu_claim_holds(p: SpecialPrime) -> bool:
    """DNA-HHE eq. 3-5: delta is the unique integer with delta_1 < delta < delta_2, where
    delta_1 = (2N*bnd - 1)*2^k / q and delta_2 = (2N*bnd*(2^k - 1) + 1) / q, and delta_1 + 1 = delta_2.
    Checked with exact rational arithmetic (integers cross-multiplied)."""
    two_n_bnd = (2 << p.log_n) * p.bnd
    k2 = 1 << p.k
    num1, num2 = (two_n_bnd - 1) * k2, two_n_bnd * (k2 - 1) + 1
    ok = p.q * p.delta > num1 and p.q * p.delta < num2 and num1 + p.q == num2
    return ok and (1 << (2 * p.k)) // p.q == p.mu


@dataclass(frozen=True)
class SparsePrime:
    """An ABC-FHE prime q = 2^e + kk*2N + 1 with kk = sum of signed powers of two ``kk_terms``."""
    q: int
    exponent: int
    log_n: int
    kk: int
    kk_terms: tuple[tuple[int, int], ...]   # (sign, power) pairs, sign in {+1, -1}


def _sparse_values(max_power: int, terms: int):
    """Every kk = sum of 1..terms signed distinct powers 2^0..2^max_power, with one representation."""
    seen = {}
    for t in range(1, terms + 1):
        for powers in combinations(range(max_power + 1), t):
            for signs in product((1, -1), repeat=t):
                kk = sum(s << p for s, p in zip(signs, powers))
                if kk not in seen:
                    seen[kk] = tuple(zip(signs, powers))
    return seen


def abc_fhe_primes(n: int, exponent: int, terms: int = 3, count: int | None = None) -> list[SparsePrime]:
    """Primes q = 2^exponent + kk*2N + 1, kk a signed sum of at most ``terms`` powers of two, kk != 0,
    with q of bit length exponent or exponent + 1 and q = 1 (mod 2N); ordered by q, ascending."""
    log_n = _check_log_n(n)
    _check_bits(exponent, 16, 63)
    if not isinstance(terms, int) or not 1 <= terms <= 4:
        raise ParameterError("terms", terms, "1 .. 4 signed powers of two")
    max_power = exponent - log_n - 1
    out = []
    for kk, rep in _sparse_values(max_power, terms).items():
        q = (1 << exponent) + kk * 2 * n + 1
        if (1 << (exponent - 1)) < q < 1 << (exponent + 1) and q < 1 << 64 and is_prime(q):
            out.append(SparsePrime(q, exponent, log_n, kk, rep))
    out.sort(key=lambda p: p.q)
    return out if count is None else out[:count]
