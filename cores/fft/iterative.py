"""Memory-based iterative CKKS special FFT / IFFT with P complex butterfly lanes; one direction, or
both with the direction chosen per transform at run time.

Golden model: :func:`hhe_gen.models.fft.special_ifft_fixed` (``inverse=True``) and
:func:`hhe_gen.models.fft.special_fft_fixed` (``inverse=False``), bit for bit; the memory plan
(banks, pairs per cycle, twiddle ROMs, I/O order) is :class:`hhe_gen.cores.fft.plan.FftPlan`,
whose pure-Python execution :func:`~hhe_gen.cores.fft.plan.run_plan` equals the model.

Datapath (one transform at a time)::

    i_stream (P values/beat) --> 2P banks (n/2P words of 2W bits, 1 write + 1 read port each,
                                  read-first: no bypass)
      compute: cycle t issues P pairs: read (t) -> read crossbar -> register (t+1) ->
               Butterfly (cores/arith, complex field, op ct/gs, ``bf_latency``) ->
               write crossbar -> write (t + delay), delay = bf_latency + 2;
               lane l's twiddle from its own ROM (read at t, registered at t+1)
    o_stream (P values/beat) <-- [output register] <-- lane multiplexer <-- banks, read ``passes``
                                 times in stream order

Phases: LOAD (n/P beats accepted, ``i_stream.ready`` = 1; with ``split_load`` 2n/P beats: real
parts of the n values first, then the imaginary parts), COMPUTE (fixed length), UNLOAD
(``passes`` x n/P beats with back-pressure), then LOAD again.  The schedule is static (stage
issue cycles from :func:`hhe_gen.cores.ntt.schedule.stage_starts`); no cycle count depends on
data.

Both directions (``inverse="both"``): one set of banks, one Butterfly per lane and ONE twiddle ROM
per lane serve the IFFT and the FFT.  The direction of a transform is the ``inverse`` input port,
sampled with the transform's first input beat (the cycle ``i_stream.valid & i_stream.ready`` with
the first beat; the port may change any time after that: the next transform samples it again).
The load beats and positions (natural / bit-reversed), the stage issue cycles (each direction's
``plan.starts``), the stage order of the address generators (IFFT: bit k = log2(n)-1 .. 0, FFT:
0 .. log2(n)-1; the pairs of bit k are the same in both), the butterfly op (gs / ct), the compute
length, the unload beats and positions all follow the sampled direction.  The twiddle ROMs hold the
FFT plan's entries, addressed by bit k in both directions; in IFFT mode the imaginary part of the
ROM output is negated before its register (the IFFT twiddle of every (k, lane, cycle) is exactly
the conjugate of the FFT's: :func:`~hhe_gen.cores.fft.plan.check_shared_twiddles`, checked at
construction).  So each direction takes exactly the cycles of the one-direction core with the
same ``passes`` / ``split_load``.

Parameters
----------
n : int                 slots, a power of two 2^3 .. 2^15 (ring degree N = 2n = 2^4 .. 2^16)
lanes : int             P butterflies, a power of two 1 .. n/4
fmt : FixedPointFormat  W-bit two's complement, F fraction bits, rounding (the model's); with
                        ``inverse="both"`` a format whose twiddle table is conjugate-exact
                        (frac_bits <= width - 2 always is; else ParameterError naming ``fmt``)
inverse : bool | str    True: special IFFT (GS, halving); False: special FFT (CT); "both": either,
                        per transform, from the ``inverse`` port
passes : int | pair     how many times the result is streamed out (1 .. 256; the CKKS encoder
                        reads it twice per prime); with "both" also a pair (for_inverse, for_forward)
split_load : bool | pair  load real parts, then imaginary parts (the CKKS decoder's coefficient
                        order); the payload's lanes still carry packed values, of which only the
                        half being loaded is used; with "both" also a pair (for_inverse, for_forward)
target : str            the Butterfly's DSP target ("ecp5" | "xilinx" | "generic")
bf_latency : int|None   the Butterfly's latency (default: its default, 5 for a complex-only unit)
output_register : bool  True (default): a register after the read-data lane multiplexer (the
                        bank -> mux -> port path was the ECP5 critical path, 79 MHz); one cycle
                        more latency, the same throughput
butterflies : str       "own" (its P butterflies) or "external": the ``lanes_port`` drives an array
                        of butterflies outside (the engine's crypto unit), which must have this
                        core's latency ``bf_latency`` and a complex field of ``fmt``

Members
-------
i_stream : In(stream.Signature(ArrayLayout(2W, P)))   packed ``re | im << W`` per lane
o_stream : Out(stream.Signature(ArrayLayout(2W, P)))
inverse : In(1)         only with ``inverse="both"``: 1 = IFFT, 0 = FFT, sampled with the first
                        input beat of each transform (with True / False, ``inverse`` is that bool)
lanes_port : Out(:func:`~hhe_gen.cores.arith.butterfly_array.butterfly_lanes_signature` of
                        ``butterfly_plan``)   external butterflies only
butterfly_plan : the lanes' :class:`~hhe_gen.cores.arith.butterfly.ButterflyPlan` (complex field)
direction : True | False | "both"     the ``inverse`` parameter;  both : bool  direction == "both"
passes, split_load : as given (with "both": pairs (for_inverse, for_forward))
plans : {direction: FftPlan}, delay (read-to-write cycles)
timing(inverse) : :class:`FftTiming` of one direction (passes, split_load, load_beats,
                  compute_cycles, unload_beats, first_output_delay, cycles)
plan, load_beats, unload_beats, compute_cycles, first_output_delay : one-direction cores only
                  (the same numbers as ``timing()``); ``cycles(inverse)`` and ``model(values,
                  inverse)`` take the direction for "both"

Latency (cycles, full-rate producer and consumer; per direction for "both")
----------------------------------------------------------------------------
* load: ``load_beats`` = n/P (2n/P with split_load) cycles, one beat each;
* compute: ``compute_cycles`` = plan.compute_cycles + 1 cycles (the COMPUTE phase starts the cycle
  after the last load beat; plan.compute_cycles = the stage_starts total, the cycle of the last
  write; = (n/2P) log2(n) + delay within 5% for n >= 2^8), then
* unload: the UNLOAD phase starts the cycle after, its first read gives the first output beat one
  cycle later (R = ``output_register`` = 1: one more, through the output register);
  ``unload_beats`` = passes * n/P beats at one per cycle.

So with the last input beat accepted in cycle c, the first output beat is taken in cycle
c + compute_cycles + 2 + R (:attr:`first_output_delay`) and the last in cycle
c + compute_cycles + 1 + R + unload_beats; the next transform's first input beat can be accepted in
the cycle after the last output beat.  :meth:`cycles` gives the whole count:
load_beats + compute_cycles + 1 + R + unload_beats.  A "both" core's transform in direction d takes
exactly ``cycles(d)``, the one-direction core's count with d's passes and split_load; transforms
of alternating directions run back to back with no extra cycle.
"""

