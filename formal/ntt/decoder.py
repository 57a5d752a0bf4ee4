"""The schedule of the iterative NTT proven on its address decoder alone, for every stage and cycle.

:class:`hhe_gen.cores.ntt.address_decoder.NttAddressDecoder` is combinational: its inputs are the
stage s, the cycle position c' inside the stage and the direction; its outputs say which bank
serves which slot of the cycle's coset at which address, and which twiddle index each lane uses.
The harness makes s (< log2 N), the direction, two cycle positions c1, c2 (< N/2P) and two bank
numbers b1, b2 free (``AnyConst``) and feeds (s, c1) to one decoder and (s, c2) to a second copy;
with no state anywhere, a bounded model check of depth 1 is a complete proof (one SAT query: no
assignment of the free inputs violates an assertion).

Specification (independent of the decoder; from the models' memory plan,
:mod:`hhe_gen.cores.ntt.schedule` and :mod:`hhe_gen.cores.ntt.single_port`):

* k = n-1-s forward, s inverse; G = the B = log2 2P consecutive bit positions containing k
  (``_group_bits``), G0 its lowest; the model's stage visits in cycle c' the coset whose bits
  outside G, compressed, equal c = c' (dual) or the single-port order of c' (``inverse_order``
  maps an index to the position of its coset, as in :mod:`.schedule`);
* index x lives in bank(x) = XOR of the B'-bit chunks of x at address x >> B' (B' = B dual, B + 1
  single), so the index a bank b serves at address a is ``plan_index(b, a)``: the chunks above
  the first are a's, the first makes the XOR equal b (the inverse of the load's placement);
* the slot of x in its coset is the bits of x in G; lane l takes the pair whose lower index has
  the bits G minus {k} equal to l; its twiddle index is N/2^(k+1) + (lo >> (k+1)).

Properties (``PROPERTIES``), for the served index y = plan_index(b1, addr[b1]) of a used bank:

* ``conflict``: exactly 2P banks are used and two different used banks serve two different slots
  - the 2P operands of the cycle come through 2P different ports, and no port serves two;
* ``plan``: y is in the coset the model's stage visits in this cycle, the bank serves y's slot
  (``slot[b]`` = the bits of y in G), ``bb`` = bank(base) for the coset's base (y without its G
  bits; the core routes slot j to bank bb XOR bank(j << G0)), ``k`` and ``kpos`` = k - G0 are the
  stage's - i.e. the decoder's (bank, address) of every index is where the load wrote it;
* ``complete``: (c1, b1) != (c2, b2), both used -> different served indices: injective on
  N/2P cycles x 2P used banks = N pairs (cycle, bank), so every index is served exactly once per
  stage (N/2 pairs, each once);
* ``pair``: the partner y XOR 2^k is served in the same cycle, by its own bank(y ^ 2^k) at its
  address, in slot slot[b1] XOR 2^(k-G0): the issued pair is a pair of the stage (the two indices
  differ exactly in bit k);
* (together, ``conflict`` + ``plan``: 2P used banks with distinct slots, each serving an index of
  the cycle's coset (2P indices) in its own slot - so every index of the coset is served, each
  by its own bank);
* ``twiddle``: when y is a lower index (bit k = 0), its lane's ``tw_idx`` is the model's
  N/2^(k+1) + (y >> (k+1)), ``tw_bank`` of the lane is that mod P and ``t0 >> log2 P`` is that
  >> log2 P (the lanes' ROM words are one aligned block at address t0 >> log2 P).

What the combination with the whole-core k-induction (:mod:`.schedule`, every N = 2^3 .. 2^10 and
every P, see :mod:`.proofs`) proves: this module establishes, for the same sizes and both
bankings, that the decoder's outputs for every (stage, cycle) are the memory plan's
conflict-free, complete schedule with the model's twiddle indices - one SAT query per
configuration, no induction needed (the decoder has no state).  The whole-core proof establishes
the rest: that the controller feeds the read decoder every (stage, cycle) exactly once at the
plan's start cycles, the write decoder the same values D cycles later, that the memories' ports
take the decoders' addresses and enables, and that the stage overlap is safe.  Not covered by
either: the slot-to-lane wiring (:mod:`.equivalence`).

Mutants (``MUTANTS``, each must FAIL its one property): ``slot-msb`` (the top slot bit stuck at 0:
two banks serve one slot - conflict), ``bank-low-chunk`` (bank function = the low chunk only, not
the XOR - plan), ``cycle-msb`` (the cycle position's top bit ignored: two cycles issue one coset -
complete), ``group-shift`` (the coset group G one position too low for k >= B, so k falls outside
it - pair), ``twiddle-offset`` (the lanes' twiddle offsets dropped - twiddle).
"""

