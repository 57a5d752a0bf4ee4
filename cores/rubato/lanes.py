"""Small Z_q building blocks of the Rubato datapath (expressions, no state).

Rubato's moduli are primes just below a power of two (65929217 = 0x3ee0001 < 2^26, 33292289 =
0x1fc0001 < 2^25), and its linear layers multiply by the circulant's small constants
(c_k <= 6, sum c_k <= 25), so a linear-layer word is a shift-and-add sum ``S < (sum c_k) * q``
reduced by a quotient estimate from the bits above ``q_bits`` and a few conditional subtractions.
"""

from __future__ import annotations

from amaranth.hdl import Mux

from hhe_gen.cores.sampler._common import balanced_sum
from hhe_gen.models.modarith import signed_digits

__all__ = ["const_times", "weighted_sum", "sum_bound", "reduce_corrections", "estimate_width",
           "quotient_estimate", "reduce_corrected", "mod_add"]


def const_times(x, c: int):
    """``c * x`` for a small non-negative constant as a sum of shifted copies (shift-and-add)."""
    terms = [x << i for i in range(c.bit_length()) if c >> i & 1]
    if not terms:
        return x * 0
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total


def weighted_sum(taps, coefficients):
    """``sum_k c_k * taps[k]`` as shift-and-add terms (an adder tree)."""
    return balanced_sum(const_times(t, c) for t, c in zip(taps, coefficients) if c)


def sum_bound(coefficients, q: int) -> int:
    """Largest possible weighted sum of canonical residues: ``sum(c) * (q - 1)``."""
    return sum(coefficients) * (q - 1)


def reduce_corrections(bound: int, q: int) -> int:
    """Conditional subtractions :func:`reduce_corrected` needs after a :func:`quotient_estimate`,
    for sums up to ``bound``: with ``h = s >> b`` (b = bitlen q), ``s - h*q = (s mod 2^b) + h*(2^b - q)
    < 2^b + (bound >> b)*(2^b - q)``."""
    b = q.bit_length()
    top = (1 << b) - 1 + (bound >> b) * ((1 << b) - q)
    return top // q


def estimate_width(bound: int, q: int) -> int:
    """Bits of a :func:`quotient_estimate` of a sum up to ``bound`` (and of its corrections)."""
    return max(bound.bit_length(), q.bit_length() + 1)


def quotient_estimate(s, bound: int, q: int):
    """``s - (s >> b)*q`` (b = bitlen q) for ``0 <= s <= bound``: congruent to s, below
    ``(reduce_corrections(bound, q) + 1) * q`` (an expression of :func:`estimate_width` bits).
    Formed as ``(s mod 2^b) + h*(2^b - q)`` with ``h = s >> b`` and the constant's
    :func:`~hhe_gen.models.modarith.signed_digits` (shifts, adds and subtractions, no
    multiplier: three terms for 65929217 = 2^26 - 2^20 - 2^17 + 1, two for 33292289 =
    2^25 - 2^18 + 1)."""
    b = q.bit_length()
    width = estimate_width(bound, q)
    if not bound >> b:
        return s[:width]
    h = s[b:width]
    total = s[:b]
    for sign, shift in signed_digits((1 << b) - q):
        total = total + (h << shift) if sign > 0 else total - (h << shift)
    return total


def reduce_corrected(m, r, bound: int, q: int, name: str = "red"):
    """``r mod q`` for ``r`` a :func:`quotient_estimate` of a sum up to ``bound``: its
    :func:`reduce_corrections` conditional subtractions of q (both arms always computed), each a
    combinational Signal of module ``m`` (named ``name``), so a long chain (small q in the formal
    harnesses) stays linear in size."""
    from amaranth.hdl import Signal

    b = q.bit_length()
    width = estimate_width(bound, q)
    r = r[:width]
    for k in range(reduce_corrections(bound, q)):
        d = (r - q).as_signed()
        nxt = Signal(width, name=f"{name}_r{k + 1}")
        m.d.comb += nxt.eq(Mux(d[-1], r, d.as_unsigned()[:width]))
        r = nxt
    return r[:b]


def mod_add(a, b, q: int):
    """``(a + b) mod q`` for a, b in [0, q): one conditional subtraction."""
    bits = q.bit_length()
    s = a + b
    d = s - q
    return Mux(d.as_signed()[-1], s, d)[:bits]
