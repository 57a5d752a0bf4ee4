"""One Keccak-f[1600] round of the hardware equals the golden model's round (combinational proof).

The hardware side is :class:`hhe_gen.cores.keccak.KeccakRounds` - the very block both cores use,
including its run-time selection of the iota constant by ``step``.  The reference side is the
golden model's own function :func:`hhe_gen.models.keccak.keccak_round`, *executed on Amaranth
values*: the model only uses ``^ & | << >>`` and integer constants on its lanes, so calling it
with 25 symbolic 64-bit lanes instead of 25 integers yields the model's round as a circuit.  The
two sides are written differently (the model shifts and masks integers lane by lane; the
hardware wires rotations with ``Cat`` in the FIPS 202 ``A[x][y]`` view), so this is an
equivalence of the model's code and the hardware's code, not of one transcription with itself.

Proven (BMC depth 1, the block is combinational), at full size:
for every 1600-bit state (``AnyConst``) and every ``step`` in ``0 .. 24/k - 1`` (``AnyConst``),
``KeccakRounds(k).o_state == keccak_rounds(state, step*k, k)`` bit for bit (lane by lane, the
model's lanes compared at their full width), the model's result for each step built from
``keccak_round``.  With k = 1 this is all 24 rounds (every iota constant, selected at run time by
the hardware's table); larger k chain k rounds.  ``steps`` restricts the round groups (``step`` is
then assumed to be one of them): the quick proof in the default test run checks groups 0, 1 and
23; the complete one (all 24, k = 1) takes a few minutes, most of it in building the model's 24
copies (about 1 MB of RTLIL each) and in Yosys, not in the solver.

How it is solved: the ``.sby`` script maps the design to single-bit gates and optimises it
(``techmap; opt -full``).  Constant shifts become wiring, masks and the zero upper bits of the
model's lanes fold away, ``x ^ 1`` becomes ``~x``, and ``opt_merge`` then finds that most gates
of the two sides are the same gates; what is left (the iota constants against the run-time
selection) goes to yices.  Every step is an equivalence-preserving Yosys pass, so the proof holds
for the design as written.
"""

from amaranth import Cat
from amaranth.asserts import AnyConst
from amaranth.hdl import Assert, Assume, Elaboratable, Module, Signal

from hhe_gen.cores.keccak.permutation import (STATE_BITS, KeccakRounds, check_rounds_per_cycle,
                                              state_lanes)
from hhe_gen.models import keccak as model
from hhe_gen.params.errors import ParameterError


class RoundHarness(Elaboratable):
    """Hardware rounds vs the model's rounds on a free state and a free round group."""

    def __init__(self, rounds_per_cycle: int = 1, steps=None, core=KeccakRounds):
        groups = 24 // check_rounds_per_cycle(rounds_per_cycle)
        self.steps = tuple(range(groups)) if steps is None else tuple(steps)
        if not self.steps or any(not 0 <= s < groups for s in self.steps):
            raise ParameterError("steps", steps, f"round groups in 0..{groups - 1}")
        self.dut = core(rounds_per_cycle)
        self.prove_depth = 1

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = dut = self.dut
        k, steps = dut.rounds_per_cycle, dut.steps
        state = Signal(STATE_BITS)
        m.d.comb += [state.eq(AnyConst(STATE_BITS)), dut.i_state.eq(state)]
        step = Signal(range(steps))
        if steps > 1:
            m.d.comb += [step.eq(AnyConst(range(steps))), dut.step.eq(step),
                         Assume(Cat(*[step == s for s in self.steps]).any())]
        hw = state_lanes(dut.o_state)
        lanes = state_lanes(state)
        # For every round group s, the model's k rounds s*k .. s*k+k-1 on the symbolic lanes, and
        # one assertion per lane: step == s -> hardware lane == model lane.  (No multiplexer of
        # 24 model results: Yosys's gate-level optimisation then shares what the copies have in
        # common, and the two sides meet by structural hashing where they compute the same gates.)
        for s in self.steps:
            out = lanes
            for i in range(s * k, s * k + k):
                if i > s * k:      # name the lanes between chained model rounds (plain wires)
                    wires = [Signal(len(v), name=f"model_r{i}_l{j}") for j, v in enumerate(out)]
                    m.d.comb += [w.eq(v) for w, v in zip(wires, out)]
                    out = wires
                out = model.keccak_round(out, i)       # the model, run on symbolic lanes
            for i, (want, got) in enumerate(zip(out, hw)):
                # the model's lanes are wider than 64 bits (its shifts grow them): compare whole
                # lanes, so a model lane with a non-zero bit above 63 would fail the proof too
                m.d.comb += Assert((step != s) | (want == got))
        return m


