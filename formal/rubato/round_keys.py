"""Round-constant intake never uses a rejected word: the core's round-key path
(:class:`hhe_gen.cores.rubato.round_keys.RoundKeySchedule`: RubatoRoundConstants -> key[i]*rc
multiplier -> round-key banks) with the XOF replaced by a free word stream.

Harness (the real component at a small modulus, :func:`.datapath.small_params`: Par-80S's n = 16,
r = 2, so all (r+1)*n = 48 constants of a block, with q a small prime; 32-bit candidate words
masked to q_bits as in the real sets):

* free environment: the XOF words (``AnySeq`` under the stream rules, also across a ``clear``),
  ``clear`` (a new block in any cycle), key writes (any address, any value < q, in any cycle);
* one constant index ``J`` (``AnyConst``, < 48) is followed: the harness counts the candidate
  words the rejection filter takes since the last ``clear`` whose masked value is < q, keeps the
  J-th such value ``value_J``, and keeps the key word ``J mod n`` as it is in the key memory when
  constant J is taken (its own copy of that one key word, updated by the key writes);
* asserted: every multiplication operand that enters the multiplier is ``< q`` (no rejected
  word is multiplied); the multiplier's operands for constant J are (that key word, ``value_J``);
  every bank write is constant number ``rk_count`` (writes in order, none skipped or repeated)
  at bank ``J mod L``, address ``J div L``; the write of constant J carries
  ``key * value_J mod q`` (a plain Amaranth ``%`` of the harness's own product, not the
  multiplier);
* invariants that make it k-inductive (each also asserted): the filter holds an accepted value
  exactly when the harness's count exceeds the constants taken, ``rc_count == addr*L + bank``,
  ``key_index == rc_count mod n``, ``rk_count`` + the valid multiplier stages ``== rc_count``,
  every valid stage's (bank, addr) is its constant's, the key memory's word ``J mod n`` equals the
  harness's copy (an extra combinational read port), the filter's held value is ``value_J`` when
  it is constant J.

With ``multiplier="none"`` (the crypto unit's Rubato: ARK multiplies on the array) the same
harness with the write of constant J asserted to carry ``value_J`` itself, and the key banks'
word ``J mod n`` (bank ``J mod L``, address ``J div L``) equal to the harness's copy.

Covers: constant J written; a block's last round key written (``rk_count == 48``); a
rejected candidate immediately followed by an accepted one that is multiplied.
"""

from __future__ import annotations

from amaranth.asserts import AnyConst, AnySeq
from amaranth.hdl import Assert, Assume, Cover, Signal

from hhe_gen.cores.unused import mark_unused
from ..common.sby import formal_module
from ..common.stream import stream_rules
from .datapath import small_params

__all__ = ["RoundKeyHarness"]


