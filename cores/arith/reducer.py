"""Common base of the pipelined modular multipliers (raw units, see :mod:`hhe_gen.cores.arith`).

Each multiplier comes in two parts: its plan (:class:`ReducerPlan`: the checked parameters, the
golden models, the datapath's segments, latency, register schedule and DSP tiles, and ``_build``,
which builds the datapath into a :class:`~.pipeline.Pipe`), a plain object that reading a latency
or a tile count never turns into hardware; and the raw unit (:class:`ModMulBase`), the plan with
ports and an ``elaborate``.  A butterfly builds its reducers' datapaths from their plans; the
factory gives either (:func:`~.factory.modmul`, :func:`~.factory.reducer_plan`)."""

from __future__ import annotations

from amaranth.hdl import Module, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.params.errors import ParameterError

from .constants import check_moduli, check_target, check_width, sel_shape
from .multiplier import check_dsp
from .pipeline import DELAY, Pipe, Segment, add_delay, check_latency, schedule

__all__ = ["ReducerPlan", "ModMulBase", "correction_segments", "barrett_tail_segments"]


def correction_segments(bits: int, names=("r1", "r")) -> list[Segment]:
    """Segments of constant-time conditional subtractions of q from a ``bits``-wide value."""
    return [Segment(n, add_delay(bits + 1) + DELAY["mux"]) for n in names]


def barrett_tail_segments(k: int) -> list[Segment]:
    """The Barrett tail: ``r0 = x - qq``; ``d1 = r0 - q`` and ``d2 = r0 - 2q`` side by side
    (segment "d"); the two selects r1, r (segment "r")."""
    return [Segment("r0", add_delay(k + 2)), Segment("d", add_delay(k + 3)), Segment("r", 2 * DELAY["mux"])]


class ReducerPlan:
    """A modular multiplier's plan: validation, models per prime, schedule (module docstring).

    Subclasses set ``self.models`` (one golden model per prime, same order as ``moduli``) and
    ``self.segments`` in ``_plan()``, and build the datapath in ``_build(pipe, a, b) -> Timed``.

    Members
    -------
    moduli : tuple of int     the RNS set (``sel`` indexes it)
    width : int               port width
    models : tuple            golden models (``hhe_gen.models.modarith``), one per prime
    latency : int             register stages; ``min_latency`` <= latency
    ii : int                  1
    dsp : str                 how DSP tiles are built: "infer" | "primitive" | "model" (see
                              :class:`~hhe_gen.cores.arith.multiplier.MulPlan`)
    tiles : int               DSP-sized partial products of all multipliers
    segments, counts          the datapath chain and the registers at each boundary
    """

    kind = None
    montgomery = False

    def _setup(self, moduli, width, latency, target, karatsuba, dsp="infer"):
        self.width = check_width(width)
        self.moduli = check_moduli(moduli, width)
        self.target = check_target(target)
        if karatsuba not in (True, False):
            raise ParameterError("karatsuba", karatsuba, "True or False")
        self.karatsuba = karatsuba
        self.dsp = check_dsp(dsp, self.target)
        self._plan()
        self.min_latency = sum(s.required for s in self.segments)
        self.latency = check_latency(latency, self.min_latency)
        self.counts = schedule(self.segments, self.latency)
        self.ii = 1
        self.tiles = sum(m.tiles for m in self.mul_plans)

    def model(self, a: int, b: int, sel: int = 0) -> int:
        """The golden model's result (a*b mod q, or a*b*R^-1 mod q) for prime ``moduli[sel]``."""
        return self.models[sel].mul(a, b)

    def trace(self, a: int, b: int, sel: int = 0) -> dict:
        return self.models[sel].trace(a, b)

    @property
    def schedule(self) -> list[tuple[str, int]]:
        """(boundary name, registers) for every boundary that holds registers."""
        names = ["in"] + [s.name for s in self.segments]
        return [(n, c) for n, c in zip(names, self.counts) if c]

    # helpers for subclasses
    @staticmethod
    def _correct(pipe, value, q, name, out_bits):
        """``value - q if value >= q else value`` (constant time: the difference is always
        computed, its borrow selects), as ``out_bits`` bits; ``value`` and q unsigned."""
        def f(v, qq):
            d = v - qq                  # unsigned, one bit wider than the wider operand: top bit = borrow
            return Mux(d[-1], v, d)
        return pipe.comb(f, value, q, shape=out_bits, name=name, probe=True)


class ModMulBase(ReducerPlan, wiring.Component):
    """A plan (:class:`ReducerPlan`) as a raw unit: the ports ``a``, ``b``, ``sel`` (more than one
    modulus), ``en``, ``p`` and ``probes`` (after elaboration: trace name -> (signal, stage)).
    A kind's unit is ``class XMul(XPlan, ModMulBase)``."""

    def _setup(self, moduli, width, latency, target, karatsuba, dsp="infer"):
        ReducerPlan._setup(self, moduli, width, latency, target, karatsuba, dsp)
        self.probes = {}
        ports = {"a": In(width), "b": In(width)}
        if len(self.moduli) > 1:
            ports["sel"] = In(sel_shape(self.moduli))
        ports.update({"en": In(1), "p": Out(width)})
        wiring.Component.__init__(self, ports)

    def elaborate(self, platform):
        m = Module()
        pipe = Pipe(m, self.en, self.segments, self.counts, getattr(self, "sel", None))
        self.probes = pipe.probes
        r = self._build(pipe, pipe.input(self.a), pipe.input(self.b))
        m.d.comb += self.p.eq(pipe.output(r))
        return m
