"""Constant-time modular addition, subtraction and negation (golden models with traces)."""

from __future__ import annotations

from .common import _check_operand, _select


def mod_add_trace(a: int, b: int, q: int) -> dict[str, int]:
    """Constant-time modular addition, step by step.

    Algorithm (a, b in [0, q)):
      1. ``sum = a + b``            in [0, 2q - 2], one bit wider than q
      2. ``diff = sum - q``         in [-q, q - 2]; its sign bit is ``borrow``
      3. ``result = sum if borrow else diff``   in [0, q)
    Both candidates are always computed and one is selected on the borrow bit, so timing and
    power do not depend on the data.  The final single correction is enough because sum < 2q.

    Returns
    -------
    dict with keys, in pipeline order: ``sum``, ``diff`` (signed), ``borrow`` (0/1), ``result``.
    """
    _check_operand("a", a, q)
    _check_operand("b", b, q)
    s = a + b
    d = s - q
    borrow = int(d < 0)
    return {"sum": s, "diff": d, "borrow": borrow, "result": _select(borrow, s, d)}


def mod_sub_trace(a: int, b: int, q: int) -> dict[str, int]:
    """Constant-time modular subtraction, step by step.

    Algorithm (a, b in [0, q)):
      1. ``diff = a - b``           in [-(q-1), q-1]; its sign bit is ``borrow``
      2. ``alt = diff + q``         in [1, 2q - 1]
      3. ``result = alt if borrow else diff``   in [0, q)

    Returns
    -------
    dict with keys, in pipeline order: ``diff`` (signed), ``borrow`` (0/1), ``alt``, ``result``.
    """
    _check_operand("a", a, q)
    _check_operand("b", b, q)
    d = a - b
    borrow = int(d < 0)
    alt = d + q
    return {"diff": d, "borrow": borrow, "alt": alt, "result": _select(borrow, alt, d)}


def mod_add(a: int, b: int, q: int) -> int:
    """(a + b) mod q for a, b in [0, q), constant-time formulation (see :func:`mod_add_trace`)."""
    return mod_add_trace(a, b, q)["result"]


def mod_sub(a: int, b: int, q: int) -> int:
    """(a - b) mod q for a, b in [0, q), constant-time formulation (see :func:`mod_sub_trace`)."""
    return mod_sub_trace(a, b, q)["result"]


def mod_neg(a: int, q: int) -> int:
    """(-a) mod q for a in [0, q): the subtractor with a = 0 (so -0 = 0, never q)."""
    return mod_sub(0, a, q)
