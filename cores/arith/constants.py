"""Validation of RNS modulus sets and the per-prime constant tables of the arithmetic units.

A unit built for ``moduli = (q_0, ..., q_{n-1})`` selects the prime at run time with its ``sel``
input; every per-prime constant (q, mu, q_hi, ...) sits in a small table indexed by ``sel``
(:meth:`hhe_gen.cores.arith.pipeline.Pipe.table`).  The rows come from the golden models'
``constants()`` so hardware and model cannot disagree about them.
"""

from __future__ import annotations

from hhe_gen.params import checks
from hhe_gen.params.checks import check_int
from hhe_gen.params.errors import ParameterError

__all__ = ["MIN_WIDTH", "MAX_WIDTH", "TARGETS", "check_moduli", "check_width", "check_target",
           "check_int", "constant_table", "sel_shape"]

MIN_WIDTH = 16
MAX_WIDTH = 64
TARGETS = ("ecp5", "xilinx", "generic")


def check_width(width, name: str = "width", low: int = MIN_WIDTH, high: int = MAX_WIDTH) -> int:
    if not isinstance(width, int) or isinstance(width, bool) or not low <= width <= high:
        raise ParameterError(name, width, f"an integer in {low} .. {high}")
    return width


def check_target(target) -> str:
    if target not in TARGETS:
        raise ParameterError("target", target, "one of " + ", ".join(repr(t) for t in TARGETS))
    return target


def check_moduli(moduli, width: int | None = None) -> tuple[int, ...]:
    """``moduli`` (an int or an iterable of ints) as a tuple of distinct odd moduli (< 2^width)."""
    return checks.check_moduli(moduli, checks.odd_modulus(width),
                               allowed="an odd modulus or a non-empty list of them")


def sel_shape(moduli) -> range:
    """Shape of the ``sel`` port: ``range(len(moduli))``."""
    return range(len(moduli))


def constant_table(models, key: str) -> list[int]:
    """Column ``key`` of the per-prime table: ``[model.constants()[key] for model in models]``."""
    return [m.constants()[key] for m in models]
