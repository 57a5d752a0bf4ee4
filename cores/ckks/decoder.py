"""CKKS decoder: residues mod one prime -> centred -> / Delta (fixed point) -> special FFT -> slots.

Golden model: :func:`hhe_gen.models.ckks_fixed.decode_fixed` (equal to
:func:`hhe_gen.models.ckks.decode` with ``fmt`` of a one-prime plaintext, tests/cores/ckks), bit
for bit.

Datapath::

    i_stream (P residues/beat, coefficients m_0 .. m_{N-1} in natural order) -> per lane:
      c = r - q if r > floor(q/2) else r                         (centred)
      v = scale_down(c) = c << (F - log_scale), or (c + 2^(s-1) - [c<0]) >> s, s = log_scale - F
          (round half away from zero), saturated to [min_int, max_int]
    -> register -> SpecialFft(split_load): the first N/2 coefficients are the real parts of
       w_0 .. w_{n-1}, the next N/2 their imaginary parts -> o_stream (P slots/beat, packed)

One prime only: the CRT over several primes (a wide multiply-accumulate by the CRT weights and a
reduction mod Q) is not built; a fresh or rescaled plaintext decodes from q_0 alone while
|m| < q_0/2 (give the decoder the first prime's row).

Parameters
----------
n_ring, lanes, fmt, log_scale : as :class:`.encoder.Encoder`
modulus : int           the prime q (odd, < 2^64); 2^(W-1-F+log_scale) < q
target, bf_latency      passed to the FFT's butterflies

Members
-------
i_stream : In(stream.Signature(ArrayLayout(qbits, P)))      residues in [0, q)
o_stream : Out(stream.Signature(ArrayLayout(2W, P)))        slots ``re | im << W``
fft : the :class:`~hhe_gen.cores.fft.SpecialFft`

Latency
-------
One input register before the FFT (which takes 2n/P = N/P beats with split_load): with the last
residue beat accepted in cycle c, the first slot beat is taken in cycle c + fft.compute_cycles + 3;
:meth:`cycles` = fft.cycles() + 1 (first input beat to last output beat, inclusive, full rate).
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal, signed, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.arith.constants import quiet_on_error
from hhe_gen.models import ckks_fixed
from hhe_gen.params.errors import ParameterError

from ..fft import SpecialFft

__all__ = ["Decoder"]


def scale_down_hw(c, fmt, log_scale):
    """:func:`hhe_gen.models.ckks_fixed.scale_down` for a signed Value (saturated, W bits)."""
    f = fmt.frac_bits
    if f >= log_scale:
        v = c << (f - log_scale)
    else:
        s = log_scale - f
        v = (c + (1 << (s - 1)) - c[-1]) >> s
    return Mux(v > fmt.max_int, fmt.max_int, Mux(v < fmt.min_int, fmt.min_int, v))


class Decoder(wiring.Component):
    __doc__ = __doc__

    @quiet_on_error
    def __init__(self, n_ring, lanes, fmt, log_scale, modulus, *, target="ecp5", bf_latency=None):
        if isinstance(modulus, bool) or not isinstance(modulus, int):
            raise ParameterError("modulus", modulus, "one odd prime 3 .. 2^64 - 1 (CRT over several primes is "
                                 "not implemented: pass the first prime)")
        (self.q,) = ckks_fixed.check_codec_params(n_ring, fmt, log_scale, (modulus,))
        self.n_ring, self.n, self.lanes, self.fmt, self.log_scale = n_ring, n_ring // 2, lanes, fmt, log_scale
        self.fft = SpecialFft(self.n, lanes, fmt, split_load=True, target=target, bf_latency=bf_latency)
        self.qbits = self.q.bit_length()
        super().__init__({
            "i_stream": In(stream.Signature(data.ArrayLayout(unsigned(self.qbits), lanes))),
            "o_stream": Out(stream.Signature(data.ArrayLayout(unsigned(2 * fmt.width), lanes))),
        })

    def cycles(self) -> int:
        return self.fft.cycles() + 1

    def model(self, row):
        """Fixed-point slots of N residues mod q."""
        return ckks_fixed.decode_fixed(row, self.q, self.fmt, self.log_scale)

    def elaborate(self, platform):
        m = Module()
        m.submodules.fft = fft = self.fft
        fmt, p, w, q = self.fmt, self.lanes, self.fmt.width, self.q
        m.d.comb += [self.o_stream.payload.eq(fft.o_stream.payload), self.o_stream.valid.eq(fft.o_stream.valid),
                     fft.o_stream.ready.eq(self.o_stream.ready)]
        r_valid = Signal()
        r_data = Signal(data.ArrayLayout(unsigned(2 * w), p))
        take = Signal()
        m.d.comb += [self.i_stream.ready.eq(~r_valid | fft.i_stream.ready),
                     take.eq(self.i_stream.valid & self.i_stream.ready),
                     fft.i_stream.valid.eq(r_valid), fft.i_stream.payload.eq(r_data)]
        for lane in range(p):
            r = self.i_stream.payload[lane]
            c = Signal(signed(self.qbits + 1), name=f"c{lane}")
            m.d.comb += c.eq(Mux(r > q // 2, r - q, r))
            v = Signal(signed(w), name=f"v{lane}")
            m.d.comb += v.eq(scale_down_hw(c, fmt, self.log_scale))
            with m.If(take):
                m.d.sync += r_data[lane].eq(v.as_unsigned().replicate(2))
        with m.If(take):
            m.d.sync += r_valid.eq(1)
        with m.Elif(fft.i_stream.ready):
            m.d.sync += r_valid.eq(0)
        return m
