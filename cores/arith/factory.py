"""``modmul``: build any of the four pipelined modular multipliers by name; ``reducer_plan``: the
same multiplier's plan (latency, schedule, tiles, models, datapath) without its hardware."""

from __future__ import annotations

import inspect

from hhe_gen.params.errors import ParameterError

from .barrett import BarrettMul, BarrettPlan
from .ntt_montgomery import NttMontgomeryMul, NttMontgomeryPlan
from .special_barrett import SpecialBarrettMul, SpecialBarrettPlan
from .word_montgomery import WordMontgomeryMul, WordMontgomeryPlan

__all__ = ["KINDS", "PLANS", "modmul", "reducer_plan"]

KINDS = {
    "barrett": BarrettMul,
    "montgomery": WordMontgomeryMul,
    "special-barrett": SpecialBarrettMul,
    "ntt-montgomery": NttMontgomeryMul,
}
PLANS = {
    "barrett": BarrettPlan,
    "montgomery": WordMontgomeryPlan,
    "special-barrett": SpecialBarrettPlan,
    "ntt-montgomery": NttMontgomeryPlan,
}
"""Kind -> the plan class of its multiplier (:class:`~.reducer.ReducerPlan`)."""
_REQUIRED = {"montgomery": ("word_bits",), "special-barrett": ("log_n",), "ntt-montgomery": ("log_n",)}


def modmul(kind, moduli, width, latency=None, target="ecp5", **kw):
    """A pipelined modular multiplier (raw unit) of the given kind.

    Parameters
    ----------
    kind : str       "barrett" | "montgomery" (word-level, needs ``word_bits``) |
                     "special-barrett" (DNA-HHE, needs ``log_n``; ``k`` defaults to ``width``) |
                     "ntt-montgomery" (ABC-FHE, needs ``log_n``) - the names of
                     ``hhe_gen.models.modarith.REDUCER_NAMES``
    moduli : int or list of int   the RNS set (``sel`` picks one at run time)
    width : int      port width, 16 .. 64
    latency : int or None   register stages; None = the unit's minimum; below it -> ParameterError
                     whose message states the minimum
    target : str     "ecp5" | "xilinx" | "generic"
    **kw             the remaining keyword parameters of that class (karatsuba, bnd_bits,
                     delta_shift, r_bits, max_kk_terms, negated ...)

    Raises ParameterError for an unknown kind, a missing or unknown parameter, moduli that do not
    fit the kind's form, a width out of range, or a latency below the minimum.
    """
    return _make(KINDS, kind, moduli, width, latency, target, kw)


def reducer_plan(kind, moduli, width, latency=None, target="ecp5", **kw):
    """The plan of ``modmul(kind, moduli, width, latency, target, **kw)`` (the same parameters and
    refusals): its latency, minimum latency, schedule, tiles, models and datapath builder, with no
    hardware made (:class:`~.reducer.ReducerPlan`)."""
    return _make(PLANS, kind, moduli, width, latency, target, kw)


def _make(classes, kind, moduli, width, latency, target, kw):
    if kind not in KINDS:
        raise ParameterError("kind", kind, "one of " + ", ".join(repr(k) for k in KINDS))
    for name in _REQUIRED.get(kind, ()):
        if name not in kw:
            raise ParameterError(name, None, f"required for the {kind!r} multiplier")
    cls = classes[kind]
    allowed = set(inspect.signature(cls.__init__).parameters) - {"self", "moduli", "latency", "target"}
    for name in kw:
        if name not in allowed or name == "width" and kind != "special-barrett":
            raise ParameterError(name, kw[name], f"a parameter of {cls.__name__}: "
                                 + ", ".join(sorted(allowed - {"width"})))
    kw = dict(kw)
    if kind == "barrett":
        return cls(moduli, width, latency, target=target, **kw)
    if kind == "montgomery":
        word_bits = kw.pop("word_bits")
        return cls(moduli, width, word_bits, latency, target=target, **kw)
    if kind == "special-barrett":
        k = kw.pop("k", width)
        log_n = kw.pop("log_n")
        return cls(moduli, k, log_n, latency, width=width, target=target, **kw)
    log_n = kw.pop("log_n")
    return cls(moduli, log_n, width, latency, target=target, **kw)
