"""Negacyclic NTT and INTT over Z_q[X]/(X^N + 1) in Lattigo v6's convention (docs/conventions.md).

- psi = g^((q-1)/2N) with g the smallest primitive root mod q (the one Lattigo picks).
- Forward: natural-order input, bit-reversed output, NTT(a)[j] = a(psi^(2*brv(j) + 1)) mod q.
  Computed with merged pre-processing: Cooley-Tukey butterflies (U, V) -> (U + W*V, U - W*V) with
  W = psi^brv(m + i) at stage m (m = 1, 2, 4, ..., N/2), butterfly i of the stage.
- Inverse: bit-reversed input, natural-order output, Gentleman-Sande butterflies
  (U, V) -> (U + V, (U - V)*W^-1) with W^-1 = psi^-brv(h + i), and N^-1 folded into the last stage
  (the final stage multiplies the sum by N^-1 and the difference by psi^-brv(1) * N^-1), so no
  separate scaling pass exists.

This is the order of operations the hardware (cores/ntt) follows; every butterfly's operands and
results are exposed by :func:`ntt_stages` for step-by-step comparison.
"""

from dataclasses import dataclass
from functools import lru_cache

from ..params.errors import ParameterError
from ..params.primes import check_ntt_prime, root_of_unity

__all__ = ["bit_reverse", "NttTables", "ntt_tables", "ntt", "intt", "ntt_stages",
           "negacyclic_multiply", "evaluate_at"]


def bit_reverse(x: int, bits: int) -> int:
    """x with its low ``bits`` bits in reverse order."""
    return int(format(x, f"0{bits}b")[::-1], 2) if bits else 0


@dataclass(frozen=True)
class NttTables:
    """Per-prime constants of the NTT: the rows of the hardware's twiddle ROM.

    Members
    -------
    n, q : ring degree and prime.
    psi : the primitive 2N-th root of unity Lattigo uses.
    psi_brv : psi^brv(i) for i = 0 .. N-1 (forward twiddles, index m + i at stage m).
    psi_inv_brv : psi^-brv(i) for i = 0 .. N-1 (inverse twiddles).
    n_inv : N^-1 mod q.
    last_inv : psi^-brv(1) * N^-1 mod q (the last inverse stage's merged twiddle).
    """
    n: int
    q: int
    psi: int
    psi_brv: tuple[int, ...]
    psi_inv_brv: tuple[int, ...]
    n_inv: int
    last_inv: int


@lru_cache(maxsize=64)
def ntt_tables(n: int, q: int) -> NttTables:
    """Build (and cache) the tables for ring degree ``n`` and prime ``q``."""
    check_ntt_prime(q, n)
    log_n = n.bit_length() - 1
    psi = root_of_unity(q, 2 * n)
    psi_inv = pow(psi, -1, q)
    pw, pw_inv = [1] * n, [1] * n
    for i in range(1, n):
        pw[i] = pw[i - 1] * psi % q
        pw_inv[i] = pw_inv[i - 1] * psi_inv % q
    brv = [bit_reverse(i, log_n) for i in range(n)]
    n_inv = pow(n, -1, q)
    psi_inv_brv = tuple(pw_inv[b] for b in brv)
    return NttTables(n, q, psi, tuple(pw[b] for b in brv), psi_inv_brv, n_inv,
                     psi_inv_brv[1] * n_inv % q)


def _check_poly(a, n: int, q: int, name: str) -> list[int]:
    a = list(a)
    if len(a) != n:
        raise ParameterError(name, f"<{len(a)} coefficients>", f"exactly N = {n} coefficients")
    for i, x in enumerate(a):
        if not 0 <= x < q:
            raise ParameterError(f"{name}[{i}]", x, f"a residue 0 .. q-1 = {q - 1}")
    return a


def ntt(a, q: int) -> list[int]:
    """Forward negacyclic NTT (natural order in, bit-reversed order out)."""
    n = len(a)
    t = ntt_tables(n, q)
    a = _check_poly(a, n, q, "a")
    half, m = n, 1
    while m < n:
        half //= 2
        for i in range(m):
            w = t.psi_brv[m + i]
            base = 2 * i * half
            for j in range(base, base + half):
                u, v = a[j], a[j + half] * w % q
                a[j], a[j + half] = (u + v) % q, (u - v) % q
        m *= 2
    return a


def intt(a, q: int) -> list[int]:
    """Inverse negacyclic NTT (bit-reversed order in, natural order out), N^-1 folded in."""
    n = len(a)
    t = ntt_tables(n, q)
    a = _check_poly(a, n, q, "a")
    span, m = 1, n
    while m > 1:
        h = m // 2
        last = h == 1
        for i in range(h):
            w = t.last_inv if last else t.psi_inv_brv[h + i]
            base = 2 * i * span
            for j in range(base, base + span):
                u, v = a[j], a[j + span]
                s = (u + v) % q
                a[j] = s * t.n_inv % q if last else s
                a[j + span] = (u - v) * w % q
        span *= 2
        m = h
    return a


def ntt_stages(a, q: int, inverse: bool = False):
    """Yield, stage by stage, the list of butterflies ``(j, k, w, in_j, in_k, out_j, out_k)``.

    The hardware's schedule is checked against this (which pairs meet at which stage with which
    twiddle); the final outputs equal :func:`ntt` / :func:`intt`.
    """
    n = len(a)
    t = ntt_tables(n, q)
    a = _check_poly(a, n, q, "a")
    log_n = n.bit_length() - 1
    for s in range(log_n):
        stage = []
        if not inverse:
            m, half = 1 << s, n >> (s + 1)
            for i in range(m):
                w = t.psi_brv[m + i]
                for j in range(2 * i * half, 2 * i * half + half):
                    u, v = a[j], a[j + half]
                    wv = v * w % q
                    a[j], a[j + half] = (u + wv) % q, (u - wv) % q
                    stage.append((j, j + half, w, u, v, a[j], a[j + half]))
        else:
            h, span = n >> (s + 1), 1 << s
            last = h == 1
            for i in range(h):
                w = t.last_inv if last else t.psi_inv_brv[h + i]
                for j in range(2 * i * span, 2 * i * span + span):
                    u, v = a[j], a[j + span]
                    sm = (u + v) % q
                    a[j] = sm * t.n_inv % q if last else sm
                    a[j + span] = (u - v) * w % q
                    stage.append((j, j + span, w, u, v, a[j], a[j + span]))
        yield stage


def negacyclic_multiply(a, b, q: int) -> list[int]:
    """a * b mod (X^N + 1, q) through the NTT."""
    fa, fb = ntt(a, q), ntt(b, q)
    return intt([x * y % q for x, y in zip(fa, fb)], q)


def evaluate_at(a, x: int, q: int) -> int:
    """a(x) mod q by Horner's rule (a naive reference for tests)."""
    acc = 0
    for c in reversed(list(a)):
        acc = (acc * x + c) % q
    return acc
