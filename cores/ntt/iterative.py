"""Iterative, memory-based negacyclic NTT / INTT with P butterfly lanes and a run-time prime.

The memory plan is :mod:`hhe_gen.models.ntt_schedule` (2P banks, bank(i) = XOR of the B-bit
chunks of i, conflict-free cosets, static stage start cycles from ``stage_starts``); the result is
:func:`hhe_gen.models.ntt.ntt` / :func:`~hhe_gen.models.ntt.intt` bit for bit (Lattigo's
convention: forward Cooley-Tukey natural -> bit-reversed, inverse Gentleman-Sande bit-reversed ->
natural with N^-1 folded in).

Datapath
--------
::

    cycle  x           x+1                      x+2 ..                    x+2+L = x+D
    read   bank addrs  rdata -> lanes (lo, hi)  operand registers ->      x, y -> banks (in place,
           ROM addr    ROM data -> lane w       Butterfly (L cycles)      same addresses)

* 2P banks (``amaranth.lib.memory.Memory``, N/2P words each): one read port, transparent for the
  bank's one write port (a read in the cycle of a write to the same word sees the new value)
  (``banking="single"``: 4P one-address banks, see Banking);
  the address generator (:class:`~.address_decoder.NttAddressDecoder`, submodules ``rd_decoder`` and
  ``wr_decoder``) works from the stage counter and the cycle counter (a few constants per
  butterfly bit k in tables: the coset's lowest bit G0, the bank rotation G0 mod B, the pair bit's
  position and, for k < B-1, each lane's twiddle offset).
* One :class:`hhe_gen.cores.arith.Butterfly` per lane (op ct forward, gs inverse; ``en`` = 1 always:
  a fixed pipeline, no data-dependent timing).
* Twiddles, ``twiddles="rom"``: P ROM banks per :func:`~.plan.twiddle_rom` (2N words per prime;
  the indices t of a cycle's lanes are one aligned block, so each ROM bank serves at most one
  distinct index per cycle).  ``twiddles="otf"``: on the fly, each lane forms psi^e (e = brv(t), or
  2N - brv(t) for the inverse) as hi[e >> h] * lo[e mod 2^h] with one more modular multiplier of
  the butterfly's kind (its minimum latency X) from two small tables (:func:`~.plan.otf_tables`,
  2^(n+1-h) + 2^h words per prime per lane, N = 2^13: 256 instead of 16384); the operands wait X
  cycles in registers, so D grows by X.  Not the brief's "seed per stage and repeated
  multiplication": in this schedule the twiddle index of a lane runs through bit-reversed
  exponents and, in the low stages, changes every cycle, which a multiply-by-a-ratio loop of
  latency X cannot follow; the two-table product has no loop.
* N^-1: the Butterfly's GS sum has no multiplier, so the inverse does not fold N^-1 into its last
  butterflies; instead the load path sends every coefficient through the same butterflies with op
  ``mul`` and b = N^-1 (forward: b = 1) - in Z_q the two orders give the same residues, and the
  last stage uses psi^-brv(1) alone (the model's ``last_inv`` is psi^-brv(1) * N^-1).  For the
  Montgomery kinds every constant is stored times R mod q.

Interface (streams, :mod:`amaranth.lib.stream`)
-------------------------------------------------
``cmd`` (payload ``inverse``, ``sel``): accepted when idle; then the core takes N/P beats on
``i_stream`` (beat b = coefficients b*P .. b*P+P-1 of the model's input list: natural order for the
forward transform, the model's bit-reversed order for the inverse), transforms, and gives N/P beats
on ``o_stream`` (beat b = positions b*P .. b*P+P-1 of the model's output list), then accepts the
next command.  Payloads are ``ArrayLayout(unsigned(qbits), P)`` (coefficient p of a beat in bits
[p*qbits, (p+1)*qbits)); inputs must be < q of the selected prime and ``sel`` < len(moduli)
(neither is checked in hardware).  ``busy`` is high from the command to the last output beat.

Latency (cycles at full rate: producer always valid, consumer always ready)
--------------------------------------------------------------------------
With L = the butterfly latency, D = the read-to-write depth (L + 2, + X with ``twiddles="otf"``;
single-port: the next odd number, one register after the butterflies when needed), T = ``transform_cycles(inverse)``
(dual-port: the total of ``stage_starts(ntt_schedule(N, P, inverse), D)``, bound (N/2) log2 N / P
+ D - 1 for N >= 2^10, P <= 32; single-port: :func:`~.single_port.single_port_starts`):

* cycle 0: ``cmd`` accepted;
* load: cycles 1 .. N/P take the input beats, then ``load_wait`` cycles while the last beats go
  through the butterflies (L, + X otf, + 1 with the output register, + 1 single-port): ``load_cycles`` =
  N/P + load_wait;
* transform: T cycles from the first read to the cycle the unload may read, stage s starting
  ``starts[s]`` cycles after the first read (no other stall);
* unload: the first output beat is valid 1 cycle after the transform, one beat per cycle
  (``unload_cycles`` = N/P + 1); ``done`` pulses with the last beat's handshake and the next
  ``cmd`` can be accepted in the following cycle:
  ``command_cycles(inverse)`` = 1 + load_cycles + T + unload_cycles from one command to the next.

Gaps in the streams add exactly their own length; nothing depends on the data.

Measured (``hhe-gen bench ntt``, 30-bit Barrett, L = 8, D = 10): T = bound + 9 for every N =
2^10 .. 2^16 and P = 1 .. 16 (N = 2^10, P = 32: + 11), e.g. N = 2^13, P = 8: 6665 cycles (bound
6656), a whole command 8723 cycles.  Single-port (D = 11): N = 2^13, P = 8: 6766 (+1.5 %).

Banking
-------
``banking="dual"``: 2P banks of N/2P words, each with a read port and a write port (plan of
:mod:`hhe_gen.models.ntt_schedule`).  ``banking="single"``: 4P banks of N/4P words, each used
through ONE address per cycle (read or write, the 1RW banks of RACE, seeds/004 section 4.3.2),
P <= N/4; the plan is :mod:`.single_port` (bank bits B + 1, each stage's cycles reordered so that
the reads of a cycle and the writes landing in it use disjoint halves of the banks - the role of
RACE's NTT_swap4 output reordering, with no reorder buffer, the results stay in place).
"""