class RoundKeyHarness:
    """The round-key path with free XOF words, a followed constant index J; see the module doc.

    ``mutant``: "loose-filter" builds the schedule with a rejection filter for the next prime
    above q (same q_bits), so masked words q .. q' - 1 get through to the multiplier mod q
    (must be refuted).
    """

    def __init__(self, q: int = 17, lanes: int = 2, multiplier: str = "barrett", mutant: str | None = None):
        from hhe_gen.cores.rubato.round_keys import RoundKeySchedule

        self.params = small_params(q)
        self.dut = RoundKeySchedule(self.params, lanes, multiplier=multiplier)
        self.mutant = mutant
        if mutant == "loose-filter":
            import dataclasses

            from hhe_gen.cores.sampler import RubatoRoundConstants
            loose = next(x for x in range(q + 2, 1 << q.bit_length()) if all(x % d for d in range(2, x)))
            mark_unused(self.dut.rc)
            self.dut.rc = RubatoRoundConstants(dataclasses.replace(self.params, q=loose), in_bytes=4)
        elif mutant is not None:
            raise ValueError(f"unknown mutant {mutant!r}")

    def build(self):
        m, _ = formal_module()
        dut = self.dut
        m.submodules.dut = dut
        p, L = self.params, dut.lanes
        q, n, w, total = p.q, p.n, p.q_bits, dut.total
        mask = (1 << w) - 1

        # -- free environment --------------------------------------------------------------------
        m.d.comb += [dut.abort.eq(AnySeq(1)), dut.i_stream.valid.eq(AnySeq(1)),
                     dut.i_stream.payload.eq(AnySeq(len(dut.i_stream.payload))),
                     dut.key_we.eq(AnySeq(1)), dut.key_addr.eq(AnySeq(len(dut.key_addr))),
                     dut.key_data.eq(AnySeq(w)), dut.rk_addr.eq(AnySeq(len(dut.rk_addr)))]
        m.d.comb += [Assume(dut.key_data < q), Assume(dut.key_addr < n), Assume(dut.rk_addr < dut.depth)]
        stream_rules(m, dut.i_stream, check=Assume, name="xof")

        # -- the followed constant J and its key word ---------------------------------------------
        J = Signal(range(total), name="J")
        m.d.comb += [J.eq(AnyConst(len(J))), Assume(J < total)]
        K = J % n
        key_copy = Signal(w)                    # key word K as the key memory holds it
        with m.If(dut.key_we & (dut.key_addr == K)):
            m.d.sync += key_copy.eq(dut.key_data)
        if dut.multiplier is not None:
            key_port = dut.key_memory.read_port(domain="comb")
            m.d.comb += [key_port.addr.eq(K), Assert(key_port.data == key_copy)]
        else:                                   # word K in bank K mod L at K div L
            for a, mem in enumerate(dut.key_banks):
                key_port = mem.read_port(domain="comb")
                m.d.comb += key_port.addr.eq(K // L)
                with m.If(K % L == a):
                    m.d.comb += Assert(key_port.data == key_copy)

        # -- accepted candidates at the rejection filter's input -----------------------------------
        cand = dut.rc._filter.i_stream
        taken = cand.valid & cand.ready & ~dut.abort
        masked = Signal(w)
        m.d.comb += masked.eq(cand.payload & mask)
        accepted = taken & (masked < q)
        acc = Signal(range(total + 2))          # accepted candidates since the last clear
        value_j, have_j = Signal(w), Signal()
        key_j = Signal(w)                       # key word K when constant J was taken
        rc = dut.rc.o_stream
        take = rc.valid & rc.ready & ~dut.abort
        with m.If(dut.abort):
            m.d.sync += [acc.eq(0), have_j.eq(0)]
        with m.Elif(accepted):
            m.d.sync += acc.eq(acc + 1)
            with m.If(acc == J):
                m.d.sync += [value_j.eq(masked), have_j.eq(1)]
        with m.If(take & (dut.rc_count == J)):
            m.d.sync += key_j.eq(key_copy)

        # -- invariants ------------------------------------------------------------------------------
        with m.If(~dut.abort):          # (the sampler's output valid is masked by clear)
            m.d.comb += Assert(acc == dut.rc_count + rc.valid)
        m.d.comb += [Assert(have_j == (acc > J)),
                     Assert(dut.rc_count == dut.addr * L + dut.bank), Assert(dut.bank < L),
                     Assert(dut.key_index == dut.rc_count % n), Assert(dut.rc_count <= total)]
        with m.If(rc.valid):
            m.d.comb += Assert(rc.payload < q)
            with m.If(dut.rc_count == J):
                m.d.comb += Assert(rc.payload == value_j)
        stages = [(dut.mul_valid, dut.mul_bank, dut.mul_addr)] + list(dut.pipeline)
        in_flight = sum(v for v, _, _ in stages)
        m.d.comb += Assert(dut.rk_count + in_flight == dut.rc_count)
        for k, (v, b, a) in enumerate(stages):
            later = sum((vv for vv, _, _ in stages[k + 1:]), 0)
            with m.If(v):       # constant number rk_count + (valid stages after this one)
                m.d.comb += Assert(a * L + b == dut.rk_count + later)
            if k >= 1:
                with m.If(v & (a * L + b == J)):
                    m.d.comb += Assert(have_j)
        # -- the properties -----------------------------------------------------------------------
        with m.If(dut.mul_valid):
            m.d.comb += Assert(dut.mul_rc < q)                      # no rejected word multiplied
            with m.If(dut.mul_addr * L + dut.mul_bank == J):
                m.d.comb += [Assert(have_j), Assert(dut.mul_rc == value_j)]
                if dut.multiplier is not None:
                    m.d.comb += Assert(dut.multiplier.a == key_j)
        expected = Signal(w)             # "none": the constant itself (the datapath multiplies)
        m.d.comb += expected.eq((key_j * value_j) % q if dut.multiplier is not None else value_j)
        index = dut.write_addr * L + dut.write_bank
        with m.If(dut.write_en):
            m.d.comb += [Assert(index == dut.rk_count), Assert(index < total)]
            with m.If(index == J):
                m.d.comb += [Assert(have_j), Assert(dut.write_data == expected)]

        # -- covers ----------------------------------------------------------------------------------
        rejected = taken & (masked >= q)
        prev_rejected = Signal()
        m.d.sync += prev_rejected.eq(rejected)
        m.d.comb += [Cover(dut.write_en & (index == J)), Cover(dut.rk_count == total),
                     Cover(prev_rejected & accepted)]
        return m
