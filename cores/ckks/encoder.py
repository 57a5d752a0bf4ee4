"""CKKS encoder: fixed-point slots -> special IFFT -> x Delta, round -> residues mod every prime.

Golden model: :func:`hhe_gen.models.ckks_fixed.encode_fixed` (equal to
:func:`hhe_gen.models.ckks.encode` with ``fmt``, tests/cores/ckks), bit for bit.

Datapath::

    i_stream (P slots/beat, natural order) -> SpecialIfft (passes = 2L)
      pass 2i: Re w_k, pass 2i+1: Im w_k  (k in stream order)  -> per lane:
      m = scale_up(v)  (v << (log_scale - F), or (v + 2^(r-1) - [v<0]) >> r, r = F - log_scale:
                        round half away from zero)
      residue = m + q_i if m < 0 else m     (|m| < q_i by the parameter rule)
    -> register -> o_stream (P residues/beat)

Output order: prime 0's N coefficients in natural order (m_0 .. m_{N-1}: the real parts
m_0 .. m_{n-1} are the first pass, the imaginary parts m_n .. m_{N-1} the second), then prime 1's,
...; L * N/P beats.  The IFFT result is read 2L times from the core's banks (no extra buffer).

Parameters
----------
n_ring : int            N, a power of two 2^4 .. 2^16 (n = N/2 slots)
lanes : int             P, a power of two 1 .. N/8 (the IFFT's butterflies and the output width)
fmt : FixedPointFormat  the slots' and the IFFT's format
log_scale : int         Delta = 2^log_scale; 2^(W-1-F+log_scale) < every prime
moduli : int or list    the RNS primes (odd, < 2^64), at most 128
target, bf_latency      passed to the IFFT's butterflies

Bad parameters raise ParameterError (:func:`hhe_gen.models.ckks_fixed.check_codec_params`: N out
of range, frac_bits < log2 N, a scale too large for the primes, ...).

Members
-------
i_stream : In(stream.Signature(ArrayLayout(2W, P)))        packed slots ``re | im << W``
o_stream : Out(stream.Signature(ArrayLayout(qbits, P)))    residues, qbits = bit length of the largest prime
ifft : the :class:`~hhe_gen.cores.fft.SpecialIfft`;  residues : the :class:`ResidueStage` after it

Latency
-------
One output register after the IFFT: with the last slot beat accepted in cycle c, the first residue
beat is taken in cycle c + ifft.first_output_delay + 1 (= c + ifft.compute_cycles + 4), then one beat per cycle (L*N/P of them);
:meth:`cycles` = ifft.cycles() + 1 (first input beat to last output beat, inclusive, full rate).
"""

from __future__ import annotations

from amaranth.hdl import Array, Const, Module, Mux, Signal, signed, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.models import ckks_fixed
from hhe_gen.params.errors import ParameterError

from ..fft import SpecialIfft

__all__ = ["Encoder", "ResidueStage"]


def scale_up_hw(v, fmt, log_scale):
    """:func:`hhe_gen.models.ckks_fixed.scale_up` for a signed W-bit Value."""
    f = fmt.frac_bits
    if log_scale >= f:
        return v << (log_scale - f)
    r = f - log_scale
    return (v + (1 << (r - 1)) - v[-1]) >> r


