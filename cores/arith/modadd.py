"""Constant-time modular adder and subtractor with a run-time-selected modulus.

Both are raw pipelined units (see :mod:`hhe_gen.cores.arith`) and follow
:func:`hhe_gen.models.modarith.mod_add_trace` / :func:`~hhe_gen.models.modarith.mod_sub_trace`
step by step: both candidates are always computed and the carry/borrow selects one, so neither
timing nor the logic that toggles depends on the data beyond the final select.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.models.modarith import mod_add, mod_sub

from .constants import check_int, check_moduli, check_width, sel_shape
from .pipeline import DELAY, Pipe, Segment, add_delay, schedule

__all__ = ["ModAdd", "ModSub", "add_sub_segments"]


def add_sub_segments(width: int) -> list[Segment]:
    """The datapath chain of :class:`ModAdd` and :class:`ModSub` at ``width`` bits: the sum (or
    difference) "s1", the candidate minus (plus) q "s2", the "select"; ``latency`` 1 puts one
    register on it (:func:`~.pipeline.schedule`)."""
    return [Segment("s1", add_delay(width + 1)), Segment("s2", add_delay(width + 1)), Segment("select", DELAY["mux"])]


class _ModAddSub(wiring.Component):
    _op = None

    @quiet_on_error
    def __init__(self, moduli, width: int, latency: int = 0):
        self.width = check_width(width, "width", 2, 64)
        self.moduli = check_moduli(moduli, width)
        self.latency = check_int("latency", latency, 0, 1)
        self.min_latency = 0
        self.ii = 1
        self.tiles = 0
        w = width
        self.segments = add_sub_segments(w)
        self.counts = schedule(self.segments, self.latency)
        ports = {"a": In(w), "b": In(w)}
        if len(self.moduli) > 1:
            ports["sel"] = In(sel_shape(self.moduli))
        ports.update({"en": In(1), "p": Out(w)})
        self.probes = {}
        super().__init__(ports)

    def model(self, a: int, b: int, sel: int = 0) -> int:
        """The golden model's result for these operands and prime index."""
        return type(self)._op(a, b, self.moduli[sel])

    def elaborate(self, platform):
        m = Module()
        sel = getattr(self, "sel", None)
        pipe = Pipe(m, self.en, self.segments, self.counts, sel)
        self.probes = pipe.probes
        a, b = pipe.input(self.a), pipe.input(self.b)
        w = self.width
        r = self._build(pipe, a, b, w)
        m.d.comb += self.p.eq(pipe.output(r))
        return m


class ModAdd(_ModAddSub):
    """(a + b) mod q, q = moduli[sel]: ``sum = a + b``, ``diff = sum - q``, result = sum if diff < 0.

    Parameters
    ----------
    moduli : int or list of int   odd moduli below 2^width (the RNS set; ``sel`` picks one)
    width : int                   operand width, 2 .. 64
    latency : int                 0 (combinational) or 1 (one register, placed where it balances the
                                  estimated delays: see :func:`~hhe_gen.cores.arith.pipeline.schedule`)

    Members
    -------
    a, b : In(width)        operands in [0, q)
    sel : In(range(len(moduli)))  prime index (only with more than one modulus)
    en : In(1)              clock enable of the register
    p : Out(width)          (a + b) mod q, ``latency`` enabled cycles after a, b
    latency, ii = 1, tiles = 0, min_latency = 0

    Latency: ``latency`` cycles, initiation interval 1.  Probes (after elaboration): ``sum``,
    ``diff`` (w + 1 bits, two's complement), ``result`` - the model's trace keys.
    """
    _op = staticmethod(mod_add)

    def _build(self, pipe, a, b, w):
        s = pipe.comb(lambda x, y: x + y, a, b, shape=w + 1, name="sum", probe=True)
        s = pipe.boundary("s1", s)
        q = pipe.table(self.moduli, w, "q")
        d = pipe.comb(lambda x, y: x - y, s, q, shape=signed(w + 2), name="diff", probe=True)
        d = pipe.boundary("s2", d)
        r = pipe.comb(lambda x, y: Mux(y[-1], x, y), s, d, shape=w, name="result", probe=True)
        return pipe.boundary("select", r)


class ModSub(_ModAddSub):
    """(a - b) mod q, q = moduli[sel]: ``diff = a - b``, ``alt = diff + q``, result = alt if diff < 0.

    Parameters, members and latency as :class:`ModAdd`.  Probes: ``diff`` (two's complement),
    ``alt``, ``result``.
    """
    _op = staticmethod(mod_sub)

    def _build(self, pipe, a, b, w):
        d = pipe.comb(lambda x, y: x - y, a, b, shape=signed(w + 1), name="diff", probe=True)
        d = pipe.boundary("s1", d)
        q = pipe.table(self.moduli, w, "q")
        alt = pipe.comb(lambda x, y: x + y, d, q, shape=w + 1, name="alt", probe=True)
        alt = pipe.boundary("s2", alt)
        r = pipe.comb(lambda x, y: Mux(x[-1], y, x), d, alt, shape=w, name="result", probe=True)
        return pipe.boundary("select", r)
