"""ShakeXof: no output before the message is absorbed, a clean restart, stream rules.

Harness: the absorb stream (beats with ``last`` and ``nbytes``), the consumer's ``ready``, the
``abort`` strobe and (``variant="both"``) the ``shake256`` port are free (``AnySeq``); the
absorb stream obeys the stream rules except in a restart cycle.  Black-box monitors, driven only by
the ports: ``ended`` (a ``last`` beat was taken since the last restart or reset) and ``since``
(cycles since that beat, saturating).

Proven by k-induction at full size (the 1600-bit state register and the real round logic are in
the design; the configuration is the harness's parameters):

* output only after absorbing is finished: ``o_stream.valid -> ended and since >= n + 2``, with
  n the permutation's cycles, 24/k or 24 ceil(5/p) with p planes per cycle (the last beat, the
  padding cycle and a whole permutation come first);
* absorbing stops at the last beat: ``ended -> not i_stream.ready`` (until a restart);
* the two streams are never active together: ``not (i_stream.ready and o_stream.valid)``;
* restart is clean: in the cycle after a restart every register of the core equals its reset
  value - the state register is zero, the FSM is in ABSORB, the block position and the round
  counter are zero, ``first`` is set, ``npad`` is zero (and the latched variant is cleared) - so
  the next message is processed exactly as after reset, with nothing kept from the previous one;
* stream rules on ``o_stream``: a beat offered and not taken stays offered, unchanged, unless a
  restart aborts the message;
* inductive invariants tying the monitors and the control registers (``ended`` equals "the FSM
  is past ABSORB", position and round counter in range, the FSM in a defined state).

Covers: an output beat; an output beat taken after back-pressure; an output after a restart in
the middle of squeezing; and, where a block and two permutations take at most 100 cycles
(slots + 2n <= 100, with a ring XOF's padding turns added: W = 4 or 8 with whole rounds), the
second output block (past a squeeze permutation) and a message of more than one block.

The round logic is a *cut point* in the proof (``cutpoint top.dut/rounds top.dut/planes`` in
``sponge.sby``, whichever the configuration has):
its output is a free value in every cycle.  The properties above are about control and hold for
any permutation, so this loses nothing and keeps the induction small (seconds); that the
permutation is Keccak-f[1600] is the ``round`` harness's and the simulation tests' business.
"""

from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Cover, Elaboratable, Module, Mux, Signal

from hhe_gen.cores.keccak.xof import RATES, Phase, ShakeXof

from ._props import assert_source, assume_source