from __future__ import annotations

from typing import NamedTuple

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.arith.butterfly import OP_CODES, ButterflyPlan, pack_complex
from hhe_gen.cores.arith.butterfly_array import butterfly_lanes_signature, sequencer_lanes
from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.models import fft as fftm
from hhe_gen.params.errors import ParameterError

from .plan import FftPlan, check_lanes, check_shared_twiddles, check_slots

__all__ = ["IterativeFft", "SpecialFft", "SpecialIfft", "FftTiming", "BUTTERFLIES"]

BUTTERFLIES = ("own", "external")


class FftTiming(NamedTuple):
    """The cycle counts of one direction (module docstring, Latency)."""
    passes: int
    split_load: bool
    load_beats: int
    compute_cycles: int
    unload_beats: int
    first_output_delay: int
    cycles: int


def _xor_fold(v, width, b):
    """bank(i) of a Value: XOR of the b-bit chunks (top chunk zero-extended)."""
    out = Const(0, b)
    for lo in range(0, width, b):
        chunk = v[lo:min(lo + b, width)]
        out = out ^ chunk
    return out[:b]


def _reverse(v, bits):
    return Cat(*(v[bits - 1 - i] for i in range(bits))) if bits else Const(0, 0)


def _valid_passes(v):
    return not isinstance(v, bool) and isinstance(v, int) and 1 <= v <= 256


