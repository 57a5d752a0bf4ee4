"""The whole core equals the model: :class:`hhe_gen.cores.ntt.IterativeNtt` against
:func:`hhe_gen.models.ntt.ntt` / :func:`~hhe_gen.models.ntt.intt` on symbolic inputs.

Harness: the real core at N = 8 (q = 17) or N = 16 (q = 97) with P lanes; the input coefficients
are free (``AnyConst``, assumed < q); one command (the proven direction) is given in the first
cycle, the input beats follow at full rate and the output is taken at full rate.  Every output
beat is asserted equal to the model's transform of the same symbolic inputs, and the N/P output
beats and ``done`` must arrive within the command's exact cycle count.  Bounded model check over
the whole command (from reset: complete for this size, nothing in the core depends on the data).

The expected outputs are either the model's butterfly network as expressions (``spec="network"``,
:func:`butterfly_network`, checked against the model in the tests) or the matrix product
``out[i] = sum_j M[i][j] * a[j] mod q`` with M[i][j] = the model's output i for the unit input e_j
(``spec="matrix"``).  Solver limits measured here (16-bit Barrett butterflies, the minimum width
of cores/arith):

* ``inputs="free"`` (every coefficient free): the matrix spec did not get through the first output
  beat in 10 minutes; the network spec proves N = 8's output beat 0 in 23 s and beat 1 in 7
  minutes, beat 2 was still open after 8 minutes - not a completed proof;
* ``inputs="impulse"`` (one free coefficient value at a free position, zeros elsewhere: the core's
  response to every scaled unit vector): N = 8, P = 2 forward 135 s, inverse 204 s.  Since the
  model is linear, this pins the core's output on a basis of the input space; that the core is
  itself linear (that its butterflies compute exact residues for all operands < q) is not part of
  this proof - it rests on the butterflies' own checks (cores/arith tests and proofs) and on the
  simulation tests against the model on random inputs.

Compositional route (``butterflies="spec"``, free inputs): the blocker above is the solver seeing
through 16-bit Barrett multipliers, not the NTT.  So the proof is split in two:

1. (here) the core elaborated with :class:`~.spec_butterfly.SpecButterfly` in every lane - the
   real unit's ports and latency, results computed exactly with ``%`` at the prime's own width
   (5 bits for q = 17, 7 for q = 97), the ports keep the core's 16 bits - equals the model's
   transform for FREE inputs (every coefficient ``AnyConst`` < q), every output beat, by BMC over
   the whole command from reset (complete: one command, nothing depends on the data);
2. (cited) the real :class:`~hhe_gen.cores.arith.Butterfly` computes the specification
   butterfly's function for operands < q: its golden model (:mod:`hhe_gen.models.butterfly`) is
   the specification's table, the unit is simulated against the model (tests/cores/arith) and
   its reducers are proven in ``hhe-gen prove arith`` (:mod:`hhe_gen.formal.arith`: bit-level
   a*b mod q at reduced widths, z3 bounds at full width).

Together: the core with its real butterflies equals the model on all inputs at these sizes -
modulo the cited butterfly proofs' own scope (their widths).  What part 1 covers that the schedule
proofs do not: the slot-to-lane wiring, the twiddle ROM contents and addressing, the inverse's
halving stages (N^-1) and the load and unload order, each for every input value.  Its mutant
(``mutant="rom-word"``: psi_brv[1] stored + 1) must be refuted.  Measured here (loaded machine):
see :mod:`.proofs`.

This covers what the schedule proof (:mod:`.schedule`) does not: the routing of the data between
banks and lanes, the butterflies (with the inverse's halvings), the twiddle ROM contents, the load
and the unload order.
"""

from __future__ import annotations

import contextlib

from amaranth.asserts import AnyConst
from amaranth.hdl import Assert, Assume, Cover, Fragment, Signal
from amaranth.lib import wiring

from hhe_gen.models.ntt import intt, ntt

from ..common.sby import formal_module
from .spec_butterfly import SpecButterflyArray

__all__ = ["EquivalenceHarness", "transform_matrix", "butterfly_network"]


