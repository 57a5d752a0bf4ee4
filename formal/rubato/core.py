"""Stream properties of the whole Rubato core (:class:`hhe_gen.cores.rubato.RubatoCore`), and a
cover of a complete block.

Harness: the real core (both of its parts that touch the streams: the command intake and the
output register; the SHAKE256 XOF, round keys and datapath are all in, unchanged) at a small
modulus (:func:`.datapath.small_params`: Par-80S's n = 16, r = 2, l = 12; q a small prime),
noise hardware off.  Free environment: commands (``AnySeq`` under the stream rules), the
consumer's ``ready``, key writes (values < q).

Asserted (k-induction):

* ``o_stream`` obeys the stream rules (an offered word stays offered, unchanged, until taken);
* words and commands balance: a ledger (+l per accepted command, -1 per word taken) never goes
  negative (no word without a command), a command is accepted only when at most the previous
  block's last word is still waiting (ledger <= 1), and it is exactly what the core owes:
  ``l - out_count`` words while a block runs, plus the word in the output register (the
  invariant that closes the induction);
* ``i_stream.ready`` is high only in the IDLE state.

Cover (BMC to the block's length): the last word of a block is taken (the XOF, the round keys,
all 11 phases and the output ran).
"""

from __future__ import annotations

from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Assume, Cover, Mux, Signal

from ..common.sby import formal_module
from ..common.stream import stream_rules
from .datapath import small_params

__all__ = ["CoreStreamHarness"]


class CoreStreamHarness:
    """The stream harness of :class:`RubatoCore` (see the module docstring)."""

    def __init__(self, q: int = 31, lanes: int = 16, rounds_per_cycle: int = 1):
        from hhe_gen.cores.rubato import RubatoCore

        self.params = small_params(q)
        self.dut = RubatoCore(self.params, lanes, noise=False, xof_rounds_per_cycle=rounds_per_cycle)

    def cover_depth(self, margin: int = 20) -> int:
        """Cycles for one block with no rejection, plus ``margin`` (key write slack, rejections)."""
        return self.dut.cycles_per_block() + margin

    def build(self, covers: bool = True):
        from hhe_gen.cores.rubato.core import CoreState

        m, _ = formal_module()
        dut = self.dut
        m.submodules.dut = dut
        p = self.params
        q, w, l = p.q, p.q_bits, p.l

        m.d.comb += [dut.i_stream.valid.eq(AnySeq(1)),
                     dut.i_stream.payload.eq(AnySeq(dut.i_stream.payload.shape().size)),
                     dut.o_stream.ready.eq(AnySeq(1)),
                     dut.key_we.eq(AnySeq(1)), dut.key_addr.eq(AnySeq(len(dut.key_addr))),
                     dut.key_data.eq(AnySeq(w))]
        m.d.comb += [Assume(dut.key_data < q), Assume(dut.key_addr < p.n)]
        stream_rules(m, dut.i_stream, check=Assume, name="cmd")
        stream_rules(m, dut.o_stream, check=Assert, name="out")

        accept = dut.i_stream.valid & dut.i_stream.ready
        take = dut.o_stream.valid & dut.o_stream.ready
        ledger = Signal(range(l + 2))
        m.d.sync += ledger.eq(ledger + Mux(accept, l, 0) - take)
        with m.If(take):
            m.d.comb += Assert(ledger >= 1)
        with m.If(accept):
            m.d.comb += Assert(ledger <= 1)
        with m.If(dut.i_stream.ready):
            m.d.comb += Assert(dut.state == CoreState.IDLE)
        running = dut.state != CoreState.IDLE
        owed = Signal(range(l + 2))
        m.d.comb += owed.eq(Mux(running, l - dut.out_count, 0) + dut.o_stream.valid)
        m.d.comb += Assert(ledger == owed)
        m.d.comb += Assert(dut.out_count < l)
        with m.If(dut.state != CoreState.OUT):
            m.d.comb += Assert(dut.out_count == 0)

        if covers:
            blocks = Signal(2)
            with m.If(take & (ledger == 1) & (dut.state == CoreState.IDLE) & (blocks != 3)):
                m.d.sync += blocks.eq(blocks + 1)
            m.d.comb += [Cover(blocks == 1), Cover(take & (ledger == 1) & (dut.state == CoreState.IDLE))]
        return m

