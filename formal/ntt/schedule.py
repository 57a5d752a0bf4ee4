"""The address / bank schedule of :class:`hhe_gen.cores.ntt.IterativeNtt`, proven on the hardware.

The harness contains the real core (its elaborated fragment; the datapath is there but no
property depends on it, so Yosys drops it) and observes, in every cycle, the signals the core
drives into its data memories: per bank the read port's address and enable and the write port's
address and enable (taken from the memory instances themselves), plus the controller's ``issue``,
``stage``, the read decoder's (submodule ``rd_decoder``, an
:class:`~hhe_gen.cores.ntt.address_decoder.NttAddressDecoder`) ``used`` (single-port: the banks
a cycle reads) and the lanes' twiddle indices ``tw_idx``.  One coefficient index x is free
(``AnyConst``), so every property holds for every index.

Specification (independent of the core's address generator; written from the memory plan of
:mod:`hhe_gen.cores.ntt.schedule` / :mod:`hhe_gen.cores.ntt.single_port`):

* the word of x lives in bank ``bank(x)`` = XOR of the B'-bit chunks of x, address x >> B';
* stage s works on butterfly bit k (forward k = n-1-s, inverse k = s) and reads x in its cycle
  ``pos_s(x)``: the bits of x outside the stage's group G (B consecutive positions containing k),
  compressed (single-port: mapped through the inverse of the stage's cycle order); the stage
  starts ``starts[s]`` cycles after the transform's first read (the core's static table - the
  spec checks that the table is safe, below), so x is read at r_s(x) = starts[s] + pos_s(x) and
  written at r_s(x) + D (D = the core's read-to-write depth).

Asserted in every cycle (t = cycles since the transform's first read, kept by the harness):

* (R) x's bank reads x's address for a butterfly (``issue``, the bank used, the port enabled) in
  stage s exactly when t = r_s(x) - so in each stage x is read exactly once, together with its
  partner x XOR 2^k (the same cycle: pos ignores the bits of G), and the 2P indices of a cycle
  are read through 2P different ports (one port cannot serve two addresses);
* (W) x's bank writes x's address (not a load write) exactly when t = r_s(x) + D for some s: x is
  written once per stage, D cycles after its read, and never at any other time;
* (S) slots: when x is read, the read decoder's coset bank ``bb`` XOR rotl(j, G0 mod B') is bank(x),
  j = the bits of x in G (its slot in the coset: the lanes take slot j's operand from that bank,
  one cycle later), and when x is written, the write crossbar's select ``w_sel`` (the coset's bb
  the XOR network applies to the results in bank order, v[rotl(j, G0 mod B')] = slot j's result)
  XOR rotl(j, G0 mod B') is bank(x), so bank(x) writes slot j's result - this is what refutes a
  wrong bank function (the (bank, address) pairs of a cycle alone do not: a consistent
  permutation of the slots would pass (R) and (W));
* (T) when x is the lower index of its pair in stage s and is read, the twiddle index of its lane
  (lane = the bits of x in G minus k, the plan's lane order) is N/2^(k+1) + (x >> (k+1))
  (the index into psi_brv / psi_inv_brv of the model);
* (D) the stage overlap is safe: r_{s+1}(x) >= r_s(x) + D (dual: the read port is transparent for
  the write of the same cycle) or > r_s(x) + D (single-port: readable the cycle after a write),
  and the last write is no later than the unload's first read; load writes end before the first
  read (dual: in the cycle of the first read at the latest);
* (P) ports: dual - each bank has one read and one write port by construction; single-port - a
  bank is never written in a cycle in which a butterfly needs to read it (the core would drop
  the read), and (R) shows the needed read is made.

Not covered here: the fixed wiring between a slot and a lane (lane l's lower operand is slot
``lane_lo_slot(l, kpos)``; :mod:`.equivalence` covers it at N = 8 and 16) and the load / unload
orders (also :mod:`.equivalence`, :mod:`.streams` and the simulation tests).  The butterflies
are replaced by port-compatible stubs while the harness elaborates the core (no property depends
on data; Yosys would drop them; at P = 512 their elaboration alone took minutes).

Induction: the controller's own state is tied to the harness's counter by invariants (t equals
``run_cnt`` while running; a running stage is at cycle ``run_cnt - starts[stage]``; between
stages ``cyc`` is 0 and ``run_cnt`` lies between the previous stage's end and the next start;
outside a transform t is past the last write), so k-induction closes at depth D + 2 (the write
side's delay lines are then inside the window).
"""

