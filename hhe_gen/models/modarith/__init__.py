"""Bit-exact golden models of the modular arithmetic units (adders and every reducer).

Every reducer here is the specification of one hardware pipeline: the hardware must produce the
same final value *and* may be checked against the same intermediate values (``trace``).  The
reducers are frozen dataclasses built for one modulus.  The hardware picks the modulus at run time
from a small table of per-prime constants; ``constants()`` returns one row of that table.

Reducers and the papers they come from
--------------------------------------
======================  ==========================================================  ===============
class                   algorithm                                                   ``mul`` returns
======================  ==========================================================  ===============
BarrettReducer          generic Barrett, two (k+1)x(k+1) products, <= 2 corrections  a*b mod q
WordMontgomeryReducer   word-level Montgomery for q = 1 mod 2^w [M19] (seed 001)    a*b*R^-1 mod q
SpecialPrimeBarrett     DNA-HHE Barrett for q = 2^k - 2N*bnd + 1 (seed 000, III-B)  a*b mod q
NttFriendlyMontgomery   ABC-FHE shift-add Montgomery, q = 2^e + kk*2N + 1 (seed 002)  a*b*R^-1 mod q
======================  ==========================================================  ===============

``reducer_for(name, q, width, **kw)`` builds one by name.  Every reducer has the members ``q``,
``width`` and ``montgomery_radix`` (R for the Montgomery ones, 1 for Barrett, so that
``mul(a, b) == a*b*pow(montgomery_radix, -1, q) % q`` for all of them), and the methods ``mul``,
``trace`` and ``constants``.

Conventions: all values are Python integers; ``trace`` values are exact (signed where a step can
go negative, e.g. a difference before its borrow is tested) - the hardware holds them in the bit
widths stated in each docstring, which the bounds there justify.
"""

from .addsub import mod_add, mod_add_trace, mod_neg, mod_sub, mod_sub_trace
from .barrett import BarrettReducer
from .common import MAX_WIDTH, MIN_WIDTH, signed_digits  # noqa: F401  (MIN/MAX_WIDTH: former module names)
from .factory import REDUCER_NAMES, reducer_for
from .ntt_montgomery import NttFriendlyMontgomery
from .special_barrett import SpecialPrimeBarrett
from .word_montgomery import WordMontgomeryReducer

__all__ = [
    "mod_add", "mod_sub", "mod_neg", "mod_add_trace", "mod_sub_trace",
    "BarrettReducer", "WordMontgomeryReducer", "SpecialPrimeBarrett", "NttFriendlyMontgomery",
    "reducer_for", "REDUCER_NAMES", "signed_digits",
]