from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.arith import Butterfly
from hhe_gen.cores.arith.butterfly import OP_CODES
from hhe_gen.cores.arith.constants import quiet_on_error
from hhe_gen.params.errors import ParameterError

from .address_decoder import NttAddressDecoder
from .address_decoder import bank_of as _bank_of
from .plan import (butterfly_choice, lane_multiplier, check_lanes, check_moduli, check_n, k_plan, lane_lo_slot,
                   otf_tables, rotl, schedule_starts, twiddle_rom)
from .single_port import single_port_starts

__all__ = ["IterativeNtt", "TWIDDLES", "BANKING"]

TWIDDLES = ("rom", "otf")
BANKING = ("dual", "single")


class IterativeNtt(wiring.Component):
    """Iterative negacyclic NTT / INTT (see the module docstring for datapath, interface, latency).

    Parameters
    ----------
    n : int           N, a power of two 2^3 .. 2^16
    lanes : int       P butterfly lanes, a power of two 1 .. N/2
    moduli : int or list of int   the RNS primes (q = 1 mod 2N, distinct), ``sel`` picks one
    kind : str        the butterfly's reducer (:func:`hhe_gen.cores.arith.modmul` kinds: "barrett"
                      (default), "montgomery", "special-barrett", "ntt-montgomery")
    latency : int or None   butterfly latency L (None: the Butterfly's default)
    target : str      "ecp5" | "xilinx" | "generic"
    twiddles : str    "rom" (a ROM per prime, banked P ways) or "otf" (two small tables and one
                      modular multiplier per lane)
    banking : str     "dual" (2P banks, one read + one write port each) or "single" (4P banks,
                      one read-or-write address per cycle each; P <= N/4)
    **reducer : the reducer's own parameters (width, k, log_n, word_bits, karatsuba ...)

    Members
    -------
    cmd : In(stream.Signature(StructLayout({"inverse": 1, "sel": range(len(moduli))})))
    i_stream : In(stream.Signature(ArrayLayout(qbits, P)))
    o_stream : Out(stream.Signature(ArrayLayout(qbits, P)))
    busy : Out(1)     a command is in progress
    done : Out(1)     one-cycle pulse with the last output beat's handshake
    n, n_log, lanes, coset_bits (B = log2 2P), bank_bits (B or B+1), banks (2P or 4P), moduli, qbits,
    butterfly_latency (L), tw_latency (X, 0 for "rom"), out_regs, depth (D), starts[inverse] (stage
    start cycles), factors (the reducer's constant factor per prime), plus the cycle formulas ``beats``, ``load_wait``,
    ``load_cycles``, ``transform_cycles(inverse)``, ``unload_cycles``, ``command_cycles(inverse)``,
    ``bound``.
    """

    @quiet_on_error
    def __init__(self, n, lanes, moduli, *, kind="barrett", latency=None, target="ecp5", twiddles="rom",
                 banking="dual", **reducer):
        self.n_log = check_n(n)
        self.n = n
        self.lanes_log = check_lanes(lanes, n)
        self.lanes = lanes
        self.moduli = check_moduli(moduli, n)
        if twiddles not in TWIDDLES:
            raise ParameterError("twiddles", twiddles, "one of " + ", ".join(map(repr, TWIDDLES)))
        if banking not in BANKING:
            raise ParameterError("banking", banking, "one of " + ", ".join(map(repr, BANKING)))
        self.twiddles, self.banking = twiddles, banking
        self.kind = kind
        bf = butterfly_choice(self.n_log, self.moduli, kind, target, latency, reducer)
        self._zq, self.target = bf.zq, target
        self.butterfly_latency, self.bfly_width, self.qbits = bf.latency, bf.width, bf.qbits
        # constants times the reducer's factor: mul(1, 1) = R^-1 for Montgomery kinds, 1 otherwise
        self.factors = bf.factors
        single = banking == "single"
        if single and lanes > n // 4:
            raise ParameterError("lanes", lanes, f"a power of two 1 .. N/4 = {n // 4} with banking='single'")
        self.coset_bits = self.lanes_log + 1                    # B: a cycle serves 2^B indices
        self.bank_bits = self.coset_bits + single               # B' = B (dual) or B + 1 (single)
        self.banks = 1 << self.bank_bits
        # otf: one modular multiplier per lane forms each twiddle from two small tables; the operands
        # wait for it (``tw_latency`` extra cycles between the read and the butterfly)
        self.tw_latency = 0
        if twiddles == "otf":
            self.tw_latency = self._twiddle_multiplier().latency
        # single: an odd read-to-write depth (one register after the butterflies if it is even)
        self.out_regs = int(single and (self.butterfly_latency + self.tw_latency) % 2 == 0)
        self.depth = self.butterfly_latency + 2 + self.tw_latency + self.out_regs
        self.starts, self._totals = {}, {}
        for inv in (False, True):
            if single:
                self.starts[inv], self._totals[inv] = single_port_starts(n, lanes, inv, self.depth)
            else:
                self.starts[inv], self._totals[inv] = schedule_starts(n, lanes, inv, self.depth)
        coef = unsigned(self.qbits)
        self.beat_layout = data.ArrayLayout(coef, lanes)
        self.cmd_layout = data.StructLayout({"inverse": 1, "sel": range(len(self.moduli))})
        super().__init__({
            "cmd": In(stream.Signature(self.cmd_layout)),
            "i_stream": In(stream.Signature(self.beat_layout)),
            "o_stream": Out(stream.Signature(self.beat_layout)),
            "busy": Out(1),
            "done": Out(1),
        })

    def _twiddle_multiplier(self):
        """The raw modular multiplier of one lane's twiddle (the butterfly's reducer, its minimum
        latency)."""
        return lane_multiplier(self._zq, self.bfly_width, self.target)

    # -- cycle formulas ------------------------------------------------------------------------------
    @property
    def beats(self) -> int:
        """N/P: beats of a load and of an unload."""
        return self.n // self.lanes

    def transform_cycles(self, inverse: bool = False) -> int:
        """Cycles from the first read to the last write (``stage_starts`` total at depth D)."""
        return self._totals[bool(inverse)]

    @property
    def load_wait(self) -> int:
        """Cycles after the last input beat until the transform's first read: L (+1 for the output
        register, +1 for single-port banks, which read a word the cycle after its write)."""
        return self.butterfly_latency + self.tw_latency + self.out_regs + (self.banking == "single")

    @property
    def load_cycles(self) -> int:
        """N/P beats + ``load_wait`` cycles until the last one is in memory (full rate)."""
        return self.beats + self.load_wait

    @property
    def unload_cycles(self) -> int:
        """N/P beats + 1 cycle of memory read (full rate)."""
        return self.beats + 1

    def command_cycles(self, inverse: bool = False) -> int:
        """Cycles from a command's acceptance to the next one's (full rate)."""
        return 1 + self.load_cycles + self.transform_cycles(inverse) + self.unload_cycles

    @property
    def bound(self) -> int:
        """(N/2) log2(N) / P: the butterfly bound."""
        return self.n // 2 * self.n_log // self.lanes

    # -- hardware ---------------------------------------------------------------------------------------
    def elaborate(self, platform):
        m = Module()
        n, n_log, P = self.n, self.n_log, self.lanes
        B, BB = self.coset_bits, self.bank_bits
        single = self.banking == "single"
        nb, rows, crows = self.banks, n >> BB, n >> B          # banks, words per bank, cycles per stage
        L, D, E = self.butterfly_latency, self.depth, self.out_regs
        qw, nsel = self.qbits, len(self.moduli)
        lp = self.lanes_log

        # ---- command registers and controller state
        inverse = Signal(name="inverse")
        sel = Signal(range(nsel), name="sel")
        IDLE, LOAD, WAIT, RUN, UNLOAD = range(5)
        state = Signal(range(5), name="state")
        m.d.comb += self.busy.eq(state != IDLE)

        beat = Signal(range(self.beats + 1), name="beat")         # load / unload beat counter
        wait = Signal(range(self.load_wait + 1), name="wait")
        total = max(self._totals.values())
        run_cnt = Signal(range(total + 1), name="run_cnt")
        stage = Signal(range(n_log + 1), name="stage")
        cyc = Signal(range(max(crows, 2)), name="cyc")
        active = Signal(name="stage_active")

        starts_f = Array(Const(s, range(total + 1)) for s in self.starts[False] + (total,))
        starts_i = Array(Const(s, range(total + 1)) for s in self.starts[True] + (total,))
        stage_start = Mux(inverse, starts_i[stage], starts_f[stage])
        t_last = Mux(inverse, self._totals[True] - 1, self._totals[False] - 1)

        issue = Signal(name="issue")
        load_take = Signal(name="load_take")
        m.d.comb += self.cmd.ready.eq(state == IDLE)

        with m.Switch(state):
            with m.Case(IDLE):
                with m.If(self.cmd.valid):
                    m.d.sync += [inverse.eq(self.cmd.payload.inverse), sel.eq(self.cmd.payload.sel),
                                 state.eq(LOAD), beat.eq(0)]
            with m.Case(LOAD):
                m.d.comb += [self.i_stream.ready.eq(1), load_take.eq(self.i_stream.valid)]
                with m.If(self.i_stream.valid):
                    m.d.sync += beat.eq(beat + 1)
                    with m.If(beat == self.beats - 1):
                        m.d.sync += [state.eq(WAIT), wait.eq(0)]
            with m.Case(WAIT):
                m.d.sync += wait.eq(wait + 1)
                with m.If(wait == self.load_wait - 1):
                    m.d.sync += [state.eq(RUN), run_cnt.eq(0), stage.eq(0), cyc.eq(0), active.eq(0)]
            with m.Case(RUN):
                m.d.sync += run_cnt.eq(run_cnt + 1)
                with m.If((stage < n_log) & (active | (run_cnt == stage_start))):
                    m.d.comb += issue.eq(1)
                    m.d.sync += [active.eq(1), cyc.eq(cyc + 1)]
                    with m.If(cyc == crows - 1):
                        m.d.sync += [active.eq(0), cyc.eq(0), stage.eq(stage + 1)]
                with m.If(run_cnt == t_last):
                    m.d.sync += [state.eq(UNLOAD), beat.eq(0)]

        def delay(sig, cycles, name):
            out = sig
            for i in range(cycles):
                r = Signal.like(sig, name=f"{name}_d{i + 1}") if isinstance(sig, Signal) else \
                    Signal(len(sig), name=f"{name}_d{i + 1}")
                m.d.sync += r.eq(out)
                out = r
            return out

        # ---- address decoders (cores/ntt/address_decoder.py): the read side from the controller's
        # stage and cycle position, the write side (below) from the same values delayed D cycles
        m.submodules.rd_decoder = rd = NttAddressDecoder(n, P, self.banking)
        m.d.comb += [rd.stage.eq(stage), rd.cyc.eq(cyc), rd.inverse.eq(inverse)]

        # ---- data memories: one read port and one write port per bank; dual: the read port is
        # transparent for the write port; single: the two ports share one address and are never
        # enabled together (a 1RW bank)
        banks = []
        for b in range(nb):
            mem = memory.Memory(shape=qw, depth=rows, init=[])
            m.submodules[f"bank{b}"] = mem
            wp = mem.write_port()
            rp = mem.read_port(transparent_for=() if single else (wp,))
            banks.append((rp, wp))
        rdata = Array(rp.data for rp, _ in banks)

        factors = self.factors
        X = self.tw_latency
        if self.twiddles == "rom":
            rom = twiddle_rom(n, P, self.moduli, factors)
            rom_rows = n // P
            rom_ports = []
            for lane in range(P):
                mem = memory.Memory(shape=qw, depth=len(rom[lane]), init=rom[lane])
                m.submodules[f"twiddle_rom{lane}"] = mem
                rom_ports.append(mem.read_port())
            rom_addr = Signal(range(len(rom[0])), name="rom_addr")
            m.d.comb += rom_addr.eq((rd.t0 >> lp) + (sel * 2 + inverse) * rom_rows)
            for rp in rom_ports:
                m.d.comb += [rp.addr.eq(rom_addr), rp.en.eq(1)]
        else:
            # psi^e (e = brv(t), inverse 2N - brv(t)) = hi[e >> h] * lo[e mod 2^h] per lane
            h = (n_log + 1) // 2
            hi_t, lo_t = otf_tables(n, self.moduli, factors)
            tw_lane = []
            for lane in range(P):
                e = Signal(n_log + 1, name=f"tw_e{lane}")
                brv = Cat(*reversed([rd.tw_idx[lane][i] for i in range(n_log)]))
                m.d.comb += e.eq(Mux(inverse, (2 * n - brv)[:n_log + 1], brv))
                ports = []
                for tag, table, addr in (("hi", hi_t, e[h:]), ("lo", lo_t, e[:h])):
                    mem = memory.Memory(shape=qw, depth=len(table), init=table)
                    m.submodules[f"twiddle_{tag}{lane}"] = mem
                    rp = mem.read_port()
                    m.d.comb += [rp.addr.eq(addr + sel * (len(table) // nsel)), rp.en.eq(1)]
                    ports.append(rp)
                mul = self._twiddle_multiplier()
                m.submodules[f"twiddle_mul{lane}"] = mul
                m.d.comb += [mul.a.eq(ports[0].data), mul.b.eq(ports[1].data), mul.en.eq(1)]
                if nsel > 1:
                    m.d.comb += mul.sel.eq(sel)
                tw_lane.append(mul.p[:qw])

        # ---- unload read side (handshake with a synchronous read: the port holds its data while
        # the consumer stalls)
        o_valid = Signal(name="o_valid")
        u_bank = Signal(BB, name="u_bank")
        u_last = Signal(name="u_last")
        u_en = Signal(name="u_en")
        u_idx = Signal(n_log + 1, name="u_idx")
        m.d.comb += [u_en.eq(~o_valid | self.o_stream.ready), u_idx.eq(beat << lp)]
        with m.If(state == UNLOAD):
            with m.If(u_en):
                with m.If(beat < self.beats):
                    m.d.sync += [o_valid.eq(1), beat.eq(beat + 1), u_bank.eq(_bank_of(u_idx[:n_log], n_log, BB)),
                                 u_last.eq(beat == self.beats - 1)]
                with m.Else():
                    m.d.sync += o_valid.eq(0)
            with m.If(o_valid & self.o_stream.ready & u_last):
                m.d.comb += self.done.eq(1)
                m.d.sync += [state.eq(IDLE), o_valid.eq(0), u_last.eq(0)]
        m.d.comb += self.o_stream.valid.eq(o_valid)
        for p in range(P):
            m.d.comb += self.o_stream.payload[p].eq(rdata[u_bank ^ p])

        # ---- stage 1: read data -> lanes
        bb1 = delay(rd.bb, 1, "bb")
        if self.twiddles == "rom":
            twb1 = [delay(rd.tw_bank[lane], 1, f"twb{lane}") for lane in range(P)]
            rom_data = Array(rp.data for rp in rom_ports)
        k1 = delay(rd.k, 1, "k")

        def slot_bank(lane, hi):
            # bank of the lane's lo / hi index: bb ^ rotl(slot, G0 mod B') for bit k
            offs = []
            for kk in range(n_log):
                kp = k_plan(kk, n_log, P)
                offs.append(Const(rotl(lane_lo_slot(lane, kp.kpos) | (hi << kp.kpos), kp.g0 % BB, BB), BB))
            return bb1 ^ Array(offs)[k1]

        # ---- stage 2: operand registers (transform or load), butterflies
        op2 = Signal(3, name="op2")
        a2 = [Signal(qw, name=f"a2_{lane}") for lane in range(P)]
        b2 = [Signal(qw, name=f"b2_{lane}") for lane in range(P)]
        w2 = [Signal(qw, name=f"w2_{lane}") for lane in range(P)]
        scale = Array(Const(c, qw) for p, q in enumerate(self.moduli)
                      for c in (factors[p] % q, pow(n, -1, q) * factors[p] % q))
        with m.If(load_take):
            m.d.sync += op2.eq(OP_CODES["mul"])
            for lane in range(P):
                m.d.sync += [a2[lane].eq(self.i_stream.payload[lane]), b2[lane].eq(scale[sel * 2 + inverse]),
                             w2[lane].eq(0)]
        with m.Else():
            m.d.sync += op2.eq(Mux(inverse, OP_CODES["gs"], OP_CODES["ct"]))
            for lane in range(P):
                m.d.sync += [a2[lane].eq(rdata[slot_bank(lane, 0)]),
                             b2[lane].eq(rdata[slot_bank(lane, 1)])]
                if self.twiddles == "rom":
                    m.d.sync += w2[lane].eq(rom_data[twb1[lane]])
        if self.twiddles == "otf":     # operands wait X cycles for the twiddle multipliers
            a2 = [delay(v, X, f"a2_{lane}") for lane, v in enumerate(a2)]
            b2 = [delay(v, X, f"b2_{lane}") for lane, v in enumerate(b2)]
            op2 = delay(op2, X, "op2")
            w2 = [Signal(qw, name=f"w_otf{lane}") for lane in range(P)]
            for lane in range(P):       # multiplier output (stage 1 + X) registered
                m.d.sync += w2[lane].eq(tw_lane[lane])
        xs, ys = [], []
        for lane in range(P):
            bf = Butterfly(zq=self._zq, target=self.target, latency=self.butterfly_latency)
            m.submodules[f"butterfly{lane}"] = bf
            m.d.comb += [bf.op.eq(op2), bf.a.eq(a2[lane]), bf.b.eq(b2[lane]), bf.w.eq(w2[lane]),
                         bf.c.eq(0), bf.en.eq(1)]
            if nsel > 1:
                m.d.comb += bf.sel.eq(sel)
            xs.append(delay(bf.x[:qw], E, f"x{lane}"))
            ys.append(delay(bf.y[:qw], E, f"y{lane}"))

        # ---- stage D: writes (in place: re-decode the delayed stage / cycle position)
        issue_d = delay(issue, D, "issue")
        stage_d = delay(stage, D, "stage")
        cyc_d = delay(cyc, D, "cyc")
        m.submodules.wr_decoder = wr = NttAddressDecoder(n, P, self.banking)
        m.d.comb += [wr.stage.eq(stage_d), wr.cyc.eq(cyc_d), wr.inverse.eq(inverse)]
        load_d = delay(load_take, L + 1 + X + E, "load")
        beat_d = delay(beat, L + 1 + X + E, "lbeat")
        l_idx = Signal(n_log + 1, name="l_idx")
        m.d.comb += l_idx.eq(beat_d << lp)
        l_bank = _bank_of(l_idx[:n_log], n_log, BB)
        # slot j's output: lane lo/hi by kpos
        slot_out = []
        for j in range(2 * P):
            opts = []
            for kp in range(B):
                lane = (j & ((1 << kp) - 1)) | ((j >> (kp + 1)) << kp)
                opts.append(ys[lane] if (j >> kp) & 1 else xs[lane])
            slot_out.append(Array(opts)[wr.kpos] if B > 1 else opts[0])
        slot_out = Array(slot_out)
        x_arr = Array(xs)
        for b, (rp, wp) in enumerate(banks):
            lsel = Signal(BB, name=f"lsel{b}")
            waddr = Signal(range(rows), name=f"waddr{b}")
            m.d.comb += lsel.eq(Const(b, BB) ^ l_bank)
            with m.If(load_d):             # beat word p goes to bank bank(beat*P) ^ p
                m.d.comb += [waddr.eq(l_idx >> BB), wp.data.eq(x_arr[lsel[:lp]] if lp else xs[0]),
                             wp.en.eq(lsel[lp:] == 0)]
            with m.Else():
                m.d.comb += [waddr.eq(wr.addr[b]), wp.data.eq(slot_out[wr.slot[b]]),
                             wp.en.eq(issue_d & wr.used[b])]
            raddr = Mux(state == UNLOAD, u_idx >> BB, rd.addr[b])
            ren = Mux(state == UNLOAD, u_en, 1)
            if single:
                m.d.comb += [wp.addr.eq(Mux(wp.en, waddr, raddr)), rp.addr.eq(Mux(wp.en, waddr, raddr)),
                             rp.en.eq(ren & ~wp.en)]
            else:
                m.d.comb += [wp.addr.eq(waddr), rp.addr.eq(raddr), rp.en.eq(ren)]
        return m
