"""Pipelined streaming negacyclic NTT / INTT: radix-2 SDF (single-path delay feedback, multi-path
for P > 1) and radix-2 MDC (multi-path delay commutator), one polynomial every N/P cycles.

The result is :func:`hhe_gen.models.ntt.ntt` / :func:`~hhe_gen.models.ntt.intt` bit for bit
(Lattigo's convention: forward Cooley-Tukey natural -> bit-reversed with psi powers merged,
inverse Gentleman-Sande bit-reversed -> natural with N^-1 folded in).  The direction is a build
parameter (``inverse``): the two directions run their delays in opposite orders (forward N/2P ..
1, inverse 1 .. N/2P beats), so one pipeline cannot serve both.

Structure (:mod:`.pipelined_plan` is the plan: which stage works on which index bit and where each
index bit travels)
-----------------------------------------------------------------------------------------------
A polynomial passes as N/P beats of P lanes.  The stages follow the model's butterfly order
(forward index bits k = n-1 .. 0, inverse 0 .. n-1); a stage on a bit carried in the lanes is
*spatial* (P/2 :class:`~hhe_gen.cores.arith.Butterfly` units on lane pairs), one on a bit carried
in the beat counter is

* ``arch="sdf"``: *temporal* - per lane one butterfly and a feedback delay line: distance d = 2^p
  beats; for d > L (the butterfly latency) the SDF loop, a :class:`~.delay_line.DelayLine` of
  d - L words closed through the butterfly (first half of each 2d block: the inputs go into the
  line, delayed by L registers, and the line's previous contents - the y results of the last
  block - leave through the butterfly as ct with w = 0, i.e. x = a; second half: the line's
  output and the input meet in the butterfly, x leaves, y goes into the line); for d <= L a
  feed-forward pair of d-word delays (input and y) in registers.  With P > 1 the low log2 P bits
  are spatial (the last log2 P forward stages, the first inverse ones): a multi-path SDF.
* ``arch="mdc"``: a *delay commutator* first (per lane pair a d-word delay before a 2x2 switch
  and one after it) moves the bit into a lane, then the stage is spatial: P/2 butterflies per
  stage, busy every cycle.

Twiddles come from per-butterfly ROMs (:func:`~.pipelined_plan.twiddle_table`: addressed by the
beat-counter bits that carry index bits above k and the polynomial's ``sel``; identical ROMs of a
stage are shared; one-word ROMs are constants).  The inverse's butterflies halve both results
(op ``gsh``: (a + b)/2, (a - b) w/2), so its log2 N stages multiply by 2^-log2 N = N^-1 and the
last stage uses psi^-brv(1) alone: the transform is linear, so this equals the model's N^-1 on
the last stage's sums and psi^-brv(1) * N^-1 on its differences (the Butterfly's GS sum has no
multiplier to fold N^-1 into).  For the Montgomery kinds every constant is stored times R mod q.  Delay lines of ``memory_threshold`` words or more are
``amaranth.lib.memory.Memory`` circular buffers (one read and one write port), shorter ones
registers.

Interface (:mod:`amaranth.lib.stream`)
--------------------------------------
``i_stream`` payload ``{"data": ArrayLayout(unsigned(qbits), P), "sel": range(len(moduli))}``:
beat b of a polynomial = positions b*P .. b*P+P-1 of the model's input list (forward: natural
order; inverse: the forward's output order, i.e. the model's bit-reversed list); ``sel`` (the
prime) is taken from each polynomial's first beat (ignored on the others).  Inputs must be < q
of that prime and sel < len(moduli) (not checked in hardware).  Polynomials follow each other
with no gap needed: beat N/P of one is beat 0 of the next.

``o_stream`` payload ``{"data": ArrayLayout(unsigned(qbits), P), "sel": ..., "last": 1}``: N/P
beats per polynomial, ``last`` on its final beat, ``sel`` its prime.  Order: SDF - exactly the
model's output list (beat b = positions b*P .. b*P+P-1; forward bit-reversed, inverse natural).
MDC - beat b, lane l holds model position ``output_positions()[b*P + l]`` (the output layout of
the plan, see :meth:`PipelinedNtt.output_positions`; :meth:`to_model_order` restores the list).

Flow control: the whole pipeline is one clock enable ``en``: it advances when the output register
is free or being taken AND (an input beat is offered OR the input is between polynomials, where
a bubble enters).  So a stalled consumer stalls everything and nothing is lost; an input gap
inside a polynomial stalls everything (the SDF / commutator pairing needs the beats of a
polynomial in consecutive enabled cycles); gaps between polynomials let the pipeline drain.
``i_stream.ready`` = the output register is free or being taken (it does not depend on valid).

Latency (cycles; exact, data independent)
-----------------------------------------
``latency`` = 1 (output register) + the stages' sum:
temporal d + L + 1, spatial L + 1, commutator d (d = 2^p beats) - from the cycle the first input
beat is taken to the cycle the first output beat is valid, with no stalls.  E.g. SDF, P = 1,
forward: 1 + (N - 1) + log2(N) (L + 1).  ``cycles_per_polynomial`` = N/P (initiation interval:
back-to-back polynomials keep input and output busy every cycle).  A stall cycle (either side)
adds exactly one cycle.

The formulas at 30-bit Barrett, L = 8 (the tests check them in simulation, three polynomials back
to back): N = 64 SDF P = 1: latency 118 in both directions, 64 cycles apart; SDF P = 4: 70, 16
apart; MDC P = 2: 102 forward / 86 inverse, 32 apart; MDC P = 8: 66 / 62, 8 apart.  N = 2^12,
32-bit primes: SDF P = 1 4096 cycles per polynomial, latency 1 + 4095 + 12 * 9 = 4204; MDC P = 2
2048 per polynomial, latency 3180 / 2156.  The forward MDC pays one
extra commutator of N/2P beats (the first stage moves a lane bit to the top beat bit, which
comes back only at its own stage), hence its longer latency and about 1.5 N delay words
(SDF: about N).

Small instances for the formal miter: :func:`small_pipelined_ntt` (e.g. ``small_pipelined_ntt(8)``
= ``PipelinedNtt(8, 1, [17])``, ``small_pipelined_ntt(16, 2, arch="mdc", inverse=True)`` with
q = 97; a width of 16 bits is the Barrett minimum).
"""

