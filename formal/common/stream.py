"""Reusable stream handshake properties and a stream-component harness.

Rules (``amaranth.lib.stream``, AXI-like): a transfer happens in a cycle where ``valid`` and
``ready`` are both 1.  Once a producer raises ``valid`` it keeps it (and keeps ``payload``
unchanged) until the transfer; ``ready`` may do anything.  A harness *assumes* these rules on the
streams the environment drives (the design's inputs) and *asserts* them on the streams the design
drives (its outputs).

:func:`stream_rules` adds the rules for one stream; :func:`stream_harness` builds the complete
harness for a component with ``i_stream`` / ``o_stream``:

* free environment: input ``valid``/``payload`` and output ``ready`` are ``AnySeq`` (any value in
  any cycle), constrained only by the assumed rules;
* the rules asserted on ``o_stream``;
* an in-flight counter (input transfers minus output transfers) asserted to stay within the
  design's capacity, to be 0 only when no output is valid, and - when the caller can name the
  design's internal occupancy (e.g. the number of set valid bits of a pipeline) - asserted
  *equal* to it: that tie between the harness's bookkeeping and the design's state is what makes
  the property inductive, so SymbiYosys ``prove`` (k-induction) closes instead of returning
  UNKNOWN;
* optionally a scoreboard: one input transfer chosen by the solver is followed and the output
  transfer that carries it (the one after all transfers in flight before it) must equal
  ``spec(input payload)`` - checked by bounded model checking (it follows the data through the
  design's registers, which no generic invariant describes);
* covers: an output transfer, back-pressure (a valid output not taken), a full design, a transfer
  right after back-pressure, and the followed item arriving.
"""

from __future__ import annotations

from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Assume, Cover, Fragment, Mux, Signal, Value
from amaranth.lib import data

from .sby import formal_module

__all__ = ["stream_rules", "stream_harness", "popcount"]


def popcount(value) -> Value:
    """The number of set bits of ``value`` (an Amaranth expression)."""
    value = Value.cast(value)
    total = Value.cast(0)
    for i in range(len(value)):
        total = total + value[i]
    return total


def stream_rules(m, stream, *, check, name: str) -> dict:
    """Add the handshake rules for ``stream`` to module ``m``.

    Parameters
    ----------
    m : Module          the harness module (with a ``sync`` domain)
    stream : a stream interface (``valid``, ``ready``, ``payload``)
    check : Assume or Assert (from amaranth.hdl)   how the rules are used
    name : str          prefix of the bookkeeping signals

    Returns
    -------
    dict with ``stalled`` (1 when the previous cycle had valid and not ready) and ``transfer``
    (valid & ready this cycle).
    """
    payload = Value.cast(stream.payload)
    stalled = Signal(name=f"{name}_stalled")
    last = Signal(len(payload), name=f"{name}_last_payload")
    m.d.sync += [stalled.eq(stream.valid & ~stream.ready), last.eq(payload)]
    with m.If(stalled):
        m.d.comb += [check(stream.valid, f"{name}: valid dropped before the transfer"),
                     check(payload == last, f"{name}: payload changed while waiting")]
    transfer = Signal(name=f"{name}_transfer")
    m.d.comb += transfer.eq(stream.valid & stream.ready)
    return {"stalled": stalled, "transfer": transfer}


def stream_harness(dut, *, capacity: int, occupancy=None, spec=None, i_name: str = "i_stream",
                   o_name: str = "o_stream", covers: bool = True, input_assumption=None,
                   passthrough: bool = False):
    """The stream harness described in the module docstring.

    Parameters
    ----------
    dut : a component with stream members ``i_name`` (input) and ``o_name`` (output)
    capacity : int      the most items the design may hold (a pipeline of latency L: L)
    occupancy : callable(Fragment) -> Value, or None
                        the design's own count of held items, computed from its elaborated
                        fragment (e.g. ``lambda f: popcount(find_signal(f, "valid"))``); asserted
                        equal to the in-flight counter so k-induction closes
    spec : callable(payload Value) -> Value, or None
                        the output payload expected for an input payload (enables the scoreboard)
    input_assumption : callable(payload Value) -> Value, or None
                        assumed of every input payload (e.g. operands below the modulus)
    covers : bool       add the covers
    passthrough : bool  the design may pass an input to the output in the same cycle (a
                        combinational wrapper): then "output valid needs an item in flight"
                        counts the item arriving in this cycle

    Returns
    -------
    Module   ready for :func:`~hhe_gen.formal.common.sby.run_harness`
    """
    m, _ = formal_module()
    frag = Fragment.get(dut, None)
    m.submodules.dut = frag
    i_s, o_s = getattr(dut, i_name), getattr(dut, o_name)
    i_payload = Value.cast(i_s.payload)
    m.d.comb += [i_s.valid.eq(AnySeq(1)), i_payload.eq(AnySeq(len(i_payload))),
                 o_s.ready.eq(AnySeq(1))]
    if input_assumption is not None:
        with m.If(i_s.valid):
            m.d.comb += Assume(input_assumption(i_s.payload), "input payload assumption")
    inp = stream_rules(m, i_s, check=Assume, name="in")
    out = stream_rules(m, o_s, check=Assert, name="out")

    count = Signal(range(capacity + 2), name="in_flight")
    m.d.sync += count.eq(count + inp["transfer"] - out["transfer"])
    m.d.comb += [
        Assert(count <= capacity, "more items in flight than the capacity"),
        Assert((count != 0) | ~o_s.valid | (i_s.valid if passthrough else 0),
               "output valid with nothing in flight"),
    ]
    if occupancy is not None:
        m.d.comb += Assert(count == occupancy(frag), "in-flight counter differs from the design")

    if spec is not None:
        tag = Signal(name="sb_tag")
        m.d.comb += tag.eq(AnySeq(1))
        tagged, done = Signal(name="sb_tagged"), Signal(name="sb_done")
        ahead = Signal(range(capacity + 2), name="sb_ahead")
        token = Signal(len(i_payload), name="sb_token")
        tag_now = Signal(name="sb_tag_now")
        m.d.comb += tag_now.eq(tag & inp["transfer"] & ~tagged)
        pending = tag_now | (tagged & ~done)
        ahead_now = Mux(tag_now, count, ahead)
        ours = Signal(name="sb_ours")
        m.d.comb += ours.eq(out["transfer"] & pending & (ahead_now == 0))
        with m.If(tag_now):
            m.d.sync += [tagged.eq(1), token.eq(i_payload)]
        with m.If(pending & ~ours):
            m.d.sync += ahead.eq(ahead_now - out["transfer"])
        with m.If(ours):
            m.d.sync += done.eq(1)
        expected_in = Mux(tag_now, i_payload, token)
        if isinstance(i_s.payload, data.View):           # give spec the same view of the bits
            expected_in = data.View(i_s.payload.shape(), expected_in)
        expected = spec(expected_in)
        with m.If(ours):
            m.d.comb += Assert(Value.cast(o_s.payload) == expected, "wrong output payload")
        if covers:
            m.d.comb += Cover(ours)
    if covers:
        m.d.comb += [
            Cover(out["transfer"]),
            Cover(o_s.valid & ~o_s.ready),
            Cover(count == capacity),
            Cover(out["stalled"] & out["transfer"]),
        ]
    return m
