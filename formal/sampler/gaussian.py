"""Gaussian CDT sampler: constant time (a miter) and the right value (a contract), full size.

``GaussianTimingHarness`` -- two copies of the complete :class:`GaussianCDT` (byte gatherer,
scan, optional residues) share every handshake input (input ``valid``, output ``ready``,
``clear``) but receive *independent* free bytes.  Proven by k-induction: in every cycle both
copies have the same ``i_stream.ready`` and ``o_stream.valid``, i.e. when a sample is produced,
and how many cycles it takes, is a function of the handshakes alone, never of the drawn value.
The inductive invariant (also asserted) is that the control state (buffered byte count, scan
busy/step, stage B's valid/first/last flags, output valid flags) of the copies is equal.  Covers: a sample comes out, and one
comes out while the next word is being scanned.

``CDTContractHarness`` -- one :class:`CDTScan` with free words and free back-pressure: the n-th
output (n free, ``AnyConst``) equals ``sign ? -c : c`` with ``c = #{k : T[k] < u}`` computed
directly from the n-th input word over the whole table.  Invariants: outputs + words in flight
(stage A, the last group in stage B, the output register) = inputs, and while the tracked word
is in the pipeline its u and sign, the comparison bits of the group in stage B and the count of
the groups before it are the right ones.  Full table, full word width (63-bit u for CKKS, 31-bit for
Rubato).
"""

from amaranth.asserts import AnyConst, AnySeq
from amaranth.hdl import Array, Assert, Assume, Cat, Const, Cover, Elaboratable, Module, Signal, Value

from hhe_gen.cores.sampler.gaussian import CDTScan, GaussianCDT

from ._props import check_source, drive_source

COUNTER = 6


