"""Streaming CRT: residues of L pairwise coprime moduli -> the centred integer in (-Q/2, Q/2].

Golden model: :func:`hhe_gen.models.ckks_fixed.crt_centre` (tests/cores/ckks check it against an
independent big-integer CRT and the core against it), bit for bit.

Datapath (per lane, L >= 2; Q = prod q_i, inv_i = (Q/q_i)^-1 mod q_i, b_i = bit length of q_i,
mu_i = floor(2^(2 b_i) / q_i), all constants)::

    stage 1: t_i = r_i * inv_i                                   (< q_i^2)
    stage 2: k_i = ((t_i >> (b_i - 1)) * mu_i) >> (b_i + 1)     (Barrett quotient estimate)
    stage 3: u_i = t_i - k_i * q_i                               (in [0, 3 q_i))
    stage 4: y_i = u_i - q_i * [u_i >= q_i] - q_i * [u_i >= 2 q_i]  (= r_i * inv_i mod q_i)
    stage 5: x = sum_i y_i * (Q/q_i)                             (< L*Q)
    stage 6: x -= k*Q for the largest k < L with x >= k*Q (L-1 parallel comparisons, one Mux
             chain); c = x - Q if x > floor(Q/2) else x          (centred)

Every stage is a register; the pipeline advances as a whole when its last register is empty or
taken (``en = ~o_valid | o_ready``; ``i_stream.ready = en``).  No cycle depends on the data.  With
L = 1 there is no pipeline: c = r - q if r > floor(q/2) else r, combinational (latency 0).

Parameters
----------
moduli : list of int    1 .. 8 odd pairwise coprime moduli 3 .. 2^64 - 1
lanes : int             P values per beat, 1 .. 256

Members
-------
i_stream : In(stream.Signature(ArrayLayout(L*qbits, P)))   lane = r_0 | r_1 << qbits | ...,
                                                           r_i in [0, q_i) (qbits = the widest
                                                           modulus' bit length)
o_stream : Out(stream.Signature(ArrayLayout(signed(cbits), P)))   cbits = bit length of Q, + 1
latency : int           0 (L = 1) or 6: an input beat taken in cycle c is on o_stream in cycle
                        c + latency (full rate), one beat per cycle
"""

from __future__ import annotations

import math

from amaranth.hdl import Module, Mux, Signal, signed, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.models import ckks_fixed
from hhe_gen.params.errors import ParameterError

__all__ = ["CrtCentre", "check_crt_moduli"]

CRT_STAGES = 6


def check_crt_moduli(moduli) -> tuple[int, ...]:
    """1 .. 8 odd pairwise coprime moduli 3 .. 2^64 - 1 (ParameterError "moduli" otherwise)."""
    if isinstance(moduli, int) and not isinstance(moduli, bool):
        moduli = (moduli,)
    try:
        moduli = tuple(moduli)
    except TypeError:
        raise ParameterError("moduli", moduli, "a list of 1 .. 8 odd pairwise coprime moduli") from None
    if not 1 <= len(moduli) <= ckks_fixed.MAX_DECODER_PRIMES or any(
            isinstance(q, bool) or not isinstance(q, int) or q < 3 or q % 2 == 0 or q >= 1 << 64 for q in moduli):
        raise ParameterError("moduli", moduli, f"1 .. {ckks_fixed.MAX_DECODER_PRIMES} odd moduli 3 .. 2^64 - 1")
    if any(math.gcd(a, b) != 1 for i, a in enumerate(moduli) for b in moduli[:i]):
        raise ParameterError("moduli", moduli, "pairwise coprime moduli")
    return moduli


class CrtCentre(wiring.Component):
    __doc__ = __doc__

    @quiet_on_error
    def __init__(self, moduli, lanes=1):
        self.moduli = check_crt_moduli(moduli)
        if isinstance(lanes, bool) or not isinstance(lanes, int) or not 1 <= lanes <= 256:
            raise ParameterError("lanes", lanes, "an integer 1 .. 256")
        self.lanes = lanes
        self.qbits = max(q.bit_length() for q in self.moduli)
        self.big_q, self.invs, self.cofactors = ckks_fixed.crt_constants(self.moduli)
        self.cbits = self.big_q.bit_length() + 1
        self.latency = 0 if len(self.moduli) == 1 else CRT_STAGES
        super().__init__({
            "i_stream": In(stream.Signature(data.ArrayLayout(unsigned(len(self.moduli) * self.qbits), lanes))),
            "o_stream": Out(stream.Signature(data.ArrayLayout(signed(self.cbits), lanes))),
        })

    def model(self, residues) -> int:
        return ckks_fixed.crt_centre(residues, self.moduli)

    def elaborate(self, platform):
        m = Module()
        qs, qb, big_q = self.moduli, self.qbits, self.big_q
        if len(qs) == 1:
            q = qs[0]
            m.d.comb += [self.o_stream.valid.eq(self.i_stream.valid), self.i_stream.ready.eq(self.o_stream.ready)]
            for lane in range(self.lanes):
                r = self.i_stream.payload[lane]
                m.d.comb += self.o_stream.payload[lane].eq(Mux(r > q // 2, r - q, r))
            return m

        en = Signal()
        valid = [Signal(name=f"valid{s + 1}") for s in range(CRT_STAGES)]
        m.d.comb += [en.eq(~valid[-1] | self.o_stream.ready), self.i_stream.ready.eq(en),
                     self.o_stream.valid.eq(valid[-1])]
        with m.If(en):
            m.d.sync += valid[0].eq(self.i_stream.valid)
            m.d.sync += [valid[s].eq(valid[s - 1]) for s in range(1, CRT_STAGES)]

        def reg(value, shape, name):
            r = Signal(shape, name=name)
            with m.If(en):
                m.d.sync += r.eq(value)
            return r

        sum_bits = (len(qs) * big_q).bit_length()
        for lane in range(self.lanes):
            packed = self.i_stream.payload[lane]
            ys = []
            for i, (q, inv) in enumerate(zip(qs, self.invs)):
                b = q.bit_length()
                mu = (1 << (2 * b)) // q
                nm = f"l{lane}_p{i}"
                r = packed[i * qb:(i + 1) * qb]
                t1 = reg(r * inv, unsigned(qb + b), f"t1_{nm}")
                k2 = reg(((t1 >> (b - 1)) * mu) >> (b + 1), unsigned(b + 2), f"k2_{nm}")
                t2 = reg(t1, unsigned(qb + b), f"t2_{nm}")
                u3 = reg((t2 - k2 * q)[:b + 2], unsigned(b + 2), f"u3_{nm}")
                y4 = reg(Mux(u3 >= 2 * q, u3 - 2 * q, Mux(u3 >= q, u3 - q, u3)), unsigned(b), f"y4_{nm}")
                ys.append(y4 * self.cofactors[i])
            total = ys[0]
            for y in ys[1:]:
                total = total + y
            x5 = reg(total, unsigned(sum_bits), f"x5_l{lane}")
            red = x5
            for k in range(1, len(qs)):                      # the largest k with x >= k*Q wins
                red = Mux(x5 >= k * big_q, x5 - k * big_q, red)
            xr = Signal(unsigned(big_q.bit_length()), name=f"xr_l{lane}")
            m.d.comb += xr.eq(red)
            c6 = reg(Mux(xr > big_q // 2, xr - big_q, xr), signed(self.cbits), f"c6_l{lane}")
            m.d.comb += self.o_stream.payload[lane].eq(c6)
        return m
