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
  bank's one write port (a read in the cycle of a write to the same word sees the new value;
  the banks of ``memory="external"`` need not be: the schedule then reads a cycle later)
  (``banking="single"``: 4P one-address banks, see Banking);
  the address generator (:class:`~.address_decoder.NttAddressDecoder`, submodules ``rd_decoder`` and
  ``wr_decoder``) works from the stage counter and the cycle counter (a few constants per
  butterfly bit k in tables: the coset's lowest bit G0, the bank rotation G0 mod B, the pair bit's
  position and, for k < B-1, each lane's twiddle offset).
* Crossbars between the 2^B' banks and the 2P operands (:mod:`.crossbar`): an XOR network on
  bb = bank(base) and a static permutation per butterfly bit k, with a pipeline register between
  the two.  Read: XOR network (cycle x+1, registered ``rz``), static permutation into the operand
  registers (x+2).  Write: static permutation of the lanes' results
  into bank order (registered ``wvr``, cycle W-1), XOR network into the banks' write data (W).
  The unload reads through the read XOR network (beat word p = its output p: no multiplexer of
  its own) and the load writes through the write crossbar as the stage k = B-1 (slot p = lane p,
  no rotation).
* One :class:`hhe_gen.cores.arith.Butterfly` per lane (op ct forward, gsh inverse; ``en`` = 1 always:
  a fixed pipeline, no data-dependent timing).
* Twiddles (:mod:`.twiddle_source`), ``twiddles="rom"``: P ROM banks per :func:`~.plan.twiddle_rom`
  (2N words per prime), built from registered pieces of ``ROM_PIECE_WORDS`` words above that
  size (X = ``ROM_PIECE_LATENCY``); ``twiddles="otf"``: on the fly, each lane forms psi^e as
  hi[e >> h] * lo[e mod 2^h] from two small tables (:func:`~.plan.otf_tables`) with one more
  modular multiplier of the butterfly's kind (its minimum latency X); the operands wait X
  cycles in registers, so D grows by X.
* N^-1: the Butterfly's GS sum has no multiplier, so the inverse does not fold N^-1 into its last
  butterflies; instead every inverse butterfly halves both its results (op ``gsh``: (a + b)/2,
  (a - b) w/2), so the log2 N stages multiply by 2^-log2 N = N^-1 - in Z_q the orders give the
  same residues, and the last stage uses psi^-brv(1) alone (the model's ``last_inv`` is
  psi^-brv(1) * N^-1).  The load sends every coefficient through the butterflies with op ``mul``
  and b = the reducer's factor (a * 1).  For the Montgomery kinds every constant is stored times
  R mod q.

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
+ D - 1 for N >= 2^10, P <= 32; with ``memory="external"`` write_first=False, the banks outside
need no bypass; single-port: :func:`~.single_port.single_port_starts`):

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

For the default 30-bit Barrett butterfly (L = 8) T is bound + D - 1: bound + 11 (D = 12), or,
where the lane's twiddle ROM is pieced (2N/P > 1024 words, X = 2, D = 14), bound + 13, for
N = 2^10 .. 2^16 and P = 1 .. 32 but N = 2^10, P = 32 (+ 15); single-port banking has D = 13
(15 with ROM pieces).  The cycles ``hhe-gen bench ntt`` measures (its ``cycles-*`` cases) are the
ntt-cycles table of docs/figures.md.

