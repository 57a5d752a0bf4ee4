"""The address decoder of :class:`hhe_gen.cores.ntt.IterativeNtt`: (stage, cycle position) -> the
coset, the banks' addresses and slots, and the lanes' twiddle indices.

The memory plan is :mod:`hhe_gen.cores.ntt.schedule` (dual-port banks) or :mod:`.single_port`
(single-port banks): N = 2^n coefficients in 2^B' banks (B' = B = log2 2P dual, B + 1 single),
bank(i) = XOR of the B'-bit chunks of i, addr(i) = i >> B'.  Stage s works on butterfly bit k
(forward k = n-1-s, inverse k = s); its cycle at position c' serves the coset
``base(c) XOR span{e_g : g in G}`` (G = the B positions G0 .. G0+B-1 containing k, c = c' dual or
the single-port cycle order of c', ``base(c)`` = c deposited into the positions outside G).  Slot
j of the coset (index base | j << G0) sits in bank bb XOR rotl(j, G0 mod B'), bb = bank(base); so
bank b serves slot j = rotr(b XOR bb, G0 mod B') - used if that has bit B'-1 = 0 (single-port:
half of the banks are idle in a cycle; dual: every bank is used) - at address
(base | j << G0) >> B'.

The core has two of them: ``rd_decoder`` (the read side, from the controller's stage and cycle)
and ``wr_decoder`` (the write side, from the same values delayed D cycles: the results go back in
place).  The schedule properties of this decoder alone, for every stage and cycle, are proven in
:mod:`hhe_gen.formal.ntt.decoder`.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.params.errors import ParameterError

from .plan import check_lanes, check_n, k_plan
from .single_port import stage_order

__all__ = ["NttAddressDecoder", "bank_of", "DECODER_BANKING"]

DECODER_BANKING = ("dual", "single")


def bank_of(i, n_log: int, b: int):
    """bank(i) = XOR of the b-bit chunks of i (hardware expression)."""
    out = i[0:b]
    for lo in range(b, n_log, b):
        out = out ^ i[lo:min(lo + b, n_log)]
    return out


class NttAddressDecoder(wiring.Component):
    """Combinational address decoder of one side (read or write) of the iterative NTT.

    Parameters
    ----------
    n : int         N, a power of two 2^3 .. 2^16
    lanes : int     P, a power of two 1 .. N/2 (single: 1 .. N/4)
    banking : str   "dual" (2P banks) or "single" (4P banks, half of them used per cycle)

    Members
    -------
    stage : In(range(n + 1))        the stage s (values >= log2 N give don't-care outputs)
    cyc : In(range(max(N/2P, 2)))   the cycle position c' inside the stage
    inverse : In(1)                 the direction (k = s inverse, n-1-s forward)
    k : Out(range(n))               the butterfly bit
    base : Out(n)                   the coset's base index (zeros in G)
    kpos : Out(range(B))            k - G0, the pair bit's position in a slot number
    addr : Out(ArrayLayout(range(N / 2^B'), 2^B'))   per bank, the word address
    slot : Out(ArrayLayout(B, 2^B'))                  per bank, the slot it serves
    used : Out(ArrayLayout(1, 2^B'))                  per bank, whether it serves a slot
    t0 : Out(n)                     lane 0's twiddle index N/2^(k+1) + (base >> (k+1))
    tw_idx : Out(ArrayLayout(n, P)) per lane, its twiddle index (t0 + the plan's lane offset)
    tw_bank : Out(ArrayLayout(range(P), P))   per lane, its twiddle ROM bank (tw_idx mod P)
    bb : Out(B')                    bank(base)
    n, n_log, lanes, banking, coset_bits (B), bank_bits (B'), banks (2^B'), rows (N / 2^B'),
    crows (N / 2P: cycles per stage)

    Latency
    -------
    0 cycles (combinational).
    """

    @quiet_on_error
    def __init__(self, n: int, lanes: int, banking: str = "dual"):
        self.n_log = check_n(n)
        self.n = n
        check_lanes(lanes, n)
        self.lanes = lanes
        if banking not in DECODER_BANKING:
            raise ParameterError("banking", banking, "one of " + ", ".join(map(repr, DECODER_BANKING)))
        single = banking == "single"
        if single and lanes > n // 4:
            raise ParameterError("lanes", lanes, f"a power of two 1 .. N/4 = {n // 4} with banking='single'")
        self.banking = banking
        self.coset_bits = (2 * lanes).bit_length() - 1
        self.bank_bits = self.coset_bits + single
        self.banks = 1 << self.bank_bits
        self.rows = n >> self.bank_bits
        self.crows = n >> self.coset_bits
        nl, B, BB, nb, P = self.n_log, self.coset_bits, self.bank_bits, self.banks, lanes
        super().__init__({
            "stage": In(range(nl + 1)),
            "cyc": In(range(max(self.crows, 2))),
            "inverse": In(1),
            "k": Out(range(nl)),
            "base": Out(nl),
            "kpos": Out(range(B)),
            "addr": Out(data.ArrayLayout(range(self.rows), nb)),
            "slot": Out(data.ArrayLayout(B, nb)),
            "used": Out(data.ArrayLayout(1, nb)),
            "t0": Out(nl),
            "tw_idx": Out(data.ArrayLayout(nl, P)),
            "tw_bank": Out(data.ArrayLayout(range(P), P)),
            "bb": Out(BB),
        })

    def elaborate(self, platform):
        m = Module()
        n, n_log, P = self.n, self.n_log, self.lanes
        B, BB, nb = self.coset_bits, self.bank_bits, self.banks
        single = self.banking == "single"
        c_pos = self.cyc
        m.d.comb += self.k.eq(Mux(self.inverse, self.stage, n_log - 1 - self.stage))
        cw = n_log - B
        c = Signal(max(cw, 1), name="c")                 # the coset number visited at c'
        base = self.base
        m.d.comb += self.bb.eq(bank_of(base, n_log, BB))
        # one signal per bank and lane (assigning slices of the wide array ports case by case made
        # elaboration and RTLIL export at P = 512 take minutes), joined onto the ports at the end
        addr = [Signal(range(self.rows), name=f"addr{b}") for b in range(nb)]
        slot = [Signal(B, name=f"slot{b}") for b in range(nb)]
        used = [Signal(name=f"used{b}") for b in range(nb)]
        tw_idx = [Signal(n_log, name=f"twi{lane}") for lane in range(P)]
        tw_bank = [Signal(range(P), name=f"twb{lane}") for lane in range(P)]
        m.d.comb += [self.addr.eq(Cat(*addr)), self.slot.eq(Cat(*slot)), self.used.eq(Cat(*used)),
                     self.tw_idx.eq(Cat(*tw_idx)), self.tw_bank.eq(Cat(*tw_bank))]
        # per butterfly bit k: the coset number c, the base, kpos, t0; the constants the per-bank and
        # per-lane parts need (G0 and the lanes' twiddle offsets) as small case numbers, so those
        # parts are built once per distinct value, not once per k (P = 512: G0 is 0 for every k)
        plans = [k_plan(kk, n_log, P) for kk in range(n_log)]
        g0s = sorted({kp.g0 for kp in plans})
        offsets = sorted({kp.tw_offset for kp in plans})
        g0_case = Signal(range(len(g0s) + 1), name="g0_case")        # len(g0s): no valid k
        tw_case = Signal(range(len(offsets) + 1), name="tw_case")
        m.d.comb += [g0_case.eq(len(g0s)), tw_case.eq(len(offsets))]
        with m.Switch(self.k):
            for kk, kp in enumerate(plans):
                with m.Case(kk):
                    if single:          # the stage's cycle order (single_port.order_cycle)
                        so = stage_order(kk, n_log, P)
                        par = Const(0, 1)
                        for i in range(cw):
                            if (so.mask2 >> i) & 1:
                                par = par ^ c_pos[i]
                        d = Cat(c_pos[0] ^ par, c_pos[1:cw])
                        bits = [d[i] for i in range(cw)]
                        if so.p:
                            bits[0], bits[so.p] = bits[so.p], bits[0]
                        m.d.comb += c.eq(Cat(*bits))
                    elif cw:
                        m.d.comb += c.eq(c_pos[:cw])
                    low = c[:kp.g0] if kp.g0 else Const(0, 0)
                    high = c[kp.g0:cw] if cw > kp.g0 else Const(0, 0)
                    m.d.comb += [base.eq(Cat(low, Const(0, B), high)), self.kpos.eq(kp.kpos),
                                 self.t0.eq((n >> (kk + 1)) + (base >> (kk + 1))),
                                 g0_case.eq(g0s.index(kp.g0)), tw_case.eq(offsets.index(kp.tw_offset))]
        # bank b serves slot j = rotr(b ^ bb, G0 mod B') at address (base | j << G0) >> B'
        with m.Switch(g0_case):
            for gi, g0 in enumerate(g0s):
                rot = g0 % BB
                with m.Case(gi):
                    for b in range(nb):
                        v = Const(b, BB) ^ self.bb
                        j = Cat(*[v[(i + rot) % BB] for i in range(BB)])       # rotr by rot
                        m.d.comb += [slot[b].eq(j[:B]), used[b].eq(~j[B] if single else 1),
                                     addr[b].eq((base | (j[:B] << g0)) >> BB)]
        with m.Switch(tw_case):
            for ti, offs in enumerate(offsets):
                with m.Case(ti):
                    for lane in range(P):
                        m.d.comb += [tw_idx[lane].eq(self.t0 + offs[lane]),
                                     tw_bank[lane].eq((self.t0 + offs[lane]) & (P - 1) if P > 1 else 0)]
        return m