from __future__ import annotations

import contextlib

from amaranth.asserts import AnyConst, AnySeq
from amaranth.hdl import Array, Assert, Cat, Const, Fragment, Signal

from hhe_gen.cores.ntt.schedule import _group_bits

from ..common.sby import find_signal, formal_module

__all__ = ["ScheduleHarness", "inverse_order", "small_prime", "mutant_bank_function"]

IDLE, LOAD, WAIT, RUN, UNLOAD = range(5)


def small_prime(n: int) -> int:
    """The smallest prime q = 1 (mod 2N) (the data width does not matter to the schedule)."""
    q = 2 * n + 1
    while True:
        if all(q % d for d in range(2, int(q ** 0.5) + 1)):
            return q
        q += 2 * n


def _swap_bits(bits: list, p: int) -> list:
    bits = list(bits)
    bits[0], bits[p] = bits[p], bits[0]
    return bits


def inverse_order(so, c_bits: list) -> list:
    """The cycle position c' at which a single-port stage visits coset number c (a list of bit
    expressions or ints, LSB first): the inverse of :func:`hhe_gen.cores.ntt.single_port.order_cycle`
    (order: d = c' with bit 0 XOR parity(c' & M'), c = swap(d, bit 0, bit p); M' has no bit 0, so
    the inverse is d = swap(c), c' = d with bit 0 XOR parity(d & M'))."""
    d = _swap_bits(c_bits, so.p)
    bit0 = d[0]
    for i, bit in enumerate(d):
        if (so.mask2 >> i) & 1:
            bit0 = bit0 ^ bit
    return [bit0] + d[1:]


def mutant_bank_function():
    """A context manager under which IterativeNtt elaborates with a wrong bank function (the low
    chunk only, no XOR of the others) - the schedule proof must refute it."""
    import hhe_gen.cores.ntt.address_decoder as ad
    import hhe_gen.cores.ntt.iterative as it

    @contextlib.contextmanager
    def patched():
        orig = it._bank_of, ad.bank_of
        it._bank_of = ad.bank_of = lambda i, n_log, b: i[0:b]
        try:
            yield
        finally:
            it._bank_of, ad.bank_of = orig
    return patched()


