"""The modular multipliers of the Rubato core: cores/arith's Barrett ``modmul``, or the
multi-field :class:`~hhe_gen.cores.arith.Butterfly` in its Z_t mode (see :func:`make_multiplier`).
"""

from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.params.errors import ParameterError

__all__ = ["MULTIPLIERS", "ZtButterfly", "make_multiplier"]

MULTIPLIERS = ("barrett", "butterfly")


class ZtButterfly(wiring.Component):
    """The multi-field Butterfly with only its Z_t field (``zt = dict(kind="barrett", moduli=[q])``),
    its operation fixed: ``op = "mul"`` (``p = a*b mod q``) or ``"mac"`` (``p = c + a*b mod q``).

    Parameters
    ----------
    q : int                  the modulus t
    op : str                 "mul" or "mac"
    latency : int or None    the butterfly's latency (add_latency 0, so the multiplier section
                             is all of it); None = the minimum, 3 (the Barrett reducer's)

    Members
    -------
    a, b, c : In(width)      operands (canonical residues; ``c`` only used by "mac")
    en : In(1)               clock enable of every register
    p : Out(width)           the result, ``latency`` enabled cycles after the operands
    latency, width, unit (the Butterfly)

    Latency: ``latency`` (the post-multiplier addition of "mac" is combinational, add_latency 0).
    """

    def __init__(self, q: int, op: str = "mul", latency=None):
        from hhe_gen.cores.arith import Butterfly, reducer_plan

        if op not in ("mul", "mac"):
            raise ParameterError("op", op, "'mul' or 'mac'")
        self.op = op
        if latency is None:             # the Butterfly's own default is its minimum + 3
            latency = reducer_plan("barrett", [q], max(16, q.bit_length())).min_latency
        self.unit = Butterfly(zt=dict(kind="barrett", moduli=[q]), add_latency=0, latency=latency)
        self.latency = self.unit.latency
        self.width = self.unit.width
        super().__init__({"a": In(self.width), "b": In(self.width), "c": In(self.width),
                          "en": In(1), "p": Out(self.width)})

    def elaborate(self, platform):
        from hhe_gen.cores.arith.butterfly import OP_CODES

        m = Module()
        m.submodules.unit = u = self.unit
        m.d.comb += [u.op.eq(OP_CODES[self.op]), u.a.eq(self.a), u.b.eq(self.b), u.c.eq(self.c),
                     u.w.eq(0), u.en.eq(self.en), self.p.eq(u.x)]
        return m


def make_multiplier(kind: str, q: int, latency=None, *, mac: bool = False):
    """A raw pipelined modular multiplier (ports a, b, en, p; attribute ``latency``).

    ``"barrett"``: :func:`hhe_gen.cores.arith.modmul` ("barrett"): ``p = a*b mod q``; ``mac`` is
    not available (the caller adds).  ``"butterfly"``: :class:`ZtButterfly`, op "mac" if ``mac``
    (``p = c + a*b mod q``, an extra port ``c``) else "mul".
    """
    from hhe_gen.cores.arith import modmul

    if kind == "barrett":
        return modmul("barrett", [q], max(16, q.bit_length()), latency)
    if kind == "butterfly":
        return ZtButterfly(q, "mac" if mac else "mul", latency)
    raise ParameterError("multiplier", kind, "one of " + ", ".join(repr(k) for k in MULTIPLIERS))
