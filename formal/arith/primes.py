"""The prime sets the arithmetic proofs run over (deterministic: the same call, the same primes).

Widths 36, 44, 54, 61, 64 (the issue's list).  Forms:

* ``ntt``: :func:`hhe_gen.params.ntt_primes` at N = 2^16 (so q = 1 mod 2^17: every such prime also
  serves every smaller N, and word-level Montgomery with any word size w <= 17);
* ``dna-hhe``: every prime of :func:`hhe_gen.params.dna_hhe_primes` (bnd < 2^10) at k = width for
  N = 2^13 and N = 2^16;
* ``abc-fhe``: primes of :func:`hhe_gen.params.abc_fhe_primes` (kk a signed sum of at most
  three powers of two) of bit length ``width`` for N = 2^13 and N = 2^16: there are thousands per
  width (26,000 in all), so the per-prime proofs take 64 evenly spread ones per (width, N); the
  parametric proofs (q symbolic) cover every prime of the form.

``quick=True`` keeps a small, spread-out subset of each (the first and last few; for ABC-FHE taken
from the two-term search, which is much faster than the three-term one), so the quick proof run
stays within seconds; the full run takes every prime the searches return.
"""

from __future__ import annotations

from functools import lru_cache

from hhe_gen.params import abc_fhe_primes, dna_hhe_primes, ntt_primes

__all__ = ["WIDTHS", "LOG_NS", "ntt_set", "dna_set", "abc_set", "QUICK_PER_SET", "ABC_FULL_PER_SET"]

WIDTHS = (36, 44, 54, 61, 64)
LOG_NS = (13, 16)
QUICK_PER_SET = 4
ABC_FULL_PER_SET = 64
NTT_COUNT = 24


def _spread(items: list, quick: bool, full: int | None = None) -> list:
    """All items, or ``count`` of them evenly spread (first and last included)."""
    count = QUICK_PER_SET if quick else full
    if count is None or len(items) <= count:
        return list(items)
    step = (len(items) - 1) / (count - 1)
    return [items[round(i * step)] for i in range(count)]


@lru_cache(maxsize=None)
def _ntt(width: int, count: int) -> tuple:
    return tuple(ntt_primes(1 << 16, width, count))


def ntt_set(width: int, quick: bool = False) -> list[int]:
    """NTT-friendly primes q = 1 (mod 2^17) of exactly ``width`` bits (24, or 4 when quick)."""
    return _spread(list(_ntt(width, NTT_COUNT)), quick)


@lru_cache(maxsize=None)
def _dna(width: int, log_n: int) -> tuple:
    return tuple(dna_hhe_primes(width, 1 << log_n))


def dna_set(width: int, quick: bool = False) -> list:
    """DNA-HHE primes (``SpecialPrime`` objects with q, k, log_n, bnd) at k = width."""
    out = []
    for log_n in (LOG_NS[:1] if quick else LOG_NS):
        out += _spread(list(_dna(width, log_n)), quick)
    return out


@lru_cache(maxsize=None)
def _abc(width: int, log_n: int, terms: int = 3) -> tuple:
    found = {}
    for e in (width - 1, width):
        if 16 <= e <= 63:
            for p in abc_fhe_primes(1 << log_n, e, terms):
                if p.q.bit_length() == width:
                    found[p.q] = p
    return tuple(sorted(found.values(), key=lambda p: p.q))


def abc_set(width: int, quick: bool = False) -> list:
    """ABC-FHE sparse primes (``SparsePrime`` objects with q, exponent, log_n, kk) of bit length
    ``width``."""
    out = []
    for log_n in (LOG_NS[:1] if quick else LOG_NS):
        # the quick subset comes from the (much faster) two-term search: the same form
        out += _spread(list(_abc(width, log_n, 2 if quick else 3)), quick, ABC_FULL_PER_SET)
    return out
