"""Build a reducer model by name (:func:`reducer_for`)."""

from __future__ import annotations

from hhe_gen.params.errors import ParameterError

from .barrett import BarrettReducer
from .ntt_montgomery import NttFriendlyMontgomery
from .special_barrett import SpecialPrimeBarrett
from .word_montgomery import WordMontgomeryReducer


REDUCER_NAMES = ("barrett", "montgomery", "special-barrett", "ntt-montgomery")


def reducer_for(name: str, q: int, width: int, **kw):
    """Build a reducer by name.

    Parameters
    ----------
    name : str   one of ``REDUCER_NAMES``:
                 "barrett" -> BarrettReducer(q, width)
                 "montgomery" -> WordMontgomeryReducer(q, width, word_bits=...)  (word_bits required)
                 "special-barrett" -> SpecialPrimeBarrett(q, k=kw.get("k", width), log_n=..., width=width, ...)
                 "ntt-montgomery" -> NttFriendlyMontgomery(q, log_n=..., width=width, ...)
    q, width : int   the modulus and datapath width
    **kw         the remaining constructor arguments of that reducer

    Returns
    -------
    the reducer object.  Raises ParameterError for an unknown name or a missing argument.
    """
    if name == "barrett":
        return BarrettReducer(q, width, **kw)
    if name == "montgomery":
        if "word_bits" not in kw:
            raise ParameterError("word_bits", None, "required for the 'montgomery' reducer")
        return WordMontgomeryReducer(q, width, **kw)
    if name == "special-barrett":
        if "log_n" not in kw:
            raise ParameterError("log_n", None, "required for the 'special-barrett' reducer")
        kw.setdefault("k", width)
        return SpecialPrimeBarrett(q, width=width, **kw)
    if name == "ntt-montgomery":
        if "log_n" not in kw:
            raise ParameterError("log_n", None, "required for the 'ntt-montgomery' reducer")
        return NttFriendlyMontgomery(q, width=width, **kw)
    raise ParameterError("reducer", name, "one of " + ", ".join(repr(n) for n in REDUCER_NAMES))