def _per_direction(name, value, valid, allowed, both):
    """``value`` for both directions ({True: .., False: ..}): a pair (for_inverse, for_forward) only
    when ``both``."""
    if both and isinstance(value, (tuple, list)):
        if len(value) != 2 or not all(valid(v) for v in value):
            raise ParameterError(name, value, f"{allowed}, or a pair (for_inverse, for_forward) of them")
        return {True: value[0], False: value[1]}
    if not valid(value):
        raise ParameterError(name, value, allowed + (", or a pair (for_inverse, for_forward) of them"
                                                     if both else ""))
    return {True: value, False: value}


class IterativeFft(wiring.Component):
    __doc__ = __doc__

    @quiet_on_error
    def __init__(self, n, lanes, fmt, inverse=True, *, passes=1, split_load=False, target="ecp5",
                 bf_latency=None, output_register=True, butterflies="own"):
        check_slots(n, "n")
        check_lanes(lanes, n)
        if not isinstance(fmt, fftm.FixedPointFormat):
            raise ParameterError("fmt", fmt, "a hhe_gen.models.fft.FixedPointFormat")
        both = isinstance(inverse, str) and inverse == "both"
        if not both and not isinstance(inverse, bool):
            raise ParameterError("inverse", inverse, 'True (IFFT), False (FFT) or "both" (the direction '
                                 'chosen per transform by the inverse port)')
        passes_d = _per_direction("passes", passes, _valid_passes, "an integer 1 .. 256", both)
        split_d = _per_direction("split_load", split_load, lambda v: isinstance(v, bool), "True or False", both)
        if not isinstance(output_register, bool):
            raise ParameterError("output_register", output_register, "True or False")
        self.output_register = output_register
        self.direction, self.both = inverse, both
        self.directions = (True, False) if both else (inverse,)
        self.fmt = fmt
        self.passes = (passes_d[True], passes_d[False]) if both else passes
        self.split_load = (split_d[True], split_d[False]) if both else split_load
        self.bf_kw = dict(complex=fmt, target=target)
        if bf_latency is not None:
            self.bf_kw["latency"] = bf_latency
        if butterflies not in BUTTERFLIES:
            raise ParameterError("butterflies", butterflies, "one of " + ", ".join(map(repr, BUTTERFLIES)))
        self.butterflies = butterflies
        self.butterfly_plan = ButterflyPlan(**self.bf_kw)
        self.bf_latency = self.butterfly_plan.latency
        self.delay = self.bf_latency + 2
        self.plans = {d: FftPlan(n, lanes, d, self.delay) for d in self.directions}
        if both:
            check_shared_twiddles(self.plans[True], self.plans[False], fmt)
        self.n, self.lanes = n, lanes
        self._timing = {}
        for d in self.directions:
            load = (2 if split_d[d] else 1) * n // lanes
            unload = passes_d[d] * n // lanes
            compute = self.plans[d].compute_cycles + 1
            self._timing[d] = FftTiming(passes_d[d], split_d[d], load, compute, unload,
                                        compute + 2 + output_register,
                                        load + compute + unload + 1 + output_register)
        layout = data.ArrayLayout(unsigned(2 * fmt.width), lanes)
        members = {
            "i_stream": In(stream.Signature(layout)),
            "o_stream": Out(stream.Signature(layout)),
        }
        if both:
            members["inverse"] = In(1)
        else:
            self.inverse = inverse
        if butterflies == "external":
            members["lanes_port"] = Out(butterfly_lanes_signature(self.butterfly_plan, lanes))
        super().__init__(members)

    # -- per direction ----------------------------------------------------------------------------
    def _dir(self, inverse):
        if self.both:
            if not isinstance(inverse, bool):
                raise ParameterError("inverse", inverse, "True (IFFT) or False (FFT): the direction of a "
                                     "transform of an inverse=\"both\" core")
            return inverse
        if inverse is None or (isinstance(inverse, bool) and inverse == self.direction):
            return self.direction
        raise ParameterError("inverse", inverse, f"None or {self.direction} (this core runs one direction)")

    def timing(self, inverse=None) -> FftTiming:
        """The cycle counts of direction ``inverse`` (None: the one direction of a True/False core)."""
        return self._timing[self._dir(inverse)]

    def _single(self, name):
        if self.both:
            raise AttributeError(f"{name!r} of an inverse='both' core depends on the direction: use "
                                 f"timing(inverse) / plans[inverse]")
        return self._timing[self.direction]

    @property
    def plan(self) -> FftPlan:
        self._single("plan")
        return self.plans[self.direction]

    @property
    def load_beats(self) -> int:
        return self._single("load_beats").load_beats

    @property
    def unload_beats(self) -> int:
        return self._single("unload_beats").unload_beats

    @property
    def compute_cycles(self) -> int:
        return self._single("compute_cycles").compute_cycles

    @property
    def first_output_delay(self) -> int:
        """Cycles from the last input beat to the first output beat (full rate)."""
        return self._single("first_output_delay").first_output_delay

    def cycles(self, inverse=None) -> int:
        """Cycles of one transform at full rate, first input beat to last output beat inclusive; also
        the period of back-to-back transforms (the next input beat is taken the cycle after).
        ``inverse``: the direction (required for "both")."""
        return self.timing(inverse).cycles

    def model(self, values, inverse=None):
        """The golden model on a list of n (re, im) pairs (direction ``inverse`` for "both")."""
        f = fftm.special_ifft_fixed if self._dir(inverse) else fftm.special_fft_fixed
        return f(values, self.fmt)

    def _pick(self, mode, f):
        """f(direction) of a one-direction core (a Python value), or Mux(mode, f(True), f(False))."""
        if not self.both:
            return f(self.direction)
        return Mux(mode, f(True), f(False))

    def elaborate(self, platform):
        m = Module()
        fmt, both, pick = self.fmt, self.both, self._pick
        timing = self._timing
        plan = self.plans[False] if both else self.plans[self.direction]   # the ROM layout
        n, p, nl, b = self.n, self.lanes, plan.n_log, plan.bank_bits
        cw = 2 * fmt.width
        nb, depth = plan.banks, plan.depth
        aw = nl - b                                   # address bits
        beats = n // p
        beat_bits = nl - plan.lane_bits
        max_load = max(t.load_beats for t in timing.values())
        max_unload = max(t.unload_beats for t in timing.values())
        max_compute = max(t.compute_cycles for t in timing.values())

        # -- memories ---------------------------------------------------------------------------
        wps, rps = [], []
        for k in range(nb):
            mem = Memory(shape=unsigned(cw), depth=depth, init=[])
            m.submodules[f"bank{k}"] = mem
            wp = mem.write_port(granularity=fmt.width)
            rp = mem.read_port()         # not transparent: the schedule reads a cycle after a write
            wps.append(wp)
            rps.append(rp)
        table = fftm.twiddle_table(n, fmt)
        tw_rps = []
        for lane in range(p):
            init = [pack_complex(table[t], fmt) for t in plan.twiddle_rom(lane)]
            rom = Memory(shape=unsigned(cw), depth=len(init), init=init)
            m.submodules[f"twiddle{lane}"] = rom
            tw_rps.append(rom.read_port())

        # -- control ----------------------------------------------------------------------------
        LOAD, COMPUTE, UNLOAD = 0, 1, 2
        phase = Signal(range(3), init=LOAD)
        in_beat = Signal(range(max(2, max_load)))
        t = Signal(range(max_compute + 2))
        stage = Signal(range(nl + 1))
        cyc = Signal(range(max(2, plan.stage_cycles)))
        out_beat = Signal(range(max_unload + 1))            # next beat to read
        o_valid = Signal()
        o_pos = Signal(beat_bits)                           # beat (mod n/P) of the data on o_stream
        accept = Signal()
        mode = load_mode = None
        if both:
            # mode: the direction of the transform in the core, sampled with its first input beat;
            # load_mode: the direction of the beat being loaded (the port itself for the first beat)
            mode, load_mode = Signal(name="mode"), Signal(name="load_mode")
            m.d.comb += load_mode.eq(Mux(in_beat == 0, self.inverse, mode))
            with m.If(accept & (in_beat == 0)):
                m.d.sync += mode.eq(self.inverse)

        # -- load -------------------------------------------------------------------------------
        load_w = [dict(en=Const(0, 2), addr=Const(0, max(aw, 1)), data=Const(0, cw)) for _ in range(nb)]
        m.d.comb += [self.i_stream.ready.eq(phase == LOAD), accept.eq(self.i_stream.valid & (phase == LOAD))]
        lbeat = in_beat[:beat_bits]
        half_sel = Const(0b11, 2)
        if any(t.split_load for t in timing.values()):
            second = in_beat[beat_bits] if max_load > beats else Const(0, 1)
            split_half = Mux(second, Const(0b10, 2), Const(0b01, 2))
            if all(t.split_load for t in timing.values()):
                half_sel = split_half
            else:
                half_sel = Mux(pick(load_mode, lambda d: timing[d].split_load), split_half, half_sel)
        load_src = []
        for lane in range(p):
            i = Cat(Const(lane, plan.lane_bits), lbeat)
            pos = pick(load_mode, lambda d: i if d else _reverse(i, nl))
            load_src.append((_xor_fold(pos, nl, b), pos[b:], self.i_stream.payload[lane]))
        for k in range(nb):
            hit = [(bk == k) for bk, _, _ in load_src]
            load_w[k] = dict(
                en=Mux(accept & _any(hit), half_sel, 0),
                addr=_or_select([h & accept for h in hit], [a for _, a, _ in load_src], max(aw, 1)),
                data=_or_select([h & accept for h in hit], [d for _, _, d in load_src], cw))
        with m.If(accept):
            m.d.sync += in_beat.eq(in_beat + 1)
            with m.If(in_beat == pick(load_mode, lambda d: timing[d].load_beats - 1)):
                m.d.sync += [in_beat.eq(0), phase.eq(COMPUTE), t.eq(0), stage.eq(0), cyc.eq(0)]

        # -- compute: issue ---------------------------------------------------------------------
        t_shape = range(max_compute + 2)
        starts = {d: Array(Const(s, t_shape) for s in self.plans[d].starts + (timing[d].compute_cycles + 1,))
                  for d in self.directions}
        issue = Signal()
        m.d.comb += issue.eq((phase == COMPUTE) & (stage < nl) & (t >= pick(mode, lambda d: starts[d][stage])))
        with m.If(phase == COMPUTE):
            m.d.sync += t.eq(t + 1)
            with m.If(t == pick(mode, lambda d: timing[d].compute_cycles - 1)):
                m.d.sync += [phase.eq(UNLOAD), out_beat.eq(0), o_valid.eq(0)]
        with m.If(issue):
            m.d.sync += cyc.eq(cyc + 1)
            with m.If(cyc == plan.stage_cycles - 1):
                m.d.sync += [cyc.eq(0), stage.eq(stage + 1)]
        c_bits = nl - b                                   # bits of the cycle number in a stage
        cvec = cyc[:c_bits] if c_bits else Const(0, 0)
        # the address generators and twiddle offsets, one entry per stage s (one direction) or per
        # butterfly bit k ("both": the stage's k from the direction; the pairs of bit k are the same
        # in both directions, check_shared_twiddles)
        if both:
            entry = Signal(range(nl), name="stage_k")
            k_of = {d: Array(Const(k, range(nl)) for k in self.plans[d].stage_k) for d in self.directions}
            m.d.comb += entry.eq(Mux(stage < nl, Mux(mode, k_of[True][stage], k_of[False][stage]), 0))
            entry_k = list(range(nl))
            entry_group = [plan.stage_groups[plan.stage_k.index(k)] for k in entry_k]
            tw_offsets, tw_masks = plan.tw_offset_k, plan.tw_mask_k
        else:
            entry = None
            entry_k, entry_group = list(plan.stage_k), list(plan.stage_groups)
            tw_offsets, tw_masks = plan.tw_offset, plan.tw_mask
        lo_idx, hi_idx = [], []
        for lane in range(p):
            los, his = [], []
            for k, group in zip(entry_k, entry_group):
                others = [g for g in range(nl) if g not in group]
                lbits = [g for g in group if g != k]
                bits_lo, bits_hi = [], []
                for g in range(nl):
                    if g == k:
                        bits_lo.append(Const(0, 1))
                        bits_hi.append(Const(1, 1))
                    elif g in lbits:
                        v = Const((lane >> lbits.index(g)) & 1, 1)
                        bits_lo.append(v)
                        bits_hi.append(v)
                    else:
                        v = cvec[others.index(g)]
                        bits_lo.append(v)
                        bits_hi.append(v)
                los.append(Cat(*bits_lo))
                his.append(Cat(*bits_hi))
            lo, hi = Signal(nl, name=f"lo{lane}"), Signal(nl, name=f"hi{lane}")
            sel = Signal(range(nl), name=f"stage_sel{lane}")
            m.d.comb += sel.eq(entry if both else Mux(stage < nl, stage, 0))
            m.d.comb += [lo.eq(Array(los)[sel]), hi.eq(Array(his)[sel])]
            lo_idx.append(lo)
            hi_idx.append(hi)
        # per pair member (2P of them): bank, addr
        members = []
        for lane in range(p):
            for idx in (lo_idx[lane], hi_idx[lane]):
                bk, ad = Signal(b, name=f"rb{len(members)}"), Signal(max(aw, 1), name=f"ra{len(members)}")
                m.d.comb += [bk.eq(_xor_fold(idx, nl, b)), ad.eq(idx[b:] if aw else 0)]
                members.append((bk, ad))
        # twiddle ROM addresses
        tw_off = Array(Const(o) for o in tw_offsets)
        tw_mask = Array(Const(mk, max(1, c_bits)) for mk in tw_masks)
        sel0 = Signal(range(nl))
        m.d.comb += sel0.eq(entry if both else Mux(stage < nl, stage, 0))
        for rp in tw_rps:
            m.d.comb += rp.addr.eq(tw_off[sel0] + (cyc & tw_mask[sel0]))

        # -- unload: issue ----------------------------------------------------------------------
        # o_valid: the read ports hold beat o_pos; with output_register a second stage (r_valid,
        # out_reg) holds the lane-multiplexed beat; both advance together (global enable)
        r_valid = Signal()
        out_reg = [Signal(cw, name=f"out_reg{lane}") for lane in range(p)]
        advance = Signal()
        last_valid = r_valid if self.output_register else o_valid
        m.d.comb += advance.eq(~last_valid | self.o_stream.ready)
        ubeat = out_beat[:beat_bits]
        unload_src = []
        for lane in range(p):
            i = Cat(Const(lane, plan.lane_bits), ubeat)
            pos = pick(mode, lambda d: _reverse(i, nl) if d else i)
            unload_src.append((_xor_fold(pos, nl, b), pos[b:]))
        held_bank = []                                   # bank of each lane's data on o_stream
        for lane in range(p):
            i = Cat(Const(lane, plan.lane_bits), o_pos)
            pos = pick(mode, lambda d: _reverse(i, nl) if d else i)
            held_bank.append(_xor_fold(pos, nl, b))
        unload_beats = pick(mode, lambda d: timing[d].unload_beats)
        unloading = Signal()
        m.d.comb += unloading.eq((phase == UNLOAD) & (out_beat < unload_beats))
        with m.If((phase == UNLOAD) & advance):
            with m.If(out_beat < unload_beats):
                m.d.sync += [out_beat.eq(out_beat + 1), o_valid.eq(1), o_pos.eq(ubeat)]
            with m.Else():
                m.d.sync += o_valid.eq(0)
                if self.output_register:
                    with m.If(~o_valid):                  # the last beat is leaving out_reg
                        m.d.sync += phase.eq(LOAD)
                else:
                    m.d.sync += phase.eq(LOAD)

        # read ports: compute (always enabled) or unload (enabled by advance)
        for k in range(nb):
            c_addr = _or_select([bk == k for bk, _ in members], [a for _, a in members], max(aw, 1))
            u_addr = _or_select([bk == k for bk, _ in unload_src], [a for _, a in unload_src], max(aw, 1))
            rp = rps[k]
            if aw:
                m.d.comb += rp.addr.eq(Mux(phase == UNLOAD, u_addr, c_addr))
            m.d.comb += rp.en.eq(Mux(phase == UNLOAD, advance, 1))
        lane_data = [Array(rp.data for rp in rps)[held_bank[lane]] for lane in range(p)]
        if self.output_register:
            with m.If((phase == UNLOAD) & advance):
                m.d.sync += r_valid.eq(o_valid)
                m.d.sync += [out_reg[lane].eq(lane_data[lane]) for lane in range(p)]
            m.d.comb += self.o_stream.valid.eq(r_valid)
            m.d.comb += [self.o_stream.payload[lane].eq(out_reg[lane]) for lane in range(p)]
        else:
            m.d.comb += self.o_stream.valid.eq(o_valid & (phase == UNLOAD))
            m.d.comb += [self.o_stream.payload[lane].eq(lane_data[lane]) for lane in range(p)]

        # -- compute: datapath ------------------------------------------------------------------
        # delay lines of (valid, bank, addr) of every member from issue to write (self.delay cycles)
        line = [(issue, [(bk, ad) for bk, ad in members])]
        for d in range(self.delay):
            v_prev, mem_prev = line[-1]
            v = Signal(name=f"v_d{d + 1}")
            regs = []
            for j, (bk, ad) in enumerate(mem_prev):
                rb = Signal(b, name=f"b{j}_d{d + 1}")
                ra = Signal(max(aw, 1), name=f"a{j}_d{d + 1}")
                m.d.sync += [rb.eq(bk), ra.eq(ad)]
                regs.append((rb, ra))
            m.d.sync += v.eq(v_prev)
            line.append((v, regs))
        rdata = Array(rp.data for rp in rps)
        op = pick(mode, lambda d: OP_CODES["gs" if d else "ct"])
        outs = []
        w_bits = fmt.width
        lanes = sequencer_lanes(m, self, p, **self.bf_kw)
        m.d.comb += lanes.op.eq(op)
        for lane in range(p):
            a, bb, w = Signal(cw, name=f"a{lane}"), Signal(cw, name=f"b{lane}"), Signal(cw, name=f"w{lane}")
            _, mem1 = line[1]
            tw = tw_rps[lane].data
            if both:        # IFFT: the conjugate of the FFT's twiddle (same register, no extra cycle)
                im = tw[w_bits:cw]
                tw = Cat(tw[:w_bits], Mux(mode, (-im.as_signed())[:w_bits], im))
            m.d.sync += [a.eq(rdata[mem1[2 * lane][0]]), bb.eq(rdata[mem1[2 * lane + 1][0]]), w.eq(tw)]
            m.d.comb += [lanes.a[lane].eq(a), lanes.b[lane].eq(bb), lanes.w[lane].eq(w), lanes.c[lane].eq(0)]
            outs.extend([lanes.x[lane][:cw], lanes.y[lane][:cw]])
        wv, wmem = line[self.delay]
        for k in range(nb):
            hit = [bk == k for bk, _ in wmem]
            c_en = Mux(wv & _any(hit), Const(0b11, 2), Const(0, 2))
            hit = [h & wv for h in hit]
            c_addr = _or_select(hit, [a for _, a in wmem], max(aw, 1))
            c_data = _or_select(hit, outs, cw)
            wp = wps[k]
            if aw:
                m.d.comb += wp.addr.eq(c_addr | load_w[k]["addr"])
            m.d.comb += [wp.en.eq(c_en | load_w[k]["en"]), wp.data.eq(c_data | load_w[k]["data"])]
        return m


def _any(hits):
    out = Const(0, 1)
    for h in hits:
        out = out | h
    return out


def _or_select(hits, values, width):
    """OR of the values whose hit is set (at most one is)."""
    out = Const(0, width)
    for h, v in zip(hits, values):
        out = out | Mux(h, v, 0)
    return out[:width]


class SpecialIfft(IterativeFft):
    """:class:`IterativeFft` with ``inverse=True`` (the CKKS encoder's transform)."""

    def __init__(self, n, lanes, fmt, **kw):
        super().__init__(n, lanes, fmt, inverse=True, **kw)


class SpecialFft(IterativeFft):
    """:class:`IterativeFft` with ``inverse=False`` (the CKKS decoder's transform)."""

    def __init__(self, n, lanes, fmt, **kw):
        super().__init__(n, lanes, fmt, inverse=False, **kw)
