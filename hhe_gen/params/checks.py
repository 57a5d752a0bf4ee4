"""The parameter checks every layer uses: each returns the checked value or raises
:class:`~hhe_gen.params.errors.ParameterError` naming the parameter, the value and what is allowed.

One argument order everywhere: ``check_x(name, value, ...)``, like ``ParameterError(name, value,
allowed)``.  Modulus lists differ between cores only in the rule a single modulus must satisfy
(odd and below 2^w for a reducer, NTT-friendly for a transform, above the noise bound for a
sampler), so :func:`check_moduli` takes that rule as a function.
"""

from __future__ import annotations

from typing import Callable

from .errors import ParameterError

__all__ = ["is_int", "check_int", "check_power_of_two", "check_lanes", "check_divisor",
           "check_moduli", "odd_modulus", "modulus_above", "ntt_prime"]


def is_int(value) -> bool:
    """An ``int`` that is not a ``bool``."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_int(name: str, value, low: int, high: int | None = None, what: str | None = None) -> int:
    """An integer in ``low .. high`` (``high`` None: no upper limit)."""
    if not is_int(value) or value < low or (high is not None and value > high):
        span = f"{low} .. {high}" if high is not None else f">= {low}"
        raise ParameterError(name, value, what or f"an integer {span}")
    return value


def check_power_of_two(name: str, value, low: int, high: int, what: str | None = None) -> int:
    """A power of two in ``low .. high``."""
    if not is_int(value) or value < low or value > high or value & (value - 1):
        raise ParameterError(name, value, what or f"a power of two {low} .. {high}")
    return value


def check_lanes(lanes, high: int, *, of: str, name: str = "lanes") -> int:
    """Butterfly lanes: a power of two ``1 .. high``; ``of`` says where ``high`` comes from
    (e.g. ``"N/2 = 4096"``)."""
    return check_power_of_two(name, lanes, 1, max(high, 1), f"a power of two 1 .. {of}")


def check_divisor(name: str, value, n: int, of: str) -> int:
    """A divisor of ``n`` (``of`` names n, e.g. ``"n = 16"``)."""
    allowed = [d for d in range(1, n + 1) if n % d == 0]
    if not is_int(value) or value not in allowed:
        raise ParameterError(name, value, f"a divisor of {of}: {allowed}")
    return value


def check_moduli(moduli, each: Callable[[str, int], None], *, name: str = "moduli",
                 allowed: str = "a modulus or a non-empty list of moduli", single: bool = True,
                 distinct: bool = True) -> tuple[int, ...]:
    """A non-empty tuple of moduli, each accepted by ``each(name_i, q)`` (which raises).

    Parameters
    ----------
    moduli : int or iterable of int
    each : callable    the rule of one modulus (:func:`odd_modulus`, :func:`modulus_above`,
                       :func:`ntt_prime`)
    name : str         the parameter's name; element i is reported as ``name[i]``
    allowed : str      what the whole parameter may be, for the error message
    single : bool      a single int is accepted as a one-element list
    distinct : bool    the moduli must differ
    """
    if is_int(moduli) and single:
        moduli = (moduli,)
    if is_int(moduli) or isinstance(moduli, (str, bytes)) or not hasattr(moduli, "__iter__"):
        raise ParameterError(name, moduli, allowed)
    qs = tuple(moduli)
    if not qs:
        raise ParameterError(name, moduli, allowed)
    for i, q in enumerate(qs):
        if not is_int(q):
            raise ParameterError(f"{name}[{i}]", q, "an integer modulus")
        each(f"{name}[{i}]", q)
    if distinct and len(set(qs)) != len(qs):
        raise ParameterError(name, qs, "distinct moduli (a modulus is repeated)")
    return qs


def odd_modulus(width: int | None = None) -> Callable[[str, int], None]:
    """The rule of a reducer's modulus: odd, >= 3 and (with ``width``) below 2^width."""
    def rule(name: str, q: int) -> None:
        if q < 3 or q % 2 == 0 or (width is not None and q >= 1 << width):
            below = f" below 2^{width}" if width is not None else ""
            raise ParameterError(name, q, f"an odd integer >= 3{below}")
    return rule


def modulus_above(bound: int) -> Callable[[str, int], None]:
    """The rule of a sampler's modulus: >= 2 and > ``bound`` (the largest |sample|)."""
    def rule(name: str, q: int) -> None:
        if q < 2 or q <= bound:
            raise ParameterError(name, q, f"an integer modulus > {bound} (the largest |sample|) and >= 2")
    return rule


def ntt_prime(n: int, max_bits: int | None = None) -> Callable[[str, int], None]:
    """The rule of a transform's modulus: a prime q = 1 (mod 2N), at most ``max_bits`` bits."""
    from .primes import check_ntt_prime

    def rule(name: str, q: int) -> None:
        if max_bits is not None and q.bit_length() > max_bits:
            raise ParameterError(name, q, f"a modulus of at most {max_bits} bits (this one has "
                                          f"{q.bit_length()})")
        check_ntt_prime(q, n, name)
    return rule