class Encoder(wiring.Component):
    __doc__ = __doc__

    @quiet_on_error
    def __init__(self, n_ring, lanes, fmt, log_scale, moduli, *, target="ecp5", bf_latency=None):
        self.moduli = ckks_fixed.check_codec_params(n_ring, fmt, log_scale, moduli)
        if len(self.moduli) > 128:
            raise ParameterError("moduli", f"<{len(self.moduli)} primes>", "1 .. 128 primes")
        self.n_ring, self.n, self.lanes, self.fmt, self.log_scale = n_ring, n_ring // 2, lanes, fmt, log_scale
        self.ifft = SpecialIfft(self.n, lanes, fmt, passes=2 * len(self.moduli), target=target,
                                bf_latency=bf_latency)
        self.qbits = max(q.bit_length() for q in self.moduli)
        self.residues = ResidueStage(self.n, lanes, fmt, log_scale, self.moduli)
        super().__init__({
            "i_stream": In(stream.Signature(data.ArrayLayout(unsigned(2 * fmt.width), lanes))),
            "o_stream": Out(stream.Signature(data.ArrayLayout(unsigned(self.qbits), lanes))),
        })

    def cycles(self) -> int:
        return self.ifft.cycles() + 1

    def model(self, slots):
        """Residue rows (one per prime) of n fixed-point slots."""
        return ckks_fixed.encode_fixed(slots, self.fmt, self.log_scale, self.moduli)

    def elaborate(self, platform):
        m = Module()
        m.submodules.ifft = ifft = self.ifft
        m.submodules.residues = res = self.residues
        wiring.connect(m, wiring.flipped(self.i_stream), ifft.i_stream)
        wiring.connect(m, ifft.o_stream, res.i_stream)
        wiring.connect(m, res.o_stream, wiring.flipped(self.o_stream))
        return m


class ResidueStage(wiring.Component):
    """The encoder's output stage: IFFT results -> x Delta, rounded -> residue mod the pass's prime
    -> register (one beat per cycle, ready = ~valid | o_ready).

    i_stream: the IFFT's 2L passes of n/P packed beats (pass 2i real parts, 2i+1 imaginary parts,
    for prime i); o_stream: residues (qbits per lane).  Latency 1 (a taken input beat is on
    o_stream the next cycle).  ``signed_out`` (In(1), default 0): while 1 the lanes carry the
    rounded integers themselves, qbits-bit two's complement, instead of their residues (they fit:
    |m| < 2^(W-1-F+log_scale) < every prime, the codec's parameter rule)."""

    def __init__(self, n, lanes, fmt, log_scale, moduli):
        self.n, self.lanes, self.fmt, self.log_scale, self.moduli = n, lanes, fmt, log_scale, tuple(moduli)
        self.qbits = max(q.bit_length() for q in self.moduli)
        super().__init__({
            "i_stream": In(stream.Signature(data.ArrayLayout(unsigned(2 * fmt.width), lanes))),
            "o_stream": Out(stream.Signature(data.ArrayLayout(unsigned(self.qbits), lanes))),
            "signed_out": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        fmt, p, w = self.fmt, self.lanes, self.fmt.width
        beats = self.n // p
        beat_bits = beats.bit_length() - 1
        total = len(self.moduli) * 2 * beats
        beat = Signal(range(total))
        passno = beat[beat_bits:]
        is_im = passno[0]
        prime = passno[1:] if len(self.moduli) > 1 else Const(0, 1)
        qs = Array(Const(q, self.qbits) for q in self.moduli)
        o_valid = Signal()
        o_data = [Signal(self.qbits, name=f"o_lane{lane}") for lane in range(p)]
        take = Signal()
        m.d.comb += [self.i_stream.ready.eq(~o_valid | self.o_stream.ready),
                     take.eq(self.i_stream.valid & self.i_stream.ready),
                     self.o_stream.valid.eq(o_valid)]
        m.d.comb += [self.o_stream.payload[lane].eq(o_data[lane]) for lane in range(p)]
        q = Signal(self.qbits)
        m.d.comb += q.eq(qs[prime] if len(self.moduli) > 1 else self.moduli[0])
        for lane in range(p):
            packed = self.i_stream.payload[lane]
            v = Signal(signed(w), name=f"v{lane}")
            m.d.comb += v.eq(Mux(is_im, packed[w:2 * w], packed[:w]))
            mm = scale_up_hw(v, fmt, self.log_scale)
            res = Signal(self.qbits, name=f"res{lane}")
            m.d.comb += res.eq(Mux((mm < 0) & ~self.signed_out, mm + q, mm)[:self.qbits])
            with m.If(take):
                m.d.sync += o_data[lane].eq(res)
        with m.If(take):
            m.d.sync += [o_valid.eq(1), beat.eq(Mux(beat == total - 1, 0, beat + 1))]
        with m.Elif(self.o_stream.ready):
            m.d.sync += o_valid.eq(0)
        return m
