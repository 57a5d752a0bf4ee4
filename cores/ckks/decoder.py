"""CKKS decoder: residues mod L coprime moduli -> CRT, centred -> / Delta (fixed point) -> special
FFT -> slots.

Golden model: :func:`hhe_gen.models.ckks_fixed.decode_fixed` (equal to
:func:`hhe_gen.models.ckks.decode` with ``fmt``, tests/cores/ckks), bit for bit.

Datapath::

    i_stream (P coefficients/beat, m_0 .. m_{N-1} in natural order; a lane carries all L residues
              of its coefficient, r_0 | r_1 << qbits | ...) ->
      CrtCentre: c in (-Q/2, Q/2], c = r_i mod q_i          (L = 1: c = r - q if r > floor(q/2)
                                                             else r, combinational; L >= 2: a
                                                             6-stage pipeline, see crt.py)
      v = scale_down(c) = c << (F - log_scale), or (c + 2^(s-1) - [c<0]) >> s, s = log_scale - F
          (round half away from zero), saturated to [min_int, max_int]
    -> register -> SpecialFft(split_load): the first N/2 coefficients are the real parts of
       w_0 .. w_{n-1}, the next N/2 their imaginary parts -> o_stream (P slots/beat, packed)

The CRT's width grows with L: Q has sum(bit lengths) bits; its last stage multiplies each
y_i < q_i by the constant Q/q_i and adds L such products.

Parameters
----------
n_ring, lanes, fmt, log_scale : as :class:`.encoder.Encoder`
moduli : int or list    1 .. 8 odd pairwise coprime moduli (< 2^64); 2^(W-1-F+log_scale) < Q
target, bf_latency      passed to the FFT's butterflies

Members
-------
i_stream : In(stream.Signature(ArrayLayout(L*qbits, P)))   residues r_i in [0, q_i), packed per lane
o_stream : Out(stream.Signature(ArrayLayout(2W, P)))        slots ``re | im << W``
crt : the :class:`~.crt.CrtCentre`;  scale : the :class:`ScaleDownStage`;  fft : the
:class:`~hhe_gen.cores.fft.SpecialFft` (connected in that order)

Latency
-------
The CRT (crt.latency = 0 for L = 1, 6 for L >= 2), one register before the FFT (which takes
2n/P = N/P beats with split_load): with the last residue beat accepted in cycle c, the first slot
beat is taken in cycle c + crt.latency + fft.first_output_delay + 1 (= c + crt.latency +
fft.compute_cycles + 4); :meth:`cycles` = fft.cycles() +
1 + crt.latency (first input beat to last output beat, inclusive, full rate).
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal, signed, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.models import ckks_fixed

from ..fft import SpecialFft
from .crt import CrtCentre

__all__ = ["Decoder", "ScaleDownStage"]


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
    def __init__(self, n_ring, lanes, fmt, log_scale, moduli, *, target="ecp5", bf_latency=None):
        self.moduli = ckks_fixed.check_decoder_params(n_ring, fmt, log_scale, moduli)
        self.n_ring, self.n, self.lanes, self.fmt, self.log_scale = n_ring, n_ring // 2, lanes, fmt, log_scale
        self.fft = SpecialFft(self.n, lanes, fmt, split_load=True, target=target, bf_latency=bf_latency)
        self.crt = CrtCentre(self.moduli, lanes)
        self.scale = ScaleDownStage(lanes, fmt, log_scale, self.crt.cbits)
        self.qbits = self.crt.qbits
        super().__init__({
            "i_stream": In(stream.Signature(data.ArrayLayout(unsigned(len(self.moduli) * self.qbits), lanes))),
            "o_stream": Out(stream.Signature(data.ArrayLayout(unsigned(2 * fmt.width), lanes))),
        })

    def cycles(self) -> int:
        return self.fft.cycles() + 1 + self.crt.latency

    def model(self, rows):
        """Fixed-point slots of L rows of N residues (row i mod moduli[i]; with one modulus a single
        row is accepted too)."""
        if rows and isinstance(rows[0], int):
            rows = [rows]
        return ckks_fixed.decode_fixed(rows, list(self.moduli), self.fmt, self.log_scale)

    def pack(self, rows) -> list[list[int]]:
        """Input beats (P packed lanes each) of L residue rows."""
        if rows and isinstance(rows[0], int):
            rows = [rows]
        p, qb = self.lanes, self.qbits
        return [[sum(row[b * p + lane] << (i * qb) for i, row in enumerate(rows)) for lane in range(p)]
                for b in range(self.n_ring // p)]

    def elaborate(self, platform):
        m = Module()
        m.submodules.crt = crt = self.crt
        m.submodules.scale = scale = self.scale
        m.submodules.fft = fft = self.fft
        # a pure composition (no logic of its own; see the encoder on Yosys 0.70's ABC9)
        wiring.connect(m, wiring.flipped(self.i_stream), crt.i_stream)
        wiring.connect(m, crt.o_stream, scale.i_stream)
        wiring.connect(m, scale.o_stream, fft.i_stream)
        wiring.connect(m, fft.o_stream, wiring.flipped(self.o_stream))
        return m


class ScaleDownStage(wiring.Component):
    """The decoder's stage between the CRT and the FFT: centred c -> v = scale_down(c) (saturated W
    bits) -> register; the FFT lane gets v in both halves (split_load takes one).  ready = ~valid |
    o_ready; latency 1."""

    def __init__(self, lanes, fmt, log_scale, cbits):
        self.lanes, self.fmt, self.log_scale, self.cbits = lanes, fmt, log_scale, cbits
        super().__init__({
            "i_stream": In(stream.Signature(data.ArrayLayout(signed(cbits), lanes))),
            "o_stream": Out(stream.Signature(data.ArrayLayout(unsigned(2 * fmt.width), lanes))),
        })

    def elaborate(self, platform):
        m = Module()
        fmt, p, w = self.fmt, self.lanes, self.fmt.width
        r_valid = Signal()
        r_data = [Signal(2 * w, name=f"fft_in{lane}") for lane in range(p)]
        take = Signal()
        m.d.comb += [self.i_stream.ready.eq(~r_valid | self.o_stream.ready),
                     take.eq(self.i_stream.valid & self.i_stream.ready),
                     self.o_stream.valid.eq(r_valid)]
        m.d.comb += [self.o_stream.payload[lane].eq(r_data[lane]) for lane in range(p)]
        for lane in range(p):
            v = Signal(signed(w), name=f"v{lane}")
            m.d.comb += v.eq(scale_down_hw(self.i_stream.payload[lane], fmt, self.log_scale))
            with m.If(take):
                m.d.sync += r_data[lane].eq(v.as_unsigned().replicate(2))
        with m.If(take):
            m.d.sync += r_valid.eq(1)
        with m.Elif(self.o_stream.ready):
            m.d.sync += r_valid.eq(0)
        return m
