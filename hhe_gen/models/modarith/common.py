"""Shared helpers of the modular-arithmetic models: argument checks, the non-adjacent form
(:func:`signed_digits`), shift-add evaluation and the constant-time select."""

from __future__ import annotations

from hhe_gen.params.errors import ParameterError


MIN_WIDTH = 16
MAX_WIDTH = 64


def _check_width(width, name: str = "width") -> int:
    if not isinstance(width, int) or isinstance(width, bool) or not MIN_WIDTH <= width <= MAX_WIDTH:
        raise ParameterError(name, width, f"an integer in {MIN_WIDTH} .. {MAX_WIDTH}")
    return width


def _check_modulus(q, width: int) -> int:
    if not isinstance(q, int) or isinstance(q, bool) or q < 3 or q % 2 == 0 or q >= 1 << width:
        raise ParameterError("q", q, f"an odd integer with 3 <= q < 2^{width} (width = {width})")
    return q


def _check_operand(name: str, x, q: int) -> int:
    if not isinstance(x, int) or isinstance(x, bool) or not 0 <= x < q:
        raise ParameterError(name, x, f"an integer with 0 <= {name} < q = {q}")
    return x


def _check_log_n(log_n) -> int:
    if not isinstance(log_n, int) or isinstance(log_n, bool) or not 1 <= log_n <= 17:
        raise ParameterError("log_n", log_n, "an integer in 1 .. 17 (N = 2^log_n)")
    return log_n


def _two_adic_valuation(x: int) -> int:
    """Largest v with 2^v dividing x (x != 0)."""
    return (x & -x).bit_length() - 1


def signed_digits(x: int) -> tuple[tuple[int, int], ...]:
    """Non-adjacent form of the integer ``x``: the signed binary digits of least weight.

    Returns
    -------
    tuple of (sign, shift) pairs, sign in {+1, -1}, shifts increasing, with
    ``sum(s << p for s, p in result) == x``.  No representation of x as a sum of signed powers of
    two has fewer terms, so a shift-add multiplier built from it uses the fewest adders.
    """
    digits = []
    shift = 0
    while x != 0:
        if x & 1:
            d = 2 - (x & 3)          # +1 if x = 1 mod 4, -1 if x = 3 mod 4
            digits.append((d, shift))
            x -= d
        x >>= 1
        shift += 1
    return tuple(digits)


def _shift_add(x: int, terms) -> int:
    """sum(sign * (x << shift)) - what a shift-add constant multiplier computes."""
    return sum(s * (x << p) for s, p in terms)


def _select(borrow: int, when_borrow: int, otherwise: int) -> int:
    """The constant-time multiplexer: both inputs are always computed; borrow (0/1) selects."""
    return when_borrow if borrow else otherwise