def transform_matrix(n: int, q: int, inverse: bool) -> list[list[int]]:
    """M[i][j] = output i of the model's transform of the unit vector e_j."""
    f = intt if inverse else ntt
    cols = [f([int(i == j) for i in range(n)], q) for j in range(n)]
    return [[cols[j][i] for j in range(n)] for i in range(n)]


def butterfly_network(a, q: int, inverse: bool, mulmod, addmod, submod) -> list:
    """The model's transform (:func:`~hhe_gen.models.ntt.ntt` / ``intt`` loop structure) in the
    hardware's order of operations, over any values: the inverse's butterflies halve both results
    (the butterfly's ``gsh``: N^-1 = 2^-log2 N spread over the stages) and its last stage uses
    psi^-brv(1) alone (equal to the model's folded ``last_inv`` by linearity; checked against the
    model in the tests).  ``mulmod(x, const)``, ``addmod``,
    ``submod`` give the arithmetic (ints in Python, Amaranth expressions in the harness)."""
    from hhe_gen.models.ntt import ntt_tables
    n = len(a)
    t = ntt_tables(n, q)
    a = list(a)
    if not inverse:
        half, m = n, 1
        while m < n:
            half //= 2
            for i in range(m):
                w = t.psi_brv[m + i]
                for j in range(2 * i * half, 2 * i * half + half):
                    u, v = a[j], mulmod(a[j + half], w)
                    a[j], a[j + half] = addmod(u, v), submod(u, v)
            m *= 2
        return a
    inv2 = pow(2, -1, q)
    span, m = 1, n
    while m > 1:
        h = m // 2
        for i in range(h):
            w = t.psi_inv_brv[h + i]
            for j in range(2 * i * span, 2 * i * span + span):
                u, v = a[j], a[j + span]
                a[j], a[j + span] = mulmod(addmod(u, v), inv2), mulmod(mulmod(submod(u, v), w), inv2)
        span *= 2
        m = h
    return a