class GaussianTimingHarness(Elaboratable):
    """Miter of two :class:`GaussianCDT` copies fed different bytes with identical handshakes."""

    def __init__(self, core=GaussianCDT, **params):
        self.a = core(**params)
        self.b = core(**params)
        self.cover_depth = 2 * (-(-self.a.word_bytes // self.a.in_bytes) + self.a.steps) + 8
        # deep enough that a sample can travel from the input to the output inside the base case
        self.prove_depth = -(-self.a.word_bytes // self.a.in_bytes) + self.a.steps + 5

    def elaborate(self, platform):
        m = Module()
        m.submodules.a, m.submodules.b = a, b = self.a, self.b
        clear, valid, ready = Signal(), Signal(), Signal()
        m.d.comb += [clear.eq(AnySeq(1)), valid.eq(AnySeq(1)), ready.eq(AnySeq(1))]
        for dut in (a, b):
            width = len(dut.i_stream.payload)
            m.d.comb += [dut.abort.eq(clear), dut.i_stream.valid.eq(valid), dut.o_stream.ready.eq(ready),
                         dut.i_stream.payload.eq(AnySeq(width))]
        # The producer keeps valid up until the transfer (its data may be anything: the two
        # copies see different bytes, so no payload stability is needed for this property).
        pending = Signal()
        m.d.sync += pending.eq(valid & ~a.i_stream.ready & ~clear)
        with m.If(pending & ~clear):
            m.d.comb += Assume(valid)
        check_source(m, a.o_stream, exempt=clear, tag="oa", free_ready=False)

        m.d.comb += [Assert(a.i_stream.ready == b.i_stream.ready),
                     Assert(a.o_stream.valid == b.o_stream.valid)]
        # Inductive invariant: equal control state, stage by stage.
        sa_, sb_ = a._scan, b._scan
        m.d.comb += [Assert(a._gather.count == b._gather.count),
                     Assert(sa_.busy == sb_.busy), Assert(sa_.step == sb_.step),
                     Assert(sa_.b_valid == sb_.b_valid), Assert(sa_.b_first == sb_.b_first),
                     Assert(sa_.b_last == sb_.b_last)]
        for sa, sb in zip(a._stages[1:], b._stages[1:]):
            m.d.comb += Assert(sa.o_stream.valid == sb.o_stream.valid)
        m.d.comb += [Cover(a.o_stream.valid & ready),
                     Cover(a.o_stream.valid & ready & a._scan.busy & a._scan.b_valid
                           & (Value.cast(a.o_stream.payload) != Value.cast(b.o_stream.payload)))]
        return m


class CDTContractHarness(Elaboratable):
    """The n-th output of a :class:`CDTScan` is the CDT sample of the n-th input word."""

    def __init__(self, table, word_bits, comparators=None, core=CDTScan):
        self.dut = core(table, word_bits, comparators)
        self.cover_depth = 2 * self.dut.steps + 8
        self.prove_depth = self.dut.steps + 5

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = dut = self.dut
        drive_source(m, dut.i_stream, tag="i")
        check_source(m, dut.o_stream, tag="o")
        table, c, steps = dut.table, dut.comparators, dut.steps

        n = Signal(COUNTER - 1)
        m.d.comb += n.eq(AnyConst(COUNTER - 1))
        n_in, n_out = Signal(COUNTER), Signal(COUNTER)
        m.d.comb += Assume(n_in < (1 << COUNTER) - 2)
        word = Signal(dut.word_bits)
        push = dut.i_stream.valid & dut.i_stream.ready
        pop = dut.o_stream.valid & dut.o_stream.ready
        with m.If(push):
            m.d.sync += n_in.eq(n_in + 1)
            with m.If(n_in == n):
                m.d.sync += word.eq(dut.i_stream.payload)
        with m.If(pop):
            m.d.sync += n_out.eq(n_out + 1)

        def count_below(u, entries):
            total = Const(0, range(len(table) + 1))
            for t in entries:
                total = total + (Const(t, len(u)) < u)
            return total

        u_ref, sign_ref = word[1:], word[0]
        magnitude = count_below(u_ref, table)
        expected = Signal(dut.value_shape)
        m.d.comb += expected.eq(magnitude)
        with m.If(sign_ref):
            m.d.comb += expected.eq(-magnitude)

        with m.If(pop & (n_out == n)):
            m.d.comb += Assert(dut.o_stream.payload == expected)

        # Invariants: in-flight bookkeeping, and where the tracked word is and what is known of it.
        groups = dut.groups()

        def group_bits(s):
            return Cat(*(Const(t, len(u_ref)) < u_ref for t in groups[s]))

        def before(s):      # entries of the groups before group s that are below u
            return count_below(u_ref, [t for g in groups[:s] for t in g])

        bits_of = Array(group_bits(s) for s in range(steps))
        count_before = Array(before(s) for s in range(steps))
        m.d.comb += Assert(n_in - n_out == dut.busy + (dut.b_valid & dut.b_last) + dut.o_stream.valid)
        with m.If(dut.b_valid & ~dut.b_last):
            m.d.comb += Assert(dut.busy)
        m.d.comb += Assert(dut.step < steps)
        with m.If(dut.o_stream.valid & (n_out == n)):
            m.d.comb += Assert(dut.o_stream.payload == expected)
        # The word whose last group is in B (the one after the output register's).
        in_b_last = dut.b_valid & dut.b_last & (n == n_out + dut.o_stream.valid)
        with m.If(in_b_last):
            m.d.comb += [Assert(dut.b_sign == sign_ref), Assert(dut.b_bits == bits_of[steps - 1]),
                         Assert(dut.b_first == (steps == 1))]
            if steps > 1:
                m.d.comb += Assert(dut.acc == count_before[steps - 1])
        # The word in A (the last one taken); B holds its previous group when step > 0.
        in_a = dut.busy & (n_in == n + 1)
        with m.If(in_a):
            m.d.comb += [Assert(dut.u == u_ref), Assert(dut.sign == sign_ref)]
            with m.If(dut.step > 0):
                prev = dut.step - 1
                m.d.comb += [Assert(dut.b_valid), Assert(~dut.b_last), Assert(dut.b_sign == sign_ref),
                             Assert(dut.b_bits == bits_of[prev]), Assert(dut.b_first == (prev == 0))]
                with m.If(prev > 0):
                    m.d.comb += Assert(dut.acc == count_before[prev])

        m.d.comb += [Cover(pop & (n_out == n) & (expected < 0)),
                     Cover(pop & (n_out == n) & (expected > 2))]
        return m
