"""Stream properties of :class:`hhe_gen.cores.ntt.IterativeNtt` (k-induction) and covers.

Harness: the real core, every handshake free (``AnySeq``: command valid / direction, input valid /
payload, output ready), the stream rules (:func:`hhe_gen.formal.common.stream.stream_rules`)
assumed on ``cmd`` and ``i_stream`` and asserted on ``o_stream``: once valid, the output stays
valid with the same payload until taken.  No loss, no extra beats: counters of the command's
input and output transfers are asserted to follow the core's own counters (N/P input beats then
nothing while the core transforms; output transfers = beats read minus the one on the port),
``done`` comes exactly with the N/P-th output transfer after exactly N/P input transfers, and
``busy`` is high from the command to ``done``.  These ties also make the property inductive
(depth D + 3, the write side's delay lines inside the window).

Covers: a whole command completes (``done``), with back-pressure on the output on the way.
"""

from __future__ import annotations

from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Assume, Cover, Fragment, Signal, Value

from ..common.sby import find_signal, formal_module
from ..common.stream import stream_rules
from .schedule import small_prime

__all__ = ["StreamHarness"]

IDLE, LOAD, WAIT, RUN, UNLOAD = range(5)


class StreamHarness:
    """Stream rules, no loss, covers (module docstring).

    ``mutant``: the output payload is inverted while the consumer stalls (must be refuted).
    """

    def __init__(self, n: int, lanes: int, banking: str = "dual", mutant: bool = False):
        from hhe_gen.cores.ntt import IterativeNtt
        self.dut = IterativeNtt(n, lanes, small_prime(n), banking=banking)
        self.mutant = mutant

    @property
    def depth(self) -> int:
        return self.dut.depth + 3

    @property
    def cover_depth(self) -> int:
        """A command at full rate plus a few stalled cycles."""
        return max(self.dut.command_cycles(False), self.dut.command_cycles(True)) + 6

    def build(self):
        dut = self.dut
        beats = dut.beats
        m, _ = formal_module()
        frag = Fragment.get(dut, None)
        m.submodules.dut = frag

        def sig(name):
            return find_signal(frag, name)

        state, beat, o_valid, u_last = sig("state"), sig("beat"), sig("o_valid"), sig("u_last")
        inverse = Value.cast(dut.cmd.payload.inverse)
        i_payload = Value.cast(dut.i_stream.payload)
        m.d.comb += [dut.cmd.valid.eq(AnySeq(1)), inverse.eq(AnySeq(1)), dut.cmd.payload.sel.eq(0),
                     dut.i_stream.valid.eq(AnySeq(1)), i_payload.eq(AnySeq(len(i_payload))),
                     dut.o_stream.ready.eq(AnySeq(1))]
        cmd = stream_rules(m, dut.cmd, check=Assume, name="cmd")
        inp = stream_rules(m, dut.i_stream, check=Assume, name="in")
        if self.mutant:        # observe a corrupted copy of the output stream
            from types import SimpleNamespace
            payload = Signal(len(Value.cast(dut.o_stream.payload)), name="mutant_payload")
            stalled = Signal(name="mutant_stalled")
            m.d.sync += stalled.eq(dut.o_stream.valid & ~dut.o_stream.ready)
            m.d.comb += payload.eq(Value.cast(dut.o_stream.payload) ^ stalled)
            o_s = SimpleNamespace(valid=dut.o_stream.valid, ready=dut.o_stream.ready, payload=payload)
        else:
            o_s = dut.o_stream
        out = stream_rules(m, o_s, check=Assert, name="out")

        n_in = Signal(range(beats + 1), name="n_in")
        n_out = Signal(range(beats + 1), name="n_out")
        with m.If(cmd["transfer"]):
            m.d.sync += [n_in.eq(0), n_out.eq(0)]
        with m.Else():
            m.d.sync += [n_in.eq(n_in + inp["transfer"]), n_out.eq(n_out + out["transfer"])]
        m.d.comb += [
            Assert(state <= UNLOAD, "state encoding"),
            Assert(dut.busy == (state != IDLE), "busy"),
            Assert(~inp["transfer"] | (state == LOAD), "input taken only while loading"),
            Assert(~out["transfer"] | (state == UNLOAD), "output only while unloading"),
            Assert(~o_valid | (state == UNLOAD), "output valid only while unloading"),
            Assert((state != LOAD) | ((n_in == beat) & (beat < beats) & (n_out == 0)), "load count"),
            Assert(~((state == WAIT) | (state == RUN)) | ((n_in == beats) & (n_out == 0)), "loaded"),
            Assert((state != UNLOAD) | ((n_in == beats) & (beat <= beats) & (n_out + o_valid == beat)),
                   "unload count"),
            Assert((state != UNLOAD) | (u_last == (beat == beats)), "last beat flag"),
            Assert(~((state == UNLOAD) & (beat == beats)) | o_valid, "last beat on the port"),
            Assert(~dut.done | (out["transfer"] & (n_out == beats - 1) & (n_in == beats)), "done with the last beat"),
        ]
        with m.If(state != UNLOAD):
            m.d.comb += Assert(~o_valid & ~u_last, "no output outside the unload")
        m.d.comb += [Cover(dut.done), Cover(dut.done & out["stalled"])]
        return m
