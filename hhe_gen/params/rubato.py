"""The six Rubato parameter sets (Par-80S/M/L, Par-128S/M/L) as validated, immutable objects.

Source: ``docs/rubato.md`` section 1 (which follows ``parms.h`` of the authors'
reference code, github.com/KAIST-CryptLab/Rubato commit 145ee37) and the ``params`` block of each
``hhe_gen/data/kat/rubato/rubato_<set>.json`` file.  The noise CDF tables below are the numbers of
``params.noise.cdf_table`` of those JSON files (which are the tables of the reference's
``parms.h``), copied as published, including the Par-128M/L defect (entry 4 = 2^31 - 1,
docs/rubato.md section 4).  The older RtF/Go table of Rubato parameters is deliberately *not*
used: the known-answer vectors come from the reference code, whose sets are these.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import ParameterError

__all__ = ["RubatoParams", "RUBATO_SETS", "rubato_params", "rubato_set_names"]

# params.noise.cdf_table of rubato_80s.json ... rubato_128l.json (= parms.h of the reference).
_CDF_80S = (
    193466994, 570659710, 920075514, 1227667221, 1484978918, 1689527875, 1844048991, 1954974452,
    2030645103, 2079699341, 2109918225, 2127608442, 2137449475, 2142651843, 2145265294,
    2146512908, 2147078886, 2147322875, 2147422828, 2147461739, 2147476134, 2147481194,
    2147482885, 2147483421, 2147483583, 2147483630, 2147483642, 2147483646, 2147483647,
)
_CDF_80M = (
    795364312, 1829169833, 2112940235, 2145839095, 2147450037, 2147483354, 2147483645,
    2147483647,
)
_CDF_80L = (1341314782, 2127638171, 2147440791, 2147483639, 2147483647)
_CDF_128S = (
    204522251, 602075463, 967055725, 1283569708, 1542847805, 1743474246, 1890116766, 1991363511,
    2057395083, 2098074209, 2121746538, 2134759009, 2141515606, 2144829553, 2146364921,
    2147036859, 2147314635, 2147423105, 2147463116, 2147477056, 2147481645, 2147483071,
    2147483490, 2147483606, 2147483637, 2147483644, 2147483646, 2147483647,
)
# Shared by Par-128M and Par-128L.  Entry 4 is 2^31-1 instead of about 2136316068 (the defect).
_CDF_128ML = (
    523776498, 1392759815, 1888801005, 2083648537, 2147483647, 2146112362, 2147366230,
    2147476666, 2147483359, 2147483638, 2147483647,
)

_CIRCULANT_ROWS = {4: (2, 3, 1, 1), 6: (4, 2, 4, 3, 1, 1), 8: (5, 3, 4, 3, 6, 2, 1, 1)}


def _is_prime(n: int) -> bool:
    if n < 2:
        return False
    f = 2
    while f * f <= n:
        if n % f == 0:
            return False
        f += 1 if f == 2 else 2
    return True


@dataclass(frozen=True)
class RubatoParams:
    """One Rubato parameter set (docs/rubato.md §1).  Validated on construction.

    Members
    -------
    name : str                  "Par-80S" ... "Par-128L"
    n : int                     state size, n = v*v
    v : int                     side of the square state matrix
    l : int                     keystream words per block (truncation length), l <= n
    q : int                     the prime modulus (the "t" of RtF)
    q_bits : int                bit length of q; round-constant candidates are masked to it
    rounds : int                r, the number of Feistel rounds (r+1 ARKs and linear layers)
    circulant : tuple[int,...]  first row c of the MixColumns/MixRows circulant matrix
    noise_width_s : float       Gaussian width s = alpha*q (density exp(-pi x^2 / s^2))
    noise_sigma : float         standard deviation s / sqrt(2 pi), as listed in the KAT files
    cdf_table : tuple[int,...]  31-bit noise CDF table exactly as in the reference (docs/rubato.md §4)
    cdf_table_defect : bool     True for Par-128M/L (entry 4 is 2^31-1, table not monotone)

    Derived (properties): ``mask`` = 2^q_bits - 1, ``delta`` = float32(q)/16 as a Python float,
    ``round_constant_count`` = (r+1)*n.
    """

    name: str
    n: int
    v: int
    l: int
    q: int
    q_bits: int
    rounds: int
    circulant: tuple[int, ...]
    noise_width_s: float
    noise_sigma: float
    cdf_table: tuple[int, ...]
    cdf_table_defect: bool = False

    def __post_init__(self):
        if self.v not in _CIRCULANT_ROWS:
            raise ParameterError("v", self.v, "4, 6 or 8 (the reference's circulant matrices)")
        if self.n != self.v * self.v:
            raise ParameterError("n", self.n, f"n = v*v = {self.v * self.v}")
        if not 1 <= self.l <= self.n:
            raise ParameterError("l", self.l, f"1 <= l <= n = {self.n}")
        if not _is_prime(self.q) or self.q >= 1 << 31:
            raise ParameterError("q", self.q, "a prime below 2^31")
        if self.q_bits != self.q.bit_length():
            raise ParameterError("q_bits", self.q_bits, f"the bit length of q, {self.q.bit_length()}")
        if not 1 <= self.rounds <= 16:
            raise ParameterError("rounds", self.rounds, "1..16")
        if tuple(self.circulant) != _CIRCULANT_ROWS[self.v]:
            raise ParameterError("circulant", self.circulant,
                                 f"the reference's first row for v={self.v}: {_CIRCULANT_ROWS[self.v]}")
        if not self.cdf_table or any(not 0 <= t < 1 << 31 for t in self.cdf_table):
            raise ParameterError("cdf_table", self.cdf_table, "a non-empty tuple of 31-bit integers")
        monotone = all(a <= b for a, b in zip(self.cdf_table, self.cdf_table[1:]))
        if monotone == self.cdf_table_defect:
            raise ParameterError("cdf_table_defect", self.cdf_table_defect,
                                 f"{not monotone} (the table is {'' if monotone else 'not '}monotone)")
        if not self.noise_width_s > 0:
            raise ParameterError("noise_width_s", self.noise_width_s, "a positive width")

    @property
    def mask(self) -> int:
        """2^q_bits - 1, the mask applied to every round-constant candidate word."""
        return (1 << self.q_bits) - 1

    @property
    def delta(self) -> float:
        """Message scale Delta = float32(q) / 16 (docs/rubato.md §5), e.g. 4120576.0 for the 26-bit q."""
        return float(np.float32(self.q) / np.float32(16))

    @property
    def round_constant_count(self) -> int:
        """(r+1)*n: round constants drawn per keystream block."""
        return (self.rounds + 1) * self.n

    @property
    def short_name(self) -> str:
        """"128S" for "Par-128S"."""
        return self.name.split("-", 1)[1]


def _make(name, v, l, q, rounds, s, sigma, table, defect=False):
    return RubatoParams(name=name, n=v * v, v=v, l=l, q=q, q_bits=q.bit_length(), rounds=rounds,
                        circulant=_CIRCULANT_ROWS[v], noise_width_s=s, noise_sigma=sigma,
                        cdf_table=table, cdf_table_defect=defect)


# docs/rubato.md §1; sigma values as listed in the KAT files (params.noise.std_dev_sigma).
RUBATO_SETS: dict[str, RubatoParams] = {
    p.name: p for p in (
        _make("Par-80S", 4, 12, 0x3EE0001, 2, 11.1, 4.428259, _CDF_80S),
        _make("Par-80M", 6, 32, 0x1FC0001, 2, 2.7, 1.077144, _CDF_80M),
        _make("Par-80L", 8, 60, 0x1FC0001, 2, 1.6, 0.638308, _CDF_80L),
        _make("Par-128S", 4, 12, 0x3EE0001, 5, 10.5, 4.188894, _CDF_128S),
        _make("Par-128M", 6, 32, 0x1FC0001, 3, 4.1, 1.635663, _CDF_128ML, defect=True),
        _make("Par-128L", 8, 60, 0x1FC0001, 2, 4.1, 1.635663, _CDF_128ML, defect=True),
    )
}
"""The six published sets by canonical name ("Par-80S" ... "Par-128L")."""


def rubato_set_names() -> list[str]:
    """The canonical names of the six sets."""
    return list(RUBATO_SETS)


def rubato_params(name: str) -> RubatoParams:
    """Look up a Rubato parameter set by name.

    Parameters
    ----------
    name : str
        "Par-128S", "128S", "128s", "rubato-128s", "par-128s" (any case) and likewise for the
        other five sets.

    Returns
    -------
    RubatoParams

    Raises
    ------
    ParameterError
        for any other name; the message lists the six sets.
    """
    if isinstance(name, RubatoParams):
        return name
    key = str(name).strip().lower()
    for prefix in ("rubato-", "rubato_", "par-", "par_"):
        if key.startswith(prefix):
            key = key[len(prefix):]
            break
    for p in RUBATO_SETS.values():
        if p.short_name.lower() == key:
            return p
    raise ParameterError("rubato parameter set", name,
                         "one of " + ", ".join(RUBATO_SETS) + " (also written 128S or rubato-128s)")
