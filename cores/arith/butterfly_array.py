"""An array of P multi-field butterflies driven as one: the shared datapath's arithmetic (DNA-HHE's
crypto unit, section III-A, Fig. 5), which several sequencers take turns on.

:func:`butterfly_lanes_signature` is the driver's side of the array: one ``op`` (and ``field``,
``sel``) for every lane, the operands ``a``, ``b``, ``w``, ``c`` and the results ``x``, ``y`` one
word per lane.  :class:`ButterflyArray` is P :class:`~.butterfly.Butterfly` units of one
:class:`~.butterfly.ButterflyPlan` behind that signature, always enabled.

A sequencer built with external butterflies (the iterative NTT's ``butterflies="external"``, the
engine's pointwise unit) has an ``Out(butterfly_lanes_signature(plan, P))`` member and counts on
the plan's latency: lane p's ``x`` and ``y`` are the butterfly of the operands it drove
``plan.latency`` cycles earlier.

Latency
-------
``plan.latency`` cycles from the operands to the results, initiation interval 1, for every op and
field (the butterfly's fixed pipeline: nothing depends on data, op or field).
"""

from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.params.checks import check_int

from .butterfly import Butterfly, ButterflyPlan

__all__ = ["butterfly_lanes_signature", "ButterflyArray", "sequencer_lanes"]


def butterfly_lanes_signature(plan: ButterflyPlan, lanes: int) -> wiring.Signature:
    """The driver's side of ``lanes`` butterflies of ``plan``: ``op`` Out(3), ``field`` (more than one
    field) and ``sel`` (a modular field of more than one modulus) as the butterfly's, ``a``, ``b``,
    ``w``, ``c`` Out(ArrayLayout(width, lanes)) and ``x``, ``y`` In(ArrayLayout(width, lanes))."""
    check_int("lanes", lanes, 1, 64)
    members = {"op": Out(3)}
    if len(plan.fields) > 1:
        members["field"] = Out(range(len(plan.fields)))
    if plan.n_sel > 1:
        members["sel"] = Out(range(plan.n_sel))
    words = data.ArrayLayout(plan.width, lanes)
    members.update({name: Out(words) for name in ("a", "b", "w", "c")})
    members.update({"x": In(words), "y": In(words)})
    return wiring.Signature(members)


class ButterflyArray(wiring.Component):
    """P butterflies of one plan behind :func:`butterfly_lanes_signature` (module docstring).

    Parameters
    ----------
    lanes : int          P, 1 .. 64
    **butterfly          the :class:`~.butterfly.Butterfly`'s parameters (zq, zt, complex, target,
                         latency, ...)

    Members
    -------
    lanes_port : In(butterfly_lanes_signature(plan, P))
    plan : the lanes' :class:`~.butterfly.ButterflyPlan` (``plan.latency``: the array's latency)
    """

    def __init__(self, lanes: int, **butterfly):
        self.lanes = check_int("lanes", lanes, 1, 64)
        self._butterfly = butterfly
        self.plan = ButterflyPlan(**butterfly)
        super().__init__({"lanes_port": In(butterfly_lanes_signature(self.plan, lanes))})

    @property
    def latency(self) -> int:
        return self.plan.latency

    def elaborate(self, platform):
        m = Module()
        port = self.lanes_port
        for j in range(self.lanes):
            bf = Butterfly(**self._butterfly)
            m.submodules[f"bf{j}"] = bf
            m.d.comb += [bf.op.eq(port.op), bf.a.eq(port.a[j]), bf.b.eq(port.b[j]), bf.w.eq(port.w[j]),
                         bf.c.eq(port.c[j]), bf.en.eq(1), port.x[j].eq(bf.x), port.y[j].eq(bf.y)]
            if len(self.plan.fields) > 1:
                m.d.comb += bf.field.eq(port.field)
            if self.plan.n_sel > 1:
                m.d.comb += bf.sel.eq(port.sel)
        return m


def sequencer_lanes(m, sequencer, lanes: int, **butterfly):
    """The lanes a sequencer drives in its module ``m``: its ``lanes_port`` when it was built with
    external butterflies (the member is in its signature), else a :class:`ButterflyArray` of
    ``lanes`` butterflies of ``butterfly`` made its submodule ``butterflies``."""
    if "lanes_port" in sequencer.signature.members:
        return sequencer.lanes_port
    m.submodules.butterflies = array = ButterflyArray(lanes, **butterfly)
    return array.lanes_port
