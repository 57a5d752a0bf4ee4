"""Small Z_q building blocks of the Rubato datapath (expressions, no state).

Rubato's moduli are primes just below a power of two (65929217 = 0x3ee0001 < 2^26, 33292289 =
0x1fc0001 < 2^25), and its linear layers multiply by the circulant's small constants
(c_k <= 6, sum c_k <= 25), so a linear-layer word is a shift-and-add sum ``S < (sum c_k) * q``
reduced by a quotient estimate from the bits above ``q_bits`` and a few conditional subtractions.
"""

from __future__ import annotations

from amaranth.hdl import Mux

from hhe_gen.cores.sampler._common import balanced_sum

__all__ = ["const_times", "signed_digits", "weighted_sum", "sum_bound", "reduce_corrections", "estimate_width",
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


def signed_digits(c: int) -> list[tuple[int, int]]:
    """The non-adjacent form of ``c`` >= 0: (shift, +1 or -1) pairs with ``c = sum(d << shift)``,
    no two shifts adjacent (the fewest nonzero signed digits)."""
    digits, i = [], 0
    while c:
        if c & 1:
            d = 2 - (c & 3)          # +1 if c = 1 mod 4, -1 if c = 3 mod 4
            digits.append((i, d))
            c -= d
        c >>= 1
        i += 1
    return digits


def quotient_estimate(s, bound: int, q: int):
    """``s - (s >> b)*q`` (b = bitlen q) for ``0 <= s <= bound``: congruent to s, below
    ``(reduce_corrections(bound, q) + 1) * q`` (an expression of :func:`estimate_width` bits).
    Formed as ``(s mod 2^b) + h*(2^b - q)`` with ``h = s >> b`` and the constant's
    :func:`signed_digits` (shifts, adds and subtractions, no multiplier: three terms for
    65929217 = 2^26 - 2^20 - 2^17 + 1, two for 33292289 = 2^25 - 2^18 + 1)."""
    b = q.bit_length()
    width = estimate_width(bound, q)
    if not bound >> b:
        return s[:width]
    h = s[b:width]
    total = s[:b]
    for shift, d in signed_digits((1 << b) - q):
        total = total + (h << shift) if d > 0 else total - (h << shift)
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