class SpongeHarness(Elaboratable):
    """Formal harness around one :class:`ShakeXof` configuration."""

    def __init__(self, variant=256, beat_bytes: int = 8, rounds_per_cycle: int = 24,
                 core=ShakeXof, planes_per_cycle: int = 5, ring: bool = False):
        self.dut = core(variant, beat_bytes=beat_bytes, rounds_per_cycle=rounds_per_cycle,
                        planes_per_cycle=planes_per_cycle, ring=ring)
        n = self.dut.perm_cycles
        # the invariants make the properties 1-inductive; the depth is for the base case, which
        # then covers a whole short message (last beat, padding, permutation, first output)
        self.prove_depth = n + 4
        # the block-crossing covers need about slots + 2n steps (and a ring XOF's padding turns, up
        # to slots - 1 in each of two messages); past about 100 steps (W = 1 or 2: 68 .. 168 beats
        # per block; planes: n = 48 .. 120) the cover search outgrows a proof run, so they are left
        # out there (see the docstring)
        pad_turns = 2 * (self.dut.slots - 1) if ring else 0
        self.long_covers = self.dut.slots + 2 * n + pad_turns <= 100
        self.cover_depth = (self.dut.slots if self.long_covers else 0) + 2 * n + 8 + pad_turns

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = dut = self.dut
        n = dut.perm_cycles
        i_s, o_s = dut.i_stream, dut.o_stream
        restart = Signal()
        m.d.comb += [restart.eq(AnySeq(1)), dut.abort.eq(restart)]
        if dut.variant == "both":
            m.d.comb += dut.shake256.eq(AnySeq(1))
        assume_source(m, i_s, abort=restart, tag="i")
        assert_source(m, o_s, abort=restart, tag="o")

        take_in = i_s.valid & i_s.ready
        take_out = o_s.valid & o_s.ready

        # black-box monitors
        ended = Signal()
        SATURATE = 2 * n + 7
        since = Signal(range(SATURATE + 1))
        with m.If(restart):
            m.d.sync += [ended.eq(0), since.eq(0)]
        with m.Elif(take_in & i_s.payload.last):
            m.d.sync += [ended.eq(1), since.eq(1)]
        with m.Elif(ended & (since != SATURATE)):
            m.d.sync += since.eq(since + 1)

        m.d.comb += [
            Assert(~o_s.valid | (ended & (since >= n + 2))),
            Assert(~ended | ~i_s.ready),
            Assert(~(i_s.ready & o_s.valid)),
        ]

        # restart is clean: every register back at its reset value
        after_restart = Signal()
        m.d.sync += after_restart.eq(restart)
        with m.If(after_restart):
            checks = [dut.state == 0, dut.phase == Phase.ABSORB, dut.pos == 0, dut.step == 0,
                      dut.first == 1, dut.npad == 0, dut.pad_pending == 0]
            if dut.variant == "both":
                checks.append(dut.is256 == 0)
            if dut.groups > 1:
                checks += [dut.group == 0, dut.rnd == 0]
            m.d.comb += [Assert(c) for c in checks]

        # inductive invariants (with them the properties are 1-inductive; see prove_depth)
        permuting = ((dut.phase == Phase.PERM_ABSORB) | (dut.phase == Phase.PERM_PAD) |
                     (dut.phase == Phase.PERM_SQUEEZE))
        past_absorb = ((dut.phase == Phase.PERM_PAD) | (dut.phase == Phase.PAD) |
                       (dut.phase == Phase.PERM_SQUEEZE) | (dut.phase == Phase.SQUEEZE))
        m.d.comb += [
            Assert(dut.phase.as_value() <= Phase.SQUEEZE.value),
            Assert(ended == past_absorb),
            Assert(ended == (since != 0)),
            Assert(since <= SATURATE),
            Assert(dut.step <= n - 1),
            Assert(permuting | (dut.step == 0)),
            Assert(~dut.first | ((dut.phase == Phase.ABSORB) & (dut.pos == 0))),
        ]
        if dut.groups > 1:      # planes: the round and its group count the permutation's cycles
            m.d.comb += [Assert(dut.group <= dut.groups - 1), Assert(dut.rnd <= 23),
                         Assert(dut.rnd * dut.groups + dut.group == dut.step)]
        if dut.variant == "both":
            last_slot = Mux(dut.is256, RATES[256] // dut.beat_bytes - 1,
                            RATES[128] // dut.beat_bytes - 1)
            m.d.comb += Assert(dut.pos <= last_slot)
        else:
            m.d.comb += Assert(dut.pos <= dut.slots - 1)
        with m.If(dut.phase == Phase.PERM_PAD):
            m.d.comb += Assert(since == dut.step + 1)
        if dut.ring:        # PAD turns the ring for as many cycles as the block's end is away
            with m.If(dut.phase == Phase.PAD):
                m.d.comb += Assert(since >= 1)
            with m.If(dut.phase == Phase.PERM_SQUEEZE):
                m.d.comb += Assert(since >= dut.step + 2)
        else:
            with m.If(dut.phase == Phase.PAD):
                m.d.comb += Assert((since == 1) | (since == n + 1))
            with m.If((dut.phase == Phase.PERM_SQUEEZE) & (since < n + 2)):
                m.d.comb += Assert(since == dut.step + 2)
        with m.If(dut.phase == Phase.SQUEEZE):
            m.d.comb += Assert(since >= n + 2)

        # covers
        held = Signal()
        m.d.sync += held.eq(o_s.valid & ~o_s.ready & ~restart)
        outs = Signal(range(dut.slots + 2))
        ins = Signal(range(dut.slots + 2))
        squeezed_then_restarted = Signal()
        with m.If(restart):
            m.d.sync += [outs.eq(0), ins.eq(0)]
            with m.If(dut.phase == Phase.SQUEEZE):
                m.d.sync += squeezed_then_restarted.eq(1)
        with m.Else():
            with m.If(take_out & (outs != dut.slots + 1)):
                m.d.sync += outs.eq(outs + 1)
            with m.If(take_in & (ins != dut.slots + 1)):
                m.d.sync += ins.eq(ins + 1)
        m.d.comb += [
            Cover(take_out),
            Cover(take_out & held),
            Cover(take_out & squeezed_then_restarted),
        ]
        if self.long_covers:
            m.d.comb += [
                Cover(take_out & (outs == dut.slots)),
                Cover(take_out & (ins == dut.slots + 1)),
            ]
        return m