from __future__ import annotations

import contextlib
from dataclasses import replace

from amaranth.asserts import AnyConst
from amaranth.hdl import Array, Assert, Assume, Cat, Const, Fragment, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.ntt.schedule import _group_bits
from hhe_gen.cores.unused import mark_unused

from ..common.sby import formal_module
from .schedule import inverse_order

__all__ = ["DecoderHarness", "PROPERTIES", "MUTANTS", "spec_bank", "plan_index"]

PROPERTIES = ("conflict", "plan", "complete", "pair", "twiddle")
#: mutant -> the property it must violate
MUTANTS = {"slot-msb": "conflict", "bank-low-chunk": "plan", "cycle-msb": "complete",
           "group-shift": "pair", "twiddle-offset": "twiddle"}


def spec_bank(x, n_log: int, bb: int):
    """bank(x) = XOR of the bb-bit chunks of x (the memory plan; written here, not imported)."""
    out = x[0:bb]
    for lo in range(bb, n_log, bb):
        out = out ^ x[lo:min(lo + bb, n_log)]
    return out


def plan_index(bank, addr, n_log: int, bb: int):
    """The index the memory plan stores in bank ``bank`` at address ``addr`` (the inverse of
    (bank(x), x >> B')): chunks 1.. are the address's bits, chunk 0 makes the XOR equal ``bank``."""
    acc = bank
    for lo in range(0, n_log - bb, bb):
        acc = acc ^ addr[lo:min(lo + bb, n_log - bb)]
    return Cat(acc, addr) if n_log > bb else acc


def _popcount(bits):
    """The number of set bits (a balanced adder tree: a flat sum of 1024 terms overflows Python's
    recursion limit in Amaranth)."""
    terms = list(bits)
    while len(terms) > 1:
        terms = [terms[i] + terms[i + 1] if i + 1 < len(terms) else terms[i] for i in range(0, len(terms), 2)]
    return terms[0]


class _Wrapped(wiring.Component):
    """A mutant: the real decoder with one input or output altered (``cycle-msb``, ``slot-msb``)."""

    def __init__(self, real, mutant):
        self.real, self.mutant = real, mutant
        for name in ("n", "n_log", "lanes", "banking", "coset_bits", "bank_bits", "banks", "rows", "crows"):
            setattr(self, name, getattr(real, name))
        members = {name: (In if member.flow == wiring.In else Out)(member.shape)
                   for name, member in real.signature.members.items()}
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        m.submodules.real = r = self.real
        cw = (self.crows - 1).bit_length()
        cyc = self.cyc
        if self.mutant == "cycle-msb" and cw:
            cyc = Cat(self.cyc[:cw - 1], Const(0, 1))
        m.d.comb += [r.stage.eq(self.stage), r.cyc.eq(cyc), r.inverse.eq(self.inverse)]
        for name, member in r.signature.members.items():
            if member.flow == wiring.Out and name != "slot":
                m.d.comb += getattr(self, name).eq(getattr(r, name))
        B = self.coset_bits
        for b in range(self.banks):
            v = r.slot[b]
            if self.mutant == "slot-msb":
                v = Cat(v[:B - 1], Const(0, 1))
            m.d.comb += self.slot[b].eq(v)
        return m


@contextlib.contextmanager
def _patched(mutant):
    """Elaborate NttAddressDecoder with a mutated plan function (``bank-low-chunk``,
    ``group-shift``, ``twiddle-offset``); other mutants need no patch."""
    import hhe_gen.cores.ntt.address_decoder as ad
    orig_bank, orig_plan = ad.bank_of, ad.k_plan
    if mutant == "bank-low-chunk":
        ad.bank_of = lambda i, n_log, b: i[0:b]
    elif mutant == "group-shift":          # G one position lower: k falls outside it
        ad.k_plan = lambda k, n_log, lanes: (lambda kp: replace(kp, g0=kp.g0 - 1) if kp.g0 else kp)(
            orig_plan(k, n_log, lanes))
    elif mutant == "twiddle-offset":       # every lane uses lane 0's twiddle index
        ad.k_plan = lambda k, n_log, lanes: replace(orig_plan(k, n_log, lanes), tw_offset=(0,) * lanes)
    try:
        yield
    finally:
        ad.bank_of, ad.k_plan = orig_bank, orig_plan