@contextlib.contextmanager
def _wrong_rom_word(inverse: bool):
    """IterativeNtt elaborates with one wrong twiddle ROM word: the twiddle index 1 of prime 0 in
    the given direction (stage 0's twiddle forward, the last stage's inverse) plus 1 mod q."""
    import hhe_gen.cores.ntt.iterative as it
    orig = it.twiddle_rom

    def wrong(n, lanes, moduli, factors):
        banks = orig(n, lanes, moduli, factors)
        row = (n // lanes) * int(inverse) + 1 // lanes
        banks[1 % lanes][row] = (banks[1 % lanes][row] + 1) % moduli[0]
        return banks
    it.twiddle_rom = wrong
    try:
        yield
    finally:
        it.twiddle_rom = orig


class EquivalenceHarness:
    """One command of the proven direction on free inputs; every output checked (module docstring).

    ``spec``: "matrix" (each output as sum_j M[i][j] a[j] mod q) or "network" (the butterfly
    network of :func:`butterfly_network` as expressions: the same intermediate values as the
    core's butterflies, which lets the solver's sweeping match them).
    ``inputs``: "free" (every coefficient free) or "impulse" (one coefficient, at a free position,
    with a free value; the others 0: the core's response to every scaled unit vector).
    ``mutant``: True / "direction": compare with the other direction's transform; "rom-word":
    elaborate the core with one wrong twiddle ROM word (both must be refuted).
    ``butterflies``: "real" (the lanes' :class:`~hhe_gen.cores.arith.Butterfly`) or "spec"
    (:class:`~.spec_butterfly.SpecButterfly`, the compositional proof of the module docstring).
    """

    def __init__(self, n: int, q: int, lanes: int, inverse: bool, banking: str = "dual", mutant=False,
                 spec: str = "network", inputs: str = "free", butterflies: str = "real"):
        from hhe_gen.cores.ntt import IterativeNtt
        if butterflies not in ("real", "spec"):
            raise ValueError(f"butterflies {butterflies!r} is not 'real' or 'spec'")
        if mutant not in (False, True, "direction", "rom-word"):
            raise ValueError(f"mutant {mutant!r} is not False, 'direction' (True) or 'rom-word'")
        self.n, self.q, self.lanes, self.inverse = n, q, lanes, bool(inverse)
        self.dut = IterativeNtt(n, lanes, q, banking=banking,
                                butterflies="external" if butterflies == "spec" else "own")
        self.spec_inverse = self.inverse != (mutant in (True, "direction"))
        self.rom_mutant = mutant == "rom-word"
        self.spec, self.inputs, self.butterflies = spec, inputs, butterflies

    @property
    def depth(self) -> int:
        """The command's cycles plus 3 (reset, the command cycle, one step after ``done``)."""
        return self.dut.command_cycles(self.inverse) + 3

    def build(self):
        dut, n, q, P = self.dut, self.n, self.q, self.lanes
        w = dut.qbits
        m, _ = formal_module()
        with _wrong_rom_word(self.inverse) if self.rom_mutant else contextlib.nullcontext():
            m.submodules.dut = Fragment.get(dut, None)      # elaborated under the substitution
        if self.butterflies == "spec":
            m.submodules.lanes = lanes = SpecButterflyArray(P, dut.butterfly_plan)
            wiring.connect(m, dut.lanes_port, lanes.lanes_port)
        a = [Signal(w, name=f"a{j}") for j in range(n)]
        for v in a:
            m.d.comb += [v.eq(AnyConst(w)), Assume(v < q)]
        if self.inputs == "impulse":         # one free coefficient at a free position, the rest 0
            pos = Signal(range(n), name="impulse_pos")
            m.d.comb += pos.eq(AnyConst(range(n)))
            for j, v in enumerate(a):
                m.d.comb += Assume((pos == j) | (v == 0))
        if self.spec == "matrix":
            matrix = transform_matrix(n, q, self.spec_inverse)
            values = [sum(c * v for c, v in zip(row, a) if c) % q for row in matrix]
        else:
            count = iter(range(10 ** 6))

            def settle(v):
                s = Signal(w, name=f"spec{next(count)}")
                m.d.comb += s.eq(v)
                return s
            values = butterfly_network(a, q, self.spec_inverse, lambda x, c: settle(x * c % q),
                                       lambda x, y: settle((x + y) % q), lambda x, y: settle((x + q - y) % q))
        expected = []
        for i, v in enumerate(values):
            e = Signal(w, name=f"expected{i}")
            m.d.comb += e.eq(v)
            expected.append(e)

        sent = Signal(name="sent")
        m.d.sync += sent.eq(sent | dut.cmd.ready)
        m.d.comb += [dut.cmd.valid.eq(~sent), dut.cmd.payload.inverse.eq(int(self.inverse)),
                     dut.cmd.payload.sel.eq(0), dut.o_stream.ready.eq(1)]
        beats = dut.beats
        in_beat = Signal(range(beats + 1), name="in_beat")
        m.d.comb += dut.i_stream.valid.eq(sent & (in_beat < beats))
        with m.Switch(in_beat):
            for b in range(beats):
                with m.Case(b):
                    m.d.comb += [dut.i_stream.payload[p].eq(a[b * P + p]) for p in range(P)]
        with m.If(dut.i_stream.valid & dut.i_stream.ready):
            m.d.sync += in_beat.eq(in_beat + 1)

        out_beat = Signal(range(beats + 1), name="out_beat")
        with m.If(dut.o_stream.valid & dut.o_stream.ready):
            m.d.sync += out_beat.eq(out_beat + 1)
            with m.Switch(out_beat):
                for b in range(beats):
                    with m.Case(b):
                        m.d.comb += [Assert(dut.o_stream.payload[p] == expected[b * P + p], f"output {b * P + p}")
                                     for p in range(P)]
            m.d.comb += Assert(out_beat < beats, "more output beats than N/P")
        finished = Signal(name="finished")
        with m.If(dut.done):
            m.d.sync += finished.eq(1)
            m.d.comb += Assert(out_beat == beats - 1, "done with the last beat")
        cycle = Signal(range(self.depth + 2), name="cycle")
        m.d.sync += cycle.eq(cycle + 1)
        with m.If(cycle == self.depth - 1):
            m.d.comb += Assert(finished, "the command completes within its cycle count")
        m.d.comb += Cover(dut.done)
        return m