class ScheduleHarness:
    """The schedule properties (module docstring) for one configuration and direction.

    Parameters
    ----------
    n, lanes : N and P of the core
    banking : "dual" or "single"
    inverse : the direction proven (the command's ``inverse`` is assumed equal to it)
    start_shift : (stage, delta) or None - a mutant whose stage ``stage`` starts ``delta`` cycles
                  off the core's table (the core and the spec both use the shifted table; the
                  overlap check (D) must refute an early start)
    bank_mutant : elaborate the core with :func:`mutant_bank_function`
    """

    def __init__(self, n: int, lanes: int, banking: str = "dual", inverse: bool = False, *,
                 start_shift=None, bank_mutant: bool = False):
        from hhe_gen.cores.ntt import IterativeNtt
        self.n, self.lanes, self.banking, self.inverse = n, lanes, banking, bool(inverse)
        # external butterflies, none attached (results 0): no schedule property depends on data,
        # so Yosys would drop the real butterflies anyway, and leaving them out saves elaborating
        # P of them (at P = 512 the conversion alone took over 9 minutes)
        self.dut = IterativeNtt(n, lanes, small_prime(n), banking=banking, butterflies="external")
        if start_shift is not None:
            s, delta = start_shift
            starts = list(self.dut.starts[self.inverse])
            starts[s] += delta
            self.dut.starts[self.inverse] = tuple(starts)
        self.bank_mutant = bank_mutant

    @property
    def depth(self) -> int:
        """k-induction depth: D + 2 (the write side's delay lines inside the window)."""
        return self.dut.depth + 2

    @property
    def transform_cycles(self) -> int:
        return self.dut.transform_cycles(self.inverse)

    def build(self):
        dut, inv = self.dut, self.inverse
        n, n_log, P = dut.n, dut.n_log, dut.lanes
        B, BB, nb, D = dut.coset_bits, dut.bank_bits, dut.banks, dut.depth
        single = dut.banking == "single"
        crows = n >> B
        starts = dut.starts[inv]
        T = dut.transform_cycles(inv)
        tmax = T + 2
        with mutant_bank_function() if self.bank_mutant else contextlib.nullcontext():
            frag = Fragment.get(dut, None)
        m, _ = formal_module()
        m.submodules.dut = frag

        def sig(name, domain="sync"):
            return find_signal(frag, name, domain=domain)

        # ---- environment: any command timing, the proven direction, any stream handshakes
        m.d.comb += [dut.cmd.valid.eq(AnySeq(1)), dut.cmd.payload.inverse.eq(int(inv)),
                     dut.cmd.payload.sel.eq(0), dut.i_stream.valid.eq(AnySeq(1)),
                     dut.o_stream.ready.eq(AnySeq(1))]

        # ---- the core's signals
        state, run_cnt, stage, cyc = sig("state"), sig("run_cnt"), sig("stage"), sig("cyc")
        active, inverse = sig("stage_active"), sig("inverse")
        issue = sig("issue", None)
        load_d = sig(f"load_d{dut.butterfly_latency + 1 + dut.tw_latency + dut.out_regs}")
        rd_used = find_signal(frag, "used", domain=None, path=("rd_decoder",))
        rd_twi = find_signal(frag, "tw_idx", domain=None, path=("rd_decoder",))
        rd_bb = find_signal(frag, "bb", domain=None, path=("rd_decoder",))
        w_sel = sig("w_sel")
        used = [rd_used[b] for b in range(nb)]
        twi = [rd_twi[lane * n_log:(lane + 1) * n_log] for lane in range(P)]
        rports, wports = [], []
        for b in range(nb):
            mem = frag.find_subfragment(f"bank{b}")
            (rp,), (wp,) = mem._read_ports, mem._write_ports
            rports.append((rp._addr, rp._en))
            wports.append((wp._addr, wp._en[0]))

        # ---- harness time: 0 in the transform's first read cycle, saturating past the end
        t = Signal(range(tmax + 1), name="t", init=tmax)
        with m.If(state == WAIT):
            m.d.sync += t.eq(0)
        with m.Elif(t < tmax):
            m.d.sync += t.eq(t + 1)

        # ---- controller invariants (make the properties inductive)
        st_tab = Array(Const(v, range(T + crows + 1)) for v in list(starts) + [T])
        m.d.comb += [
            Assert(state <= UNLOAD, "state encoding"),
            Assert((state == IDLE) | (inverse == int(inv)), "direction"),
            Assert((state != RUN) | ((t == run_cnt) & (run_cnt <= T - 1)), "t = run_cnt"),
            Assert(~((state == RUN) & active) | ((stage < n_log) & (cyc < crows) &
                                                 (run_cnt == st_tab[stage] + cyc)), "running stage"),
            Assert(~((state == RUN) & ~active) |
                   ((cyc == 0) & ((stage == n_log) | (run_cnt <= st_tab[stage])) &
                    ((stage == 0) | (run_cnt >= st_tab[stage - 1] + crows))), "between stages"),
            Assert(~((state == IDLE) | (state == LOAD)) | (t > T), "idle: past the last write"),
            Assert((state != UNLOAD) | (t >= T), "unload: past the transform"),
            Assert((state != WAIT) | (t == 0) | (t > T), "wait"),
        ]

        # ---- x and the spec
        x = Signal(n_log, name="x")
        m.d.comb += x.eq(AnyConst(n_log))
        xb = Signal(BB, name="x_bank")
        chunk = x[0:BB]
        for lo in range(BB, n_log, BB):
            chunk = chunk ^ x[lo:min(lo + BB, n_log)]
        m.d.comb += xb.eq(chunk)
        xa = x >> BB
        r_addr, r_en = Array(a for a, _ in rports), Array(e for _, e in rports)
        w_addr, w_en = Array(a for a, _ in wports), Array(e for _, e in wports)
        used_x = Array(used)[xb]
        read_x = Signal(name="read_x")
        write_x = Signal(name="write_x")
        m.d.comb += [read_x.eq(issue & used_x & r_en[xb] & (r_addr[xb] == xa)),
                     write_x.eq(w_en[xb] & (w_addr[xb] == xa) & ~load_d)]
        when = []                        # r_s(x) per stage
        for s in range(n_log):
            k = s if inv else n_log - 1 - s
            group = _group_bits(k, B)
            others = [g for g in range(n_log) if g not in group]
            c_bits = [x[g] for g in others]
            if single and c_bits:
                from hhe_gen.cores.ntt.single_port import stage_order
                c_bits = inverse_order(stage_order(k, n_log, P), c_bits)
            r = Signal(range(T + crows + 1), name=f"r{s}")
            m.d.comb += r.eq(starts[s] + (Cat(*c_bits) if c_bits else 0))
            when.append(r)
            # (R) read exactly at r_s(x), in stage s
            m.d.comb += Assert((read_x & (stage == s)) == ((state == RUN) & (t == r)), f"read stage {s}")
            # (S) slots: x is slot j = the bits of x in G of its coset; the lanes take slot j's
            # operand from bank rd_bb ^ rotl(j, G0 mod B') (rd_bb delayed one cycle); the write
            # crossbar gives bank w_sel ^ rotl(j, G0 mod B') slot j's result
            j = [x[g] for g in group] + [Const(0, 1)] * (BB - B)
            rot = group[0] % BB
            j_bank = Cat(*[j[(i - rot) % BB] for i in range(BB)])
            with m.If(read_x & (stage == s)):
                m.d.comb += Assert((rd_bb ^ j_bank) == xb, f"read bank of the slot, stage {s}")
            with m.If(t == r + D):
                m.d.comb += Assert((w_sel ^ j_bank) == xb, f"written slot, stage {s}")
            # (T) twiddle of x's lane when x is the pair's lower index
            lane_bits = [x[g] for g in group if g != k]
            lane = Cat(*lane_bits) if lane_bits else Const(0, 1)
            with m.If(read_x & (stage == s) & ~x[k]):
                tw = (n >> (k + 1)) + (x >> (k + 1))
                m.d.comb += Assert(Array(twi)[lane] == tw[:n_log], f"twiddle stage {s}")
        # (W) written exactly at r_s(x) + D
        designated = Const(0, 1)
        for r in when:
            designated = designated | (t == r + D)
        m.d.comb += Assert(write_x == designated, "writes of x")
        # (D) the overlap is safe, the last write before the unload, the load before the reads
        for s in range(n_log - 1):
            m.d.comb += Assert(when[s + 1] >= when[s] + D + single, f"stage {s + 1} reads after stage {s} writes")
        m.d.comb += Assert(when[-1] + D <= T - single, "last write before the unload")
        with m.If((state == RUN) & load_d):
            m.d.comb += Assert((t == 0) if not single else Const(0, 1), "load writes before the first read")
        # (P) single-port: no write to a bank a butterfly reads in the same cycle
        if single:
            for b in range(nb):
                m.d.comb += Assert(~(issue & used[b] & wports[b][1]), f"bank {b} read and written")
        return m