class DecoderHarness:
    """The decoder's schedule properties (module docstring) for one (N, P, banking), both
    directions and every stage at once.

    Parameters
    ----------
    n, lanes, banking : the decoder's parameters
    properties : the subset of ``PROPERTIES`` asserted (default all)
    mutant : None or a key of ``MUTANTS`` (then only that mutant's property is asserted unless
             ``properties`` says otherwise)
    inverse : None (free: both directions in one query) or a fixed direction
    """

    def __init__(self, n: int, lanes: int, banking: str = "dual", *, properties=None, mutant=None,
                 inverse=None):
        from hhe_gen.cores.ntt import NttAddressDecoder
        if mutant is not None and mutant not in MUTANTS:
            raise ValueError(f"mutant {mutant!r} is not one of {sorted(MUTANTS)}")
        self.n, self.lanes, self.banking, self.mutant, self.inverse = n, lanes, banking, mutant, inverse
        if properties is None:
            properties = (MUTANTS[mutant],) if mutant else PROPERTIES
        bad = set(properties) - set(PROPERTIES)
        if bad:
            raise ValueError(f"unknown properties {sorted(bad)}")
        self.properties = tuple(properties)
        self._make = lambda: NttAddressDecoder(n, lanes, banking)
        self.probe = self._make()
        mark_unused(self.probe)

    depth = 1

    def _decoder(self):
        dec = self._make()
        if self.mutant in ("cycle-msb", "slot-msb"):
            dec = _Wrapped(dec, self.mutant)
        return dec

    def build(self):
        n, P = self.n, self.lanes
        probe = self.probe
        n_log, B, BB, nb, crows = probe.n_log, probe.coset_bits, probe.bank_bits, probe.banks, probe.crows
        single = self.banking == "single"
        lp = P.bit_length() - 1
        props = set(self.properties)
        m, _ = formal_module()
        with _patched(self.mutant):
            decs = [self._decoder(), self._decoder()]
            # elaborate now, under the patch (the harness is converted after the patch is undone)
            frags = [Fragment.get(d, None) for d in decs]
        m.submodules.dec1, m.submodules.dec2 = frags
        d1, d2 = decs

        stage = Signal(range(n_log + 1), name="s")
        inv = Signal(name="inverse")
        c1, c2 = Signal(range(max(crows, 2)), name="c1"), Signal(range(max(crows, 2)), name="c2")
        b1, b2 = Signal(BB, name="b1"), Signal(BB, name="b2")
        m.d.comb += [stage.eq(AnyConst(stage.shape())), c1.eq(AnyConst(c1.shape())), c2.eq(AnyConst(c2.shape())),
                     b1.eq(AnyConst(BB)), b2.eq(AnyConst(BB)),
                     inv.eq(AnyConst(1) if self.inverse is None else int(self.inverse)),
                     Assume(stage < n_log), Assume(c1 < crows), Assume(c2 < crows)]
        for d, c in ((d1, c1), (d2, c2)):
            m.d.comb += [d.stage.eq(stage), d.cyc.eq(c), d.inverse.eq(inv)]

        def served(d, b):
            """(used, slot, index) of bank b (a free signal) of decoder d."""
            addr = Array(d.addr[i] for i in range(nb))[b] if d.rows > 1 else Const(0, 0)
            idx = Signal(n_log, name=f"idx_{len(names)}")
            names.append(idx)
            m.d.comb += idx.eq(plan_index(b, addr, n_log, BB))
            return Array(d.used[i] for i in range(nb))[b], Array(d.slot[i] for i in range(nb))[b], idx
        names = []
        used1, slot1, y1 = served(d1, b1)
        used2, slot2, y2 = served(d1, b2)            # a second bank, same cycle
        used3, _slot3, y3 = served(d2, b2)           # a bank of the other cycle
        k_spec = Signal(range(n_log), name="k_spec")
        m.d.comb += k_spec.eq(Mux(inv, stage, n_log - 1 - stage))

        if "conflict" in props:
            count = _popcount([d1.used[i] for i in range(nb)])
            m.d.comb += Assert(count == 2 * P, "2P banks used")
            with m.If(used1 & used2 & (b1 != b2)):
                m.d.comb += Assert(slot1 != slot2, "two used banks serve two slots")
        if "complete" in props:
            with m.If(used1 & used3 & ((c1 != c2) | (b1 != b2))):
                m.d.comb += Assert(y1 != y3, "injective: (cycle, bank) -> index")

        # ---- the spec of y1 for the stage's k (constants per k; one signal each, so the lookups
        # into the decoder's per-bank outputs are built once, not once per k)
        cw = n_log - B
        pos = Signal(max(cw, 1), name="spec_pos")          # position of y1's coset in the stage
        j_spec = Signal(B, name="spec_slot")                # y1's slot: its bits in G
        base = Signal(n_log, name="spec_base")              # y1 without its G bits
        kpos = Signal(range(B), name="spec_kpos")           # k - G0
        lane = Signal(max(lp, 1), name="spec_lane")         # y1's lane (bits in G minus k)
        tw = Signal(n_log, name="spec_tw")                  # N/2^(k+1) + (y1 >> (k+1))
        partner = Signal(n_log, name="spec_partner")        # y1 ^ 2^k
        is_lo = Signal(name="spec_is_lo")                   # bit k of y1 is 0
        with m.Switch(k_spec):
            for kk in range(n_log):
                group = _group_bits(kk, B)
                others = [g for g in range(n_log) if g not in group]
                lane_bits = [g for g in group if g != kk]
                c_bits = [y1[g] for g in others]
                if single and c_bits:
                    from hhe_gen.cores.ntt.single_port import stage_order
                    c_bits = inverse_order(stage_order(kk, n_log, P), c_bits)
                with m.Case(kk):
                    m.d.comb += [
                        pos.eq(Cat(*c_bits) if c_bits else 0),
                        j_spec.eq(Cat(*[y1[g] for g in group])),
                        base.eq(Cat(*[(y1[i] if i not in group else Const(0, 1)) for i in range(n_log)])),
                        kpos.eq(kk - group[0]),
                        lane.eq(Cat(*[y1[g] for g in lane_bits]) if lane_bits else 0),
                        tw.eq((n >> (kk + 1)) + (y1 >> (kk + 1))),
                        partner.eq(y1 ^ (1 << kk)),
                        is_lo.eq(~y1[kk]),
                    ]
        if "plan" in props:
            m.d.comb += [Assert(d1.k == k_spec, "k"), Assert(d1.kpos == kpos, "kpos")]
            with m.If(used1):
                m.d.comb += [Assert(pos == c1, "served index in the cycle's coset"),
                             Assert(slot1 == j_spec, "served slot = the index's bits in G"),
                             Assert(d1.bb == spec_bank(base, n_log, BB), "bb = bank(base)")]
        if "pair" in props:
            pb = Signal(BB, name="partner_bank")
            m.d.comb += pb.eq(spec_bank(partner, n_log, BB))
            with m.If(used1):
                m.d.comb += [Assert(Array(d1.used[i] for i in range(nb))[pb], "partner's bank used"),
                             Assert(Array(d1.slot[i] for i in range(nb))[pb] == (slot1 ^ (1 << kpos)),
                                    "partner's slot")]
                if d1.rows > 1:
                    m.d.comb += Assert(Array(d1.addr[i] for i in range(nb))[pb] == (partner >> BB),
                                       "partner's address")
        if "twiddle" in props:
            with m.If(used1 & is_lo):
                m.d.comb += Assert(Array(d1.tw_idx[i] for i in range(P))[lane] == tw, "lane twiddle index")
                if P > 1:
                    m.d.comb += [Assert(Array(d1.tw_bank[i] for i in range(P))[lane] == tw[:lp],
                                        "lane twiddle ROM bank"),
                                 Assert((d1.t0 >> lp) == (tw >> lp), "twiddle ROM row")]
        return m