from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Shape, Signal, unsigned
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.arith import Butterfly
from hhe_gen.cores.arith.butterfly import OP_CODES
from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.params.errors import ParameterError

from .delay_line import DelayLine
from .pipelined_plan import (ARCHS, output_positions, plan_stages, stage_latency, to_model_order,
                             twiddle_table)
from .plan import butterfly_choice, check_moduli, check_n

__all__ = ["PipelinedNtt", "ARCHS", "SMALL_PRIMES", "SMALL_RNS", "small_pipelined_ntt"]

#: small primes q = 1 (mod 2N) for formal checks and quick experiments
SMALL_PRIMES = {8: 17, 16: 97, 32: 193}
#: two small primes of one bit length (Barrett's condition) for a run-time ``sel``
SMALL_RNS = {8: (97, 113), 16: (257, 353), 32: (257, 449)}


class PipelinedNtt(wiring.Component):
    """Pipelined streaming NTT or INTT (see the module docstring).

    Parameters
    ----------
    n : int           N, a power of two 2^3 .. 2^16
    lanes : int       P paths, a power of two: SDF 1 .. N/2, MDC 2 .. N/2
    moduli : int or list of int   RNS primes (q = 1 mod 2N, distinct); ``sel`` picks one per polynomial
    arch : str        "sdf" or "mdc"
    inverse : bool    False: forward NTT, True: inverse (build-time direction)
    kind : str        the butterfly's reducer ("barrett" (default), "montgomery", "special-barrett",
                      "ntt-montgomery")
    latency : int or None   butterfly latency L (None: the Butterfly's default)
    target : str      "ecp5" | "xilinx" | "generic"
    memory_threshold : int  delay lines of this many words or more go to memory (>= 3)
    **reducer : the reducer's own parameters (width, k, log_n, word_bits ...)

    Members
    -------
    i_stream : In(stream.Signature(StructLayout({"data": ArrayLayout(qbits, P), "sel": range(S)})))
    o_stream : Out(stream.Signature(StructLayout({"data": ..., "sel": range(S), "last": 1})))
    n, n_log, lanes, lanes_log, arch, inverse, moduli, qbits, butterfly_latency (L),
    factors, stages (the plan), out_layout, latency,
    cycles_per_polynomial (= beats = N/P), butterflies, delay_words (words of all delay lines),
    memory_delay_words (those in memory), twiddle_words (ROM words, one-word tables are constants
    and not counted); methods ``output_positions()``, ``to_model_order(stream)``,
    ``stage_tables(stage)`` (a stage's distinct twiddle tables and the butterflies using them)
    """

    @quiet_on_error
    def __init__(self, n, lanes, moduli, *, arch="sdf", inverse=False, kind="barrett", latency=None,
                 target="ecp5", memory_threshold=16, **reducer):
        self.n_log = check_n(n)
        self.n = n
        if arch not in ARCHS:
            raise ParameterError("arch", arch, "one of " + ", ".join(map(repr, ARCHS)))
        lo = 2 if arch == "mdc" else 1
        if isinstance(lanes, bool) or not isinstance(lanes, int) or lanes < lo or lanes & (lanes - 1) \
                or lanes > n // 2:
            raise ParameterError("lanes", lanes, f"a power of two {lo} .. N/2 = {n // 2} for arch {arch!r}")
        if inverse not in (False, True, 0, 1):
            raise ParameterError("inverse", inverse, "False (forward NTT) or True (inverse)")
        if isinstance(memory_threshold, bool) or not isinstance(memory_threshold, int) or memory_threshold < 3:
            raise ParameterError("memory_threshold", memory_threshold, "an integer >= 3")
        self.lanes, self.lanes_log = lanes, lanes.bit_length() - 1
        self.arch, self.inverse = arch, bool(inverse)
        self.moduli = check_moduli(moduli, n)
        self.memory_threshold = memory_threshold
        self.kind, self.target = kind, target
        bf = butterfly_choice(self.n_log, self.moduli, kind, target, latency, reducer)
        self._zq = bf.zq
        self.butterfly_latency, self.bfly_width, self.qbits = bf.latency, bf.width, bf.qbits
        self.factors = bf.factors
        self.stages, self.out_layout = plan_stages(self.n_log, self.lanes_log, arch, self.inverse)
        L = self.butterfly_latency
        self.latency = 1 + sum(stage_latency(s, L, self.lanes_log) for s in self.stages)
        self.beats = n // lanes
        self.cycles_per_polynomial = self.beats
        self._count_resources()
        self.sel_shape = range(len(self.moduli))
        self.data_layout = data.ArrayLayout(unsigned(self.qbits), lanes)
        self.i_layout = data.StructLayout({"data": self.data_layout, "sel": self.sel_shape})
        self.o_layout = data.StructLayout({"data": self.data_layout, "sel": self.sel_shape, "last": 1})
        super().__init__({
            "i_stream": In(stream.Signature(self.i_layout)),
            "o_stream": Out(stream.Signature(self.o_layout)),
        })

    # -- host side ------------------------------------------------------------------------------------
    def output_positions(self) -> list[int]:
        """Stream element s (= beat * P + lane) of the output is model-list position ``[s]``."""
        return output_positions(self.n_log, self.lanes_log, self.arch, self.inverse)

    def to_model_order(self, stream_values) -> list[int]:
        """One polynomial's output stream (beat-major, lane-minor) -> the model's list."""
        return to_model_order(list(stream_values), self.n_log, self.lanes_log, self.arch, self.inverse)

    def _count_resources(self):
        L, P = self.butterfly_latency, self.lanes
        words = mem_words = bf = 0
        tw = 0

        def line(d):
            nonlocal words, mem_words
            w = d - 1 if d >= self.memory_threshold else d
            words += w
            if d >= self.memory_threshold:
                mem_words += w

        for st in self.stages:
            if st.kind == "temporal":
                d = 1 << st.time_pos
                bf += P
                for _ in range(P):
                    if d > L:
                        line(d - L)
                    else:
                        line(d), line(d)
            elif st.kind == "spatial":
                bf += P // 2
            else:
                d = 1 << st.time_pos
                for _ in range(P // 2):
                    line(d), line(d)
            if st.kind != "commutator":
                tw += sum(len(table) for table, _ in self.stage_tables(st)[0] if len(table) > 1)
        self.butterflies, self.delay_words, self.memory_delay_words, self.twiddle_words = bf, words, mem_words, tw

    def stage_tables(self, st):
        """The stage's distinct twiddle tables [(table, address counter bits)] and, per butterfly
        (keyed by its lower lane), the index of its table (butterflies with equal tables share a ROM)."""
        P = self.lanes
        lows = range(P) if st.kind == "temporal" else [u for u in range(P) if not (u >> st.lane_pos) & 1]
        tables, index, of_lane = [], {}, {}
        for u in lows:
            table, rel = twiddle_table(st, self.n, self.moduli, self.factors, self.inverse, u)
            key = tuple(table)
            if key not in index:
                index[key] = len(tables)
                tables.append((table, rel))
            of_lane[u] = index[key]
        return tables, of_lane

    # -- hardware ----------------------------------------------------------------------------------------
    def elaborate(self, platform):
        m = Module()
        P, qw, L = self.lanes, self.qbits, self.butterfly_latency
        nsel = len(self.moduli)
        sbits = Shape.cast(self.sel_shape).width
        tbits = self.n_log - self.lanes_log               # beat-counter bits
        op_main = OP_CODES["gsh"] if self.inverse else OP_CODES["ct"]
        op_pass = OP_CODES["ct"]
        en = Signal(name="en")
        uid = [0]

        def name(s):
            uid[0] += 1
            return f"{s}{uid[0]}"

        def delay(sig, cycles, nm):
            out = sig
            for i in range(cycles):
                r = Signal(len(out), name=f"{nm}_d{i + 1}")
                with m.If(en):
                    m.d.sync += r.eq(out)
                out = r
            return out

        def line(width, d, nm, clear=False):
            dl = DelayLine(width, d, memory_threshold=self.memory_threshold, clear=clear)
            m.submodules[name(nm)] = dl
            m.d.comb += dl.en.eq(en)
            return dl

        def counter(tag, nm):
            c = Signal(max(tbits, 1), name=nm)
            with m.If(en & tag[0]):
                m.d.sync += c.eq(c + 1)
            return c

        def butterfly(nm, op, a, b, w, sel):
            bf = Butterfly(zq=self._zq, target=self.target, latency=L)
            m.submodules[name(nm)] = bf
            m.d.comb += [bf.op.eq(op), bf.a.eq(a), bf.b.eq(b), bf.w.eq(w), bf.c.eq(0), bf.en.eq(en)]
            if nsel > 1:
                m.d.comb += bf.sel.eq(sel)
            return bf

        def roms(st, c, tag, nm):
            """Registered twiddle per butterfly (keyed by lower lane), one cycle after ``c``."""
            tables, of_lane = self.stage_tables(st)
            words = []
            for table, rel in tables:
                if len(table) == 1:
                    words.append(Const(table[0], qw))
                    continue
                mem = memory.Memory(shape=qw, depth=len(table), init=table)
                m.submodules[name(f"{nm}_rom")] = mem
                rp = mem.read_port()
                m.d.comb += [rp.addr.eq(Cat(*[c[i] for i in rel], tag[1:])), rp.en.eq(en)]
                words.append(rp.data)
            return {u: words[i] for u, i in of_lane.items()}

        # ---- entry: bubble between polynomials, sel of the polynomial's first beat
        o_valid = Signal(name="o_valid")
        out_ok = Signal(name="out_ok")
        in_beat = Signal(max(tbits, 1), name="in_beat")
        sel_hold = Signal(self.sel_shape, name="sel_hold")
        first = Signal(name="first")
        m.d.comb += [first.eq(in_beat == 0) if tbits else first.eq(1),
                     out_ok.eq(~o_valid | self.o_stream.ready),
                     self.i_stream.ready.eq(out_ok),
                     en.eq(out_ok & (self.i_stream.valid | first))]
        ip = self.i_stream.payload
        with m.If(en & self.i_stream.valid):
            m.d.sync += in_beat.eq(in_beat + 1)
            with m.If(first):
                m.d.sync += sel_hold.eq(ip.sel)
        tag = Signal(1 + sbits, name="tag_in")
        m.d.comb += tag.eq(Cat(self.i_stream.valid, Mux(first, ip.sel, sel_hold)))
        lanes = [ip.data[p] for p in range(P)]

        # ---- stages
        for si, st in enumerate(self.stages):
            nm = f"s{si}_{st.kind[0]}"
            c = counter(tag, f"{nm}_beat")
            if st.kind == "spatial":
                tw = roms(st, c, tag, nm)
                op_r = Const(op_main, 3)
                tagr = delay(tag, 1, f"{nm}_tag")
                new = list(lanes)
                for u, w in tw.items():
                    v = u | (1 << st.lane_pos)
                    ar, br = delay(lanes[u], 1, f"{nm}_a{u}"), delay(lanes[v], 1, f"{nm}_b{u}")
                    bf = butterfly(f"{nm}_bf", op_r, ar, br, w, tagr[1:])
                    new[u], new[v] = bf.x[:qw], bf.y[:qw]
                lanes = new
                tag = delay(tagr, L, f"{nm}_tago")
            elif st.kind == "temporal":
                d = 1 << st.time_pos
                tw = roms(st, c, tag, nm)
                mode2 = Signal(name=f"{nm}_mode2")
                m.d.comb += mode2.eq(tag[0] & c[st.time_pos])
                mode2r = delay(mode2, 1, f"{nm}_m2")
                tagr = delay(tag, 1, f"{nm}_tag")
                mode2_d = delay(mode2r, L, f"{nm}_m2l")
                new = []
                if d > L:           # the SDF loop through a d - L word line
                    tag_l = delay(tagr, L, f"{nm}_tagl")
                    tag_f = None
                    for u in range(P):
                        xr = delay(lanes[u], 1, f"{nm}_x{u}")
                        xd = delay(xr, L, f"{nm}_xl{u}")
                        fb = line(qw + (len(tag) if u == 0 else 0), d - L, f"{nm}_fb", clear=(u == 0))
                        f_data = fb.o[:qw]
                        if u == 0:
                            tag_f = fb.o[qw:]
                        bf = butterfly(f"{nm}_bf", Mux(mode2r, op_main, op_pass), f_data, xr,
                                       Mux(mode2r, tw[u], 0), Mux(mode2r, tagr[1:], tag_f[1:]))
                        fin = Mux(mode2_d, bf.y[:qw], xd)
                        m.d.comb += fb.i.eq(Cat(fin, tag_l) if u == 0 else fin)
                        new.append(bf.x[:qw])
                    tag = delay(tag_f, L, f"{nm}_tago")
                else:               # feed-forward: input delay d, y delay d
                    for u in range(P):
                        a_line = line(qw, d, f"{nm}_a")
                        m.d.comb += a_line.i.eq(lanes[u])
                        ar = delay(a_line.o, 1, f"{nm}_ar{u}")
                        br = delay(lanes[u], 1, f"{nm}_br{u}")
                        bf = butterfly(f"{nm}_bf", op_main, ar, br, tw[u], tagr[1:])
                        y_line = line(qw, d, f"{nm}_y")
                        m.d.comb += y_line.i.eq(bf.y[:qw])
                        new.append(Mux(mode2_d, bf.x[:qw], y_line.o))
                    tag = delay(tag, d + L + 1, f"{nm}_tago")
                lanes = new
            else:                   # delay commutator: exchange lane bit l and beat bit p
                d = 1 << st.time_pos
                swap = Signal(name=f"{nm}_swap")
                m.d.comb += swap.eq(tag[0] & c[st.time_pos])
                new = list(lanes)
                tag_out = None
                for u in range(P):
                    if (u >> st.lane_pos) & 1:
                        continue
                    v = u | (1 << st.lane_pos)
                    b_line = line(qw, d, f"{nm}_b")
                    m.d.comb += b_line.i.eq(lanes[v])
                    out0 = Mux(swap, b_line.o, lanes[u])
                    out1 = Mux(swap, lanes[u], b_line.o)
                    head = u == 0
                    a_line = line(qw + (len(tag) if head else 0), d, f"{nm}_a", clear=head)
                    m.d.comb += a_line.i.eq(Cat(out0, tag) if head else out0)
                    new[u], new[v] = a_line.o[:qw], out1
                    if head:
                        tag_out = a_line.o[qw:]
                lanes, tag = new, tag_out

        # ---- output register
        o_data = Signal(self.data_layout, name="o_data")
        o_sel = Signal(self.sel_shape, name="o_sel")
        o_last = Signal(name="o_last")
        out_beat = Signal(max(tbits, 1), name="out_beat")
        with m.If(self.o_stream.ready & o_valid):
            m.d.sync += o_valid.eq(0)
        with m.If(en):
            m.d.sync += [o_valid.eq(tag[0]), o_sel.eq(tag[1:]),
                         o_last.eq((out_beat == self.beats - 1) if tbits else 1)]
            m.d.sync += [o_data[p].eq(lanes[p]) for p in range(P)]
            with m.If(tag[0]):
                m.d.sync += out_beat.eq(out_beat + 1)
        m.d.comb += [self.o_stream.valid.eq(o_valid), self.o_stream.payload.data.eq(o_data),
                     self.o_stream.payload.sel.eq(o_sel), self.o_stream.payload.last.eq(o_last)]
        return m


def small_pipelined_ntt(n: int = 8, lanes: int = 1, *, arch: str = "sdf", inverse: bool = False,
                        rns: bool = False, **kw) -> PipelinedNtt:
    """A small instance for formal checks (the miter of ``formal/ntt``): N = 8, 16 or 32 with the
    prime :data:`SMALL_PRIMES` [N] (8: q = 17, 16: q = 97, 32: q = 193), or with ``rns=True`` the
    two primes :data:`SMALL_RNS` [N] (8: 97, 113; 16: 257, 353; 32: 257, 449) and a run-time
    ``sel``; 16-bit Barrett butterflies unless ``kw`` says otherwise.

    Port protocol (see the module docstring): ``i_stream`` takes N/P beats per polynomial,
    ``payload.data[p]`` = coefficient b*P + p of the model's input list, ``payload.sel`` on the
    first beat; ``o_stream`` gives N/P beats, ``payload.data[p]`` = model output position
    ``output_positions()[b*P + p]`` (SDF: b*P + p), ``payload.last`` on the last one.  With input
    always valid and output always ready, polynomial i's beat b is taken in cycle i*N/P + b (the
    first cycle after reset is 0) and its output beat b is valid in cycle i*N/P + b + ``latency``;
    ``en`` (the one clock enable) is low exactly in the cycles where the output is valid and not
    ready, or the input is not valid inside a polynomial (after beat 0 and before beat N/P)."""
    if n not in SMALL_PRIMES:
        raise ParameterError("n", n, "8, 16 or 32 (see SMALL_PRIMES)")
    return PipelinedNtt(n, lanes, list(SMALL_RNS[n]) if rns else [SMALL_PRIMES[n]], arch=arch,
                        inverse=inverse, **kw)
