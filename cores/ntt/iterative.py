"""Iterative, memory-based negacyclic NTT / INTT with P butterfly lanes and a run-time prime.

The memory plan is :mod:`hhe_gen.cores.ntt.schedule` (2P banks, bank(i) = XOR of the B-bit
chunks of i, conflict-free cosets, static stage start cycles from ``stage_starts``); the result is
:func:`hhe_gen.models.ntt.ntt` / :func:`~hhe_gen.models.ntt.intt` bit for bit (Lattigo's
convention: forward Cooley-Tukey natural -> bit-reversed, inverse Gentleman-Sande bit-reversed ->
natural with N^-1 folded in).

Datapath
--------
::

    cycle  x          x+1                 x+2                   x+3 ..             x+D-1          x+D
    read   bank addrs rdata -> XOR net -> rz -> static perm ->  operand regs ->    x, y -> static v -> XOR net ->
           (ROM addr  registered)         ROM data -> w         Butterfly (L)      perm -> v regs  banks (in place)

* 2P banks (``amaranth.lib.memory.Memory``, N/2P words each): one read port, transparent for the
  bank's one write port (a read in the cycle of a write to the same word sees the new value)
  (``banking="single"``: 4P one-address banks, see Banking);
  the address generator (:class:`~.address_decoder.NttAddressDecoder`, submodules ``rd_decoder`` and
  ``wr_decoder``) works from the stage counter and the cycle counter (a few constants per
  butterfly bit k in tables: the coset's lowest bit G0, the bank rotation G0 mod B, the pair bit's
  position and, for k < B-1, each lane's twiddle offset).
* Crossbars between the 2^B' banks and the 2P operands: slot j of a cycle's coset sits in bank
  bb XOR rotl(j, G0 mod B') (bb = bank(base) changes every cycle, the rotation and the slot's lane
  only with the stage), so each crossbar is split into an XOR network on bb (B' levels of 2:1
  multiplexers, word j <-> word j XOR 2^i at level i: 2^B' B' multiplexers per bit instead of
  2^B' full 2^B':1 multiplexers) and a static permutation per butterfly bit k (per operand a
  multiplexer over the few distinct sources it has across the stages, select = k), with a
  pipeline register between the two.  Read: XOR network (cycle x+1, registered ``rz``), static
  permutation into the operand registers (x+2).  Write: static permutation of the lanes' results
  into bank order (registered ``wvr``, cycle W-1), XOR network into the banks' write data (W).
  The unload reads through the read XOR network (beat word p = its output p: no multiplexer of
  its own) and the load writes through the write crossbar as the stage k = B-1 (slot p = lane p,
  no rotation).  Measured at N = 2^13, P = 8, 54 bits (ECP5, Yosys): the Array-indexed 16:1
  multiplexers of the previous version took ~51k of the core's 69k LUT4 (write side 33.5k: a
  kpos multiplexer per slot re-expanded inside every bank's multiplexer; read side 12k; unload
  5.3k), see ``hhe_gen.apps.bench.ntt``.
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
  A ROM bank larger than ``ROM_PIECE_WORDS`` (1024 words: one 1024 x 18 block RAM per 18 bits on
  ECP5 and 7-series, no multiplexer inside) is built from pieces of that depth, each read into a
  register next to its block RAM, then one registered piece multiplexer: X = 2 (measured: the
  unpieced 24576-word ROM of N = 2^13, P = 2, three 54-bit primes left the multiplexer Yosys
  builds behind the block RAMs as the critical path, 17.9 ns of which 16.2 ns routing, 55.8 MHz).
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
With L = the butterfly latency, D = the read-to-write depth (L + 4: read, one register in each
crossbar, the operand registers; + X with ``twiddles="otf"`` or a pieced ROM; single-port: the
next odd number, one register after the butterflies when needed), T = ``transform_cycles(inverse)``
(dual-port: the total of ``stage_starts(ntt_schedule(N, P, inverse), D)``, bound (N/2) log2 N / P
+ D - 1 for N >= 2^10, P <= 32; single-port: :func:`~.single_port.single_port_starts`):

* cycle 0: ``cmd`` accepted;
* load: cycles 1 .. N/P take the input beats, then ``load_wait`` cycles while the last beats go
  through the butterflies and the write crossbar (L + 1, + X, + 1 with the output register,
  + 1 single-port): ``load_cycles`` = N/P + load_wait;
* transform: T cycles from the first read to the cycle the unload may read, stage s starting
  ``starts[s]`` cycles after the first read (no other stall);
* unload: the first output beat is valid 1 cycle after the transform, one beat per cycle
  (``unload_cycles`` = N/P + 1); ``done`` pulses with the last beat's handshake and the next
  ``cmd`` can be accepted in the following cycle:
  ``command_cycles(inverse)`` = 1 + load_cycles + T + unload_cycles from one command to the next.

Gaps in the streams add exactly their own length; nothing depends on the data.

Measured (``hhe-gen bench ntt``, 30-bit Barrett, one prime, L = 8): T = bound + 11 (D = 12) or,
where the lane's twiddle ROM is pieced (2N/P > 1024 words, X = 2, D = 14), bound + 13, for every
N = 2^10 .. 2^16 and P = 1 .. 32 (N = 2^10, P = 32: + 15), e.g. N = 2^13, P = 8: 6669 cycles
(bound 6656), a whole command 8730 cycles.  Single-port (D = 15 there): N = 2^13, P = 8: 6806
(+2.3 %).
(Before the crossbar registers, D = 10: bound + 9, 6665 and 8723 cycles; single-port 6766;
before the ROM pieces 6667, 8726, single-port 6786.)

Banking
-------
``banking="dual"``: 2P banks of N/2P words, each with a read port and a write port (plan of
:mod:`hhe_gen.cores.ntt.schedule`).  ``banking="single"``: 4P banks of N/4P words, each used
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
                   otf_tables, rotl, rotr, schedule_starts, twiddle_rom)
from .single_port import single_port_starts

__all__ = ["IterativeNtt", "TWIDDLES", "BANKING"]

TWIDDLES = ("rom", "otf")
#: Depth of a twiddle ROM piece (``twiddles="rom"``): larger ROM banks are built from registered
#: pieces of this many words (X = ``ROM_PIECE_LATENCY`` extra cycles).
ROM_PIECE_WORDS = 1024
ROM_PIECE_LATENCY = 2
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
    butterfly_latency (L), tw_latency (X: otf the twiddle multiplier's latency; rom 0, or
    ROM_PIECE_LATENCY when a lane's ROM bank has several pieces), rom_words (words per lane's ROM
    bank, 2N len(moduli) / P), rom_piece_words (ROM_PIECE_WORDS), rom_pieces, out_regs, xbar_regs
    (the pipeline registers inside the read and the write crossbar: (1, 1)), depth (D),
    starts[inverse] (stage start cycles), factors (the reducer's constant factor per prime), plus
    the cycle formulas ``beats``, ``load_wait``, ``load_cycles``, ``transform_cycles(inverse)``,
    ``unload_cycles``, ``command_cycles(inverse)``, ``bound``.
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
        # rom: words per lane's ROM bank, pieces of ROM_PIECE_WORDS (registered when more than one)
        self.rom_words = 2 * n * len(self.moduli) // lanes if twiddles == "rom" else 0
        self.rom_piece_words = ROM_PIECE_WORDS
        self.rom_pieces = -(-self.rom_words // self.rom_piece_words)
        if self.rom_pieces > 1:
            self.tw_latency = ROM_PIECE_LATENCY
        # crossbar pipeline registers: one inside the read crossbar, one inside the write crossbar
        self.xbar_regs = (1, 1)
        # single: an odd read-to-write depth (one register after the butterflies if it is even)
        xr, xw = self.xbar_regs
        self.out_regs = int(single and (self.butterfly_latency + self.tw_latency + xr + xw) % 2 == 0)
        self.depth = self.butterfly_latency + 2 + xr + xw + self.tw_latency + self.out_regs
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
        """Cycles after the last input beat until the transform's first read: L + 1 (the write
        crossbar's register) (+ X, +1 for the output register, +1 for single-port banks, which
        read a word the cycle after its write)."""
        return (self.butterfly_latency + self.tw_latency + self.out_regs + self.xbar_regs[1]
                + (self.banking == "single"))

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
        XW = self.xbar_regs[1]
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

        def delay_chain(sig, cycles, name):
            """[sig, sig delayed 1, .., sig delayed ``cycles``] (registers ``<name>_d1`` ..)."""
            chain = [sig]
            for i in range(cycles):
                r = Signal.like(sig, name=f"{name}_d{i + 1}") if isinstance(sig, Signal) else \
                    Signal(len(sig), name=f"{name}_d{i + 1}")
                m.d.sync += r.eq(chain[-1])
                chain.append(r)
            return chain

        def delay(sig, cycles, name):
            return delay_chain(sig, cycles, name)[-1]

        def stage_k(stg):
            """The butterfly bit k of stage ``stg`` (forward n-1-s, inverse s)."""
            return Mux(inverse, stg, n_log - 1 - stg)

        def xor_network(words, select, name):
            """out[j] = words[j ^ select] (``select`` B' bits): B' levels of 2:1 multiplexers, level i
            swapping the words j and j ^ 2^i when bit i of ``select`` is set."""
            for i in range(len(select)):
                level = []
                for j, word in enumerate(words):
                    s = Signal(qw, name=f"{name}{i}_{j}")
                    m.d.comb += s.eq(Mux(select[i], words[j ^ (1 << i)], word))
                    level.append(s)
                words = level
            return words

        def static_select(k, sources, name):
            """A word chosen by the butterfly bit k among ``sources[kk]`` (one per k; None: don't
            care): one multiplexer input per distinct source, the most frequent one the default."""
            groups = {}
            for kk, src in enumerate(sources):
                if src is not None:
                    groups.setdefault(id(src), (src, []))[1].append(kk)
            order = sorted(groups.values(), key=lambda g: -len(g[1]))
            out = Signal(qw, name=name)
            if not order:                              # never used (single-port: some banks)
                return out
            if len(order) == 1:
                m.d.comb += out.eq(order[0][0])
                return out
            with m.Switch(k):
                for src, ks in order[1:]:
                    with m.Case(*ks):
                        m.d.comb += out.eq(src)
                with m.Default():
                    m.d.comb += out.eq(order[0][0])
            return out

        plans = [k_plan(kk, n_log, P) for kk in range(n_log)]

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

        # ---- twiddles: addressed one cycle after the read (the data meets the operands, which
        # spend one cycle more in the read crossbar)
        factors = self.factors
        X = self.tw_latency
        if self.twiddles == "rom":
            rom = twiddle_rom(n, P, self.moduli, factors)
            assert len(rom[0]) == self.rom_words
            rom_rows = n // P
            rom_addr = Signal(range(len(rom[0])), name="rom_addr")
            m.d.sync += rom_addr.eq((rd.t0 >> lp) + (sel * 2 + inverse) * rom_rows)
            rom_words = []          # per lane: the word read (cycle x+2, or x+2+X from pieces)
            pw = self.rom_piece_words
            if self.rom_pieces > 1:     # the piece index, aligned with the pieces' registers
                which = delay(rom_addr[pw.bit_length() - 1:], 2, "tw_piece_sel")
            for lane in range(P):
                if self.rom_pieces == 1:
                    mem = memory.Memory(shape=qw, depth=len(rom[lane]), init=rom[lane])
                    m.submodules[f"twiddle_rom{lane}"] = mem
                    rp = mem.read_port()
                    m.d.comb += [rp.addr.eq(rom_addr), rp.en.eq(1)]
                    rom_words.append(rp.data)
                    continue
                piece_q = []
                for i in range(self.rom_pieces):
                    words = rom[lane][i * pw:(i + 1) * pw]
                    mem = memory.Memory(shape=qw, depth=len(words), init=words)
                    m.submodules[f"twiddle_rom{lane}_{i}"] = mem
                    rp = mem.read_port()
                    m.d.comb += [rp.addr.eq(rom_addr[:pw.bit_length() - 1]), rp.en.eq(1)]
                    q = Signal(qw, name=f"tw_piece{lane}_{i}")
                    m.d.sync += q.eq(rp.data)
                    piece_q.append(q)
                word = Signal(qw, name=f"tw_word{lane}")
                m.d.sync += word.eq(Array(piece_q)[which])
                rom_words.append(word)
        else:
            # psi^e (e = brv(t), inverse 2N - brv(t)) = hi[e >> h] * lo[e mod 2^h] per lane
            h = (n_log + 1) // 2
            hi_t, lo_t = otf_tables(n, self.moduli, factors)
            tw_lane = []
            for lane in range(P):
                e = Signal(n_log + 1, name=f"tw_e{lane}")
                brv = Cat(*reversed([rd.tw_idx[lane][i] for i in range(n_log)]))
                m.d.sync += e.eq(Mux(inverse, (2 * n - brv)[:n_log + 1], brv))
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
        r_sel = Signal(BB, name="r_sel")        # the read XOR network's select (below)
        u_last = Signal(name="u_last")
        u_en = Signal(name="u_en")
        u_idx = Signal(n_log + 1, name="u_idx")
        m.d.comb += [u_en.eq(~o_valid | self.o_stream.ready), u_idx.eq(beat << lp)]
        with m.If(state == UNLOAD):
            with m.If(u_en):
                with m.If(beat < self.beats):
                    m.d.sync += [o_valid.eq(1), beat.eq(beat + 1), r_sel.eq(_bank_of(u_idx[:n_log], n_log, BB)),
                                 u_last.eq(beat == self.beats - 1)]
                with m.Else():
                    m.d.sync += o_valid.eq(0)
            with m.If(o_valid & self.o_stream.ready & u_last):
                m.d.comb += self.done.eq(1)
                m.d.sync += [state.eq(IDLE), o_valid.eq(0), u_last.eq(0)]
        m.d.comb += self.o_stream.valid.eq(o_valid)

        # ---- read crossbar, stage 1 (cycle x+1): the read data through the XOR network,
        # z[j] = bank (bb ^ j)'s word (bb = bank(base) of the coset read in x; unload: the beat's
        # bank, held while the consumer stalls, so the beat's word p is z[p]), registered; the
        # select is a register of its own (a multiplexed select made the mapper collapse the
        # network towards a full multiplexer per word)
        with m.If(state != UNLOAD):
            m.d.sync += r_sel.eq(rd.bb)
        z = xor_network([rp.data for rp, _ in banks], r_sel, "rx")
        for p in range(P):
            m.d.comb += self.o_stream.payload[p].eq(z[p])
        zr = [Signal(qw, name=f"rz{j}") for j in range(nb)]
        m.d.sync += [r.eq(v) for r, v in zip(zr, z)]

        # ---- read crossbar, stage 2 (cycle x+2): lane l's lo / hi operand is slot
        # lane_lo_slot(l, kpos) (| 2^kpos), in z at rotl(slot, G0 mod B') - a static choice per k
        k2 = delay(rd.k, 2, "k")
        if self.twiddles == "rom":
            twb2 = [delay(rd.tw_bank[lane], 2 + X, f"twb{lane}") for lane in range(P)]
            rom_data = Array(rom_words)

        def operand(lane, hi):
            return static_select(k2, [zr[rotl(lane_lo_slot(lane, kp.kpos) | (hi << kp.kpos), kp.g0 % BB, BB)]
                                      for kp in plans], f"{'hi' if hi else 'lo'}_op{lane}")

        # ---- operand registers (transform or load), butterflies
        op2 = Signal(3, name="op2")
        a2 = [Signal(qw, name=f"a2_{lane}") for lane in range(P)]
        b2 = [Signal(qw, name=f"b2_{lane}") for lane in range(P)]
        w2 = [Signal(qw, name=f"w2_{lane}") for lane in range(P)]
        scale = Array(Const(c, qw) for p, q in enumerate(self.moduli)
                      for c in (factors[p] % q, pow(n, -1, q) * factors[p] % q))
        lo_ops = [operand(lane, 0) for lane in range(P)]
        hi_ops = [operand(lane, 1) for lane in range(P)]
        with m.If(load_take):
            m.d.sync += op2.eq(OP_CODES["mul"])
            for lane in range(P):
                m.d.sync += [a2[lane].eq(self.i_stream.payload[lane]), b2[lane].eq(scale[sel * 2 + inverse]),
                             w2[lane].eq(0)]
        with m.Else():
            m.d.sync += op2.eq(Mux(inverse, OP_CODES["gs"], OP_CODES["ct"]))
            for lane in range(P):
                m.d.sync += [a2[lane].eq(lo_ops[lane]), b2[lane].eq(hi_ops[lane])]
                if self.twiddles == "rom" and not X:
                    m.d.sync += w2[lane].eq(rom_data[twb2[lane]])
        if X:       # operands wait X cycles for the twiddle multipliers / the ROM pieces
            a2 = [delay(v, X, f"a2_{lane}") for lane, v in enumerate(a2)]
            b2 = [delay(v, X, f"b2_{lane}") for lane, v in enumerate(b2)]
            op2 = delay(op2, X, "op2")
            w2 = [Signal(qw, name=f"w_late{lane}") for lane in range(P)]
            for lane in range(P):       # the twiddle at stage 2 + X, registered (the load's mul ignores it)
                m.d.sync += w2[lane].eq(tw_lane[lane] if self.twiddles == "otf" else rom_data[twb2[lane]])
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

        # ---- write crossbar, stage 1 (cycle W-1, W = x+D the write cycle): the lanes' results in
        # bank order up to the XOR: v[rotl(slot, G0 mod B')] = slot's result (slot j: lane j
        # without bit kpos, its x if bit kpos is 0, else its y), a static choice per k; a load
        # writes like k = B-1 (kpos = B-1, no rotation: slot p < P is lane p's x), registered
        issue_d = delay(issue, D, "issue")
        stage_c = delay_chain(stage, D, "stage")
        cyc_d = delay(cyc, D, "cyc")
        lw = load_take if XW == 0 else delay(load_take, XW, "load_w")
        load_c = delay_chain(lw, L + 1 + X + E, "load")     # load_d<L+1+X+E>: a load write in W
        load_d = load_c[-1]
        beat_c = delay_chain(beat, L + 1 + X + E + XW, "lbeat")
        beat_d = beat_c[-1]
        kw = Signal(range(n_log), name="k_w")         # registered (in W-2), like the read side's k
        m.d.sync += kw.eq(Mux(load_c[-3], B - 1, stage_k(stage_c[-3])))
        v = []
        for j in range(nb):
            sources = []
            for kp in plans:
                slot = rotr(j, kp.g0 % BB, BB)
                if slot >> B:                          # single-port: no slot in this bank half
                    sources.append(None)
                    continue
                lane = (slot & ((1 << kp.kpos) - 1)) | ((slot >> (kp.kpos + 1)) << kp.kpos)
                sources.append(ys[lane] if (slot >> kp.kpos) & 1 else xs[lane])
            vj = static_select(kw, sources, f"wv{j}")
            r = Signal(qw, name=f"wvr{j}")
            m.d.sync += r.eq(vj)
            v.append(r)

        # ---- write crossbar, stage 2 (cycle W): bank b writes v[b ^ bb] (bb of the coset written,
        # or of the load beat), at the address of the write decoder (re-decodes the delayed stage /
        # cycle position: the results go back in place) or of the load beat
        m.submodules.wr_decoder = wr = NttAddressDecoder(n, P, self.banking)
        m.d.comb += [wr.stage.eq(stage_c[-1]), wr.cyc.eq(cyc_d), wr.inverse.eq(inverse)]
        l_idx = Signal(n_log + 1, name="l_idx")
        m.d.comb += l_idx.eq(beat_d << lp)
        l_bank = Signal(BB, name="l_bank")
        m.d.comb += l_bank.eq(_bank_of(l_idx[:n_log], n_log, BB))
        # the XOR network's select, registered in W-1 (a select computed in W through the write
        # decoder made the mapper collapse the network into a full multiplexer per bank: 8 LUT4
        # per bit instead of ~4): the load beat's bank or the coset's bb = the read decoder's bb of
        # the read D cycles earlier
        w_sel = Signal(BB, name="w_sel")
        bb_c = delay_chain(rd.bb, D - 1, "bbw")
        m.d.sync += w_sel.eq(Mux(load_c[-2], _bank_of((beat_c[-2] << lp)[:n_log], n_log, BB), bb_c[-1]))
        wdata = xor_network(v, w_sel, "wx")
        for b, (rp, wp) in enumerate(banks):
            waddr = Signal(range(rows), name=f"waddr{b}")
            m.d.comb += wp.data.eq(wdata[b])
            with m.If(load_d):             # beat word p goes to bank bank(beat*P) ^ p
                m.d.comb += [waddr.eq(l_idx >> BB), wp.en.eq(((b ^ l_bank) >> lp) == 0)]
            with m.Else():
                m.d.comb += [waddr.eq(wr.addr[b]), wp.en.eq(issue_d & wr.used[b])]
            raddr = Mux(state == UNLOAD, u_idx >> BB, rd.addr[b])
            ren = Mux(state == UNLOAD, u_en, 1)
            if single:
                m.d.comb += [wp.addr.eq(Mux(wp.en, waddr, raddr)), rp.addr.eq(Mux(wp.en, waddr, raddr)),
                             rp.en.eq(ren & ~wp.en)]
            else:
                m.d.comb += [wp.addr.eq(waddr), rp.addr.eq(raddr), rp.en.eq(ren)]
        return m