Banking
-------
``banking="dual"``: 2P banks of N/2P words, each with a read port and a write port (plan of
:mod:`hhe_gen.cores.ntt.schedule`).  ``banking="single"``: 4P banks of N/4P words, each used
through ONE address per cycle (read or write, the 1RW banks of RACE, section 4.3.2),
P <= N/4; the plan is :mod:`.single_port` (bank bits B + 1, each stage's cycles reordered so that
the reads of a cycle and the writes landing in it use disjoint halves of the banks - the role of
RACE's NTT_swap4 output reordering, with no reorder buffer, the results stay in place).

In place
--------
``memory="external"`` (dual banking only): the 2P banks live outside the core, behind the
``bank_port`` (:mod:`.bank_port`: word i in bank bank(i) at address i >> B, the layout above), and
the core transforms the polynomial where it lies: no load, no unload.  The holder serves the
first stage's reads (``first``) from the source polynomial and every other read and every write
from the destination, so a transform from one place into another costs nothing more.  The load's
one job moves: ``lift`` (command) turns each word w of bank_width bits read by the first stage
into w + q when it is negative (a signed input).  Cycles: cycle 0 takes the command, the first
read is in cycle 1, and ``done`` comes in cycle T + 1 (the last write lands in it), in either
direction: ``command_cycles`` = T + 2, against T + 2 N/P + ``load_wait`` + 2 with the core's own
banks.
"""

from __future__ import annotations

from types import SimpleNamespace

from amaranth.hdl import Array, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.arith.butterfly import OP_CODES
from hhe_gen.cores.arith.butterfly_array import butterfly_lanes_signature, sequencer_lanes
from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.params.checks import check_int
from hhe_gen.params.errors import ParameterError

from .address_decoder import NttAddressDecoder
from .address_decoder import bank_of as _bank_of
from .crossbar import delay, delay_chain, read_operand, write_slots, xor_network
from .bank_port import bank_port_signature
from .iterative_control import IDLE, RUN, UNLOAD, controller
from .plan import (butterfly_choice, lane_multiplier, check_lanes, check_moduli, check_n, k_plan, otf_tables,
                   schedule_starts, twiddle_rom)
from .single_port import single_port_starts
from .twiddle_source import otf_twiddles, rom_twiddles

__all__ = ["IterativeNtt", "IterativeNttPlan", "TWIDDLES", "BANKING", "BUTTERFLIES"]

TWIDDLES = ("rom", "otf")
#: Depth of a twiddle ROM piece (``twiddles="rom"``): larger ROM banks are built from registered
#: pieces of this many words (X = ``ROM_PIECE_LATENCY`` extra cycles).
ROM_PIECE_WORDS = 1024
ROM_PIECE_LATENCY = 2
BANKING = ("dual", "single")
MEMORY = ("own", "external")
BUTTERFLIES = ("own", "external")


class IterativeNttPlan:
    """What an :class:`IterativeNtt` of these parameters is, with no hardware made: the same
    parameters and refusals, every member of the core but its ports (``port_members`` holds their
    signature members), and its cycle formulas (``command_cycles`` ...).  The engine's NTT unit
    reads its latencies from it."""

    def __init__(self, n, lanes, moduli, *, kind="barrett", latency=None, target="ecp5", twiddles="rom",
                 banking="dual", memory="own", bank_width=None, butterflies="own", **reducer):
        self.n_log = check_n(n)
        self.n = n
        self.lanes_log = check_lanes(lanes, n)
        self.lanes = lanes
        self.moduli = check_moduli(moduli, n)
        if twiddles not in TWIDDLES:
            raise ParameterError("twiddles", twiddles, "one of " + ", ".join(map(repr, TWIDDLES)))
        if banking not in BANKING:
            raise ParameterError("banking", banking, "one of " + ", ".join(map(repr, BANKING)))
        if memory not in MEMORY:
            raise ParameterError("memory", memory, "one of " + ", ".join(map(repr, MEMORY)))
        if memory == "external" and banking != "dual":
            raise ParameterError("banking", banking, "'dual' with memory='external'")
        if butterflies not in BUTTERFLIES:
            raise ParameterError("butterflies", butterflies, "one of " + ", ".join(map(repr, BUTTERFLIES)))
        self.butterflies = butterflies
        self.twiddles, self.banking, self.memory = twiddles, banking, memory
        self.external = memory == "external"
        self.kind = kind
        bf = butterfly_choice(self.n_log, self.moduli, kind, target, latency, reducer)
        self._zq, self.target = bf.zq, target
        self.butterfly_plan = bf.plan
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
            self.tw_latency = self._twiddle_multiplier(plan=True).latency
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
                # the core's own banks bypass a write to a read in its cycle; banks held outside
                # need not (a read comes a cycle after the write it needs)
                self.starts[inv], self._totals[inv] = schedule_starts(n, lanes, inv, self.depth,
                                                                      write_first=not self.external)
        coef = unsigned(self.qbits)
        self.beat_layout = data.ArrayLayout(coef, lanes)
        fields = {"inverse": 1, "sel": range(len(self.moduli))}
        members = {"busy": Out(1), "done": Out(1)}
        if self.external:
            self.bank_width = self.qbits if bank_width is None else bank_width
            check_int("bank_width", self.bank_width, self.qbits, 64)
            fields["lift"] = 1
            members["bank_port"] = Out(bank_port_signature(self.banks, n >> self.bank_bits, self.bank_width))
        else:
            members["i_stream"] = In(stream.Signature(self.beat_layout))
            members["o_stream"] = Out(stream.Signature(self.beat_layout))
        if butterflies == "external":
            members["lanes_port"] = Out(butterfly_lanes_signature(self.butterfly_plan, lanes))
        self.cmd_layout = data.StructLayout(fields)
        self.port_members = {"cmd": In(stream.Signature(self.cmd_layout)), **members}

    def _twiddle_multiplier(self, plan: bool = False):
        """The raw modular multiplier of one lane's twiddle (the butterfly's reducer, its minimum
        latency; ``plan``: its plan only)."""
        return lane_multiplier(self._zq, self.bfly_width, self.target, plan=plan)

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
        """Cycles from a command's acceptance to the next one's (full rate); ``done`` comes in the
        last of them."""
        if self.external:
            return 1 + self.transform_cycles(inverse) + 1
        return 1 + self.load_cycles + self.transform_cycles(inverse) + self.unload_cycles

    @property
    def bound(self) -> int:
        """(N/2) log2(N) / P: the butterfly bound."""
        return self.n // 2 * self.n_log // self.lanes


class IterativeNtt(IterativeNttPlan, wiring.Component):
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
    memory : str      "own" (the core's banks, streams in and out) or "external" (dual banking:
                      the 2P banks are outside, behind the ``bank_port``, and the transform runs
                      in place there; see In place)
    bank_width : int or None   external: bits of a bank word, qbits .. 64 (default qbits); a read
                      word is cut to qbits bits (or lifted, see In place), a written one
                      zero-extended
    **reducer : the reducer's own parameters (width, k, log_n, word_bits, karatsuba ...)

    Members
    -------
    cmd : In(stream.Signature(StructLayout({"inverse": 1, "sel": range(len(moduli))})))
                      (external: also ``lift``, 1 bit)
    i_stream : In(stream.Signature(ArrayLayout(qbits, P)))    own memory only
    o_stream : Out(stream.Signature(ArrayLayout(qbits, P)))   own memory only
    bank_port : Out(:func:`.bank_port.bank_port_signature`)  external memory only
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
    def __init__(self, n, lanes, moduli, **options):
        IterativeNttPlan.__init__(self, n, lanes, moduli, **options)
        wiring.Component.__init__(self, self.port_members)

    # -- hardware ---------------------------------------------------------------------------------------
    def elaborate(self, platform):
        """The core in parts, in this order, all in one module ``m``: the controller
        (:mod:`.iterative_control`), the read decoder and the data banks, the twiddles, the unload
        read side, the read crossbar, the operand registers and butterflies, the write crossbar and
        the banks' ports.  ``s`` collects the signals the parts share."""
        m = Module()
        s = controller(m, self)
        s.plans = [k_plan(kk, self.n_log, self.lanes) for kk in range(self.n_log)]
        self._data_banks(m, s)
        self._twiddles(m, s)
        if not self.external:
            self._unload(m, s)
        self._read_crossbar(m, s)
        self._butterflies(m, s)
        self._write_crossbar(m, s)
        self._bank_ports(m, s)
        return m

    def _data_banks(self, m, s):
        """The read address decoder (``s.rd``, :mod:`.address_decoder`: from the controller's stage
        and cycle position; the write side's, in ``_bank_ports``, from the same values delayed D
        cycles) and the data memories (``s.banks``: (read port, write port) per bank; dual: the read
        port is transparent for the write port; single: the two ports share one address and are
        never enabled together, a 1RW bank)."""
        m.submodules.rd_decoder = rd = NttAddressDecoder(self.n, self.lanes, self.banking)
        m.d.comb += [rd.stage.eq(s.stage), rd.cyc.eq(s.cyc), rd.inverse.eq(s.inverse)]
        s.rd = rd
        s.banks = []
        if self.external:
            self._external_banks(m, s)
            return
        for b in range(self.banks):
            mem = memory.Memory(shape=self.qbits, depth=self.n >> self.bank_bits, init=[])
            m.submodules[f"bank{b}"] = mem
            wp = mem.write_port()
            rp = mem.read_port(transparent_for=() if self.banking == "single" else (wp,))
            s.banks.append((rp, wp))

    def _external_banks(self, m, s):
        """External memory: ``s.banks`` are the bank port's signals (read data cut to qbits, or
        lifted, signed w -> w + q if w < 0, when ``lift`` is set and the word was read by the first
        stage); no state reads beats (``s.read_state`` None), so ``s.r_sel`` follows the read
        decoder."""
        port, qw, wb = self.bank_port, self.qbits, self.bank_width
        prime_q = Array(Const(q, wb) for q in self.moduli)
        lift_now = Signal(name="lift_now")
        first = Signal(name="first_read")
        m.d.comb += [first.eq((s.state == RUN) & (s.stage == 0)), port.first.eq(first),
                     port.ren.eq(s.state == RUN)]
        s.read_state = None
        s.r_sel = Signal(self.bank_bits, name="r_sel")
        m.d.sync += lift_now.eq(first & s.lift)
        for b in range(self.banks):
            word = port.rdata[b]
            value = Signal(qw, name=f"bank_word{b}")
            m.d.comb += value.eq(Mux(lift_now & word[wb - 1], (word + prime_q[s.sel])[:qw], word[:qw]))
            rp = SimpleNamespace(addr=port.raddr[b], data=value, en=Signal(name=f"ren{b}"))
            wp = SimpleNamespace(addr=port.waddr[b], data=port.wdata[b], en=port.wen[b])
            s.banks.append((rp, wp))

    def _twiddles(self, m, s):
        """The lanes' twiddles (:mod:`.twiddle_source`), addressed one cycle after the read (the data
        meets the operands, which spend one cycle more in the read crossbar): ``s.rom_words`` (rom)
        or ``s.tw_lane`` (otf)."""
        n, P = self.n, self.lanes
        if self.twiddles == "rom":
            rom = twiddle_rom(n, P, self.moduli, self.factors)
            assert len(rom[0]) == self.rom_words
            rom_rows = n // P
            rom_addr = Signal(range(len(rom[0])), name="rom_addr")
            m.d.sync += rom_addr.eq((s.rd.t0 >> self.lanes_log) + (s.sel * 2 + s.inverse) * rom_rows)
            s.rom_words = rom_twiddles(m, rom, rom_addr, self.rom_piece_words, self.rom_pieces, self.qbits)
        else:
            s.tw_lane = otf_twiddles(m, self.n_log, P, otf_tables(n, self.moduli, self.factors), s.rd.tw_idx,
                                     s.inverse, s.sel, len(self.moduli), self.qbits, self._twiddle_multiplier)

    def _unload(self, m, s):
        """Unload read side (handshake with a synchronous read: the port holds its data while the
        consumer stalls): ``s.r_sel`` (the read XOR network's select), ``s.u_idx``, ``s.u_en``."""
        n_log, lp, BB = self.n_log, self.lanes_log, self.bank_bits
        state, beat = s.state, s.beat
        o_valid = Signal(name="o_valid")
        s.r_sel = r_sel = Signal(BB, name="r_sel")        # the read XOR network's select (below)
        u_last = Signal(name="u_last")
        s.u_en = u_en = Signal(name="u_en")
        s.u_idx = u_idx = Signal(n_log + 1, name="u_idx")
        s.read_state = UNLOAD
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

    def _read_crossbar(self, m, s):
        """Read crossbar, stage 1 (cycle x+1): the read data through the XOR network, z[j] = bank
        (bb ^ j)'s word (bb = bank(base) of the coset read in x; unload: the beat's bank, held while
        the consumer stalls, so the beat's word p is z[p]), registered (``s.zr``); the select is a
        register of its own (a multiplexed select made the mapper collapse the network towards a full
        multiplexer per word).  Then the stage-2 selects: ``s.k2``, ``s.twb2`` and ``s.rom_data``."""
        if s.read_state is None:
            m.d.sync += s.r_sel.eq(s.rd.bb)
        else:
            with m.If(s.state != s.read_state):
                m.d.sync += s.r_sel.eq(s.rd.bb)
        s.z = z = xor_network(m, [rp.data for rp, _ in s.banks], s.r_sel, self.qbits, "rx")
        if not self.external:
            for p in range(self.lanes):
                m.d.comb += self.o_stream.payload[p].eq(z[p])
        s.zr = [Signal(self.qbits, name=f"rz{j}") for j in range(self.banks)]
        m.d.sync += [r.eq(v) for r, v in zip(s.zr, z)]

        # ---- stage 2 (cycle x+2, :func:`~.crossbar.read_operand`): the butterfly bit k, the ROM banks
        s.k2 = delay(m, s.rd.k, 2, "k")
        if self.twiddles == "rom":
            s.twb2 = [delay(m, s.rd.tw_bank[lane], 2 + self.tw_latency, f"twb{lane}")
                      for lane in range(self.lanes)]
            s.rom_data = Array(s.rom_words)

    def _butterflies(self, m, s):
        """Operand registers (transform or load; a load multiplies by 1 in the reducer's form) and
        the lanes' butterflies (ct forward, gsh inverse): ``s.xs``, ``s.ys`` (their results, after
        ``out_regs`` registers)."""
        P, qw, X = self.lanes, self.qbits, self.tw_latency
        sel, inverse = s.sel, s.inverse
        op2 = Signal(3, name="op2")
        a2 = [Signal(qw, name=f"a2_{lane}") for lane in range(P)]
        b2 = [Signal(qw, name=f"b2_{lane}") for lane in range(P)]
        w2 = [Signal(qw, name=f"w2_{lane}") for lane in range(P)]
        one = Array(Const(f % q, qw) for f, q in zip(self.factors, self.moduli))
        lo_ops = [read_operand(m, s.k2, s.zr, s.plans, lane, 0, self.bank_bits, qw) for lane in range(P)]
        hi_ops = [read_operand(m, s.k2, s.zr, s.plans, lane, 1, self.bank_bits, qw) for lane in range(P)]
        with m.If(s.load_take):        # own memory only (external: no load, load_take 0)
            m.d.sync += op2.eq(OP_CODES["mul"])
            if not self.external:
                for lane in range(P):
                    m.d.sync += [a2[lane].eq(self.i_stream.payload[lane]), b2[lane].eq(one[sel]),
                                 w2[lane].eq(0)]
        with m.Else():
            m.d.sync += op2.eq(Mux(inverse, OP_CODES["gsh"], OP_CODES["ct"]))
            for lane in range(P):
                m.d.sync += [a2[lane].eq(lo_ops[lane]), b2[lane].eq(hi_ops[lane])]
                if self.twiddles == "rom" and not X:
                    m.d.sync += w2[lane].eq(s.rom_data[s.twb2[lane]])
        if X:       # operands wait X cycles for the twiddle multipliers / the ROM pieces
            a2 = [delay(m, v, X, f"a2_{lane}") for lane, v in enumerate(a2)]
            b2 = [delay(m, v, X, f"b2_{lane}") for lane, v in enumerate(b2)]
            op2 = delay(m, op2, X, "op2")
            w2 = [Signal(qw, name=f"w_late{lane}") for lane in range(P)]
            for lane in range(P):       # the twiddle at stage 2 + X, registered (the load's mul ignores it)
                m.d.sync += w2[lane].eq(s.tw_lane[lane] if self.twiddles == "otf" else s.rom_data[s.twb2[lane]])
        lanes = sequencer_lanes(m, self, P, zq=self._zq, target=self.target, latency=self.butterfly_latency)
        m.d.comb += lanes.op.eq(op2)
        if len(self.moduli) > 1:
            m.d.comb += lanes.sel.eq(sel)
        s.xs, s.ys = [], []
        for lane in range(P):
            m.d.comb += [lanes.a[lane].eq(a2[lane]), lanes.b[lane].eq(b2[lane]), lanes.w[lane].eq(w2[lane]),
                         lanes.c[lane].eq(0)]
            s.xs.append(delay(m, lanes.x[lane][:qw], self.out_regs, f"x{lane}"))
            s.ys.append(delay(m, lanes.y[lane][:qw], self.out_regs, f"y{lane}"))

    def _write_crossbar(self, m, s):
        """Write crossbar, stage 1 (cycle W-1, W = x+D the write cycle): the lanes' results in bank
        order up to the XOR (:func:`~.crossbar.write_slots`, ``s.v``); a load writes like k = B-1
        (kpos = B-1, no rotation: slot p < P is lane p's x).  Also the controller's values delayed
        to W (``s.issue_d``, ``s.stage_c``, ``s.cyc_d``, ``s.load_c``, ``s.beat_c``)."""
        B, n_log, D, XW = self.coset_bits, self.n_log, self.depth, self.xbar_regs[1]
        latency = self.butterfly_latency + 1 + self.tw_latency + self.out_regs      # L + 1 + X + E
        s.issue_d = delay(m, s.issue, D, "issue")
        s.stage_c = stage_c = delay_chain(m, s.stage, D, "stage")
        s.cyc_d = delay(m, s.cyc, D, "cyc")
        lw = s.load_take if XW == 0 else delay(m, s.load_take, XW, "load_w")
        s.load_c = load_c = delay_chain(m, lw, latency, "load")     # load_d<L+1+X+E>: a load write in W
        s.beat_c = delay_chain(m, s.load_beat, latency + XW, "lbeat")
        kw = Signal(range(n_log), name="k_w")         # registered (in W-2), like the read side's k
        m.d.sync += kw.eq(Mux(load_c[-3], B - 1, Mux(s.inverse, stage_c[-3], n_log - 1 - stage_c[-3])))
        s.v = write_slots(m, kw, s.xs, s.ys, s.plans, B, self.bank_bits, self.qbits)

    def _bank_ports(self, m, s):
        """Write crossbar, stage 2 (cycle W): bank b writes v[b ^ bb] (bb of the coset written, or of
        the load beat), at the address of the write decoder (re-decodes the delayed stage / cycle
        position: the results go back in place) or of the load beat; and the banks' read addresses
        (the read decoder's, or the unload beat's)."""
        n_log, lp, BB, D = self.n_log, self.lanes_log, self.bank_bits, self.depth
        state, load_d, beat_d = s.state, s.load_c[-1], s.beat_c[-1]
        m.submodules.wr_decoder = wr = NttAddressDecoder(self.n, self.lanes, self.banking)
        m.d.comb += [wr.stage.eq(s.stage_c[-1]), wr.cyc.eq(s.cyc_d), wr.inverse.eq(s.inverse)]
        l_idx = Signal(n_log + 1, name="l_idx")
        m.d.comb += l_idx.eq(beat_d << lp)
        l_bank = Signal(BB, name="l_bank")
        m.d.comb += l_bank.eq(_bank_of(l_idx[:n_log], n_log, BB))
        # the XOR network's select, registered in W-1 (a select computed in W through the write
        # decoder made the mapper collapse the network into a full multiplexer per bank: 8 LUT4
        # per bit instead of ~4): the load beat's bank or the coset's bb = the read decoder's bb of
        # the read D cycles earlier
        w_sel = Signal(BB, name="w_sel")
        bb_c = delay_chain(m, s.rd.bb, D - 1, "bbw")
        m.d.sync += w_sel.eq(Mux(s.load_c[-2], _bank_of((s.beat_c[-2] << lp)[:n_log], n_log, BB), bb_c[-1]))
        wdata = xor_network(m, s.v, w_sel, self.qbits, "wx")
        for b, (rp, wp) in enumerate(s.banks):
            waddr = Signal(range(self.n >> BB), name=f"waddr{b}")
            m.d.comb += wp.data.eq(wdata[b])
            with m.If(load_d):             # beat word p goes to bank bank(beat*P) ^ p
                m.d.comb += [waddr.eq(l_idx >> BB), wp.en.eq(((b ^ l_bank) >> lp) == 0)]
            with m.Else():
                m.d.comb += [waddr.eq(wr.addr[b]), wp.en.eq(s.issue_d & wr.used[b])]
            raddr, ren = s.rd.addr[b], 1
            if s.read_state is not None:
                raddr = Mux(state == s.read_state, s.u_idx >> BB, raddr)
                ren = Mux(state == s.read_state, s.u_en, 1)
            if self.banking == "single":
                m.d.comb += [wp.addr.eq(Mux(wp.en, waddr, raddr)), rp.addr.eq(Mux(wp.en, waddr, raddr)),
                             rp.en.eq(ren & ~wp.en)]
            else:
                m.d.comb += [wp.addr.eq(waddr), rp.addr.eq(raddr), rp.en.eq(ren)]
