"""Signed sample -> its residue modulo every prime of an RNS set (one sample serves all primes)."""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Shape, signed, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import validating
from hhe_gen.params import checks
from hhe_gen.params.errors import ParameterError

__all__ = ["Residues", "residue_layout", "check_moduli"]


def check_moduli(moduli, bound: int) -> tuple[int, ...]:
    """A non-empty tuple of moduli, each > bound (so a value in [-bound, bound] needs one fix-up)."""
    return checks.check_moduli(moduli, checks.modulus_above(bound), single=False, distinct=False,
                               allowed=f"a non-empty sequence of integers > {bound} (the largest |sample|)")


def residue_layout(value_shape, moduli) -> data.StructLayout:
    """``{"value": value_shape, "residues": ArrayLayout(unsigned(max bits of q), len(moduli))}``."""
    width = max(q - 1 for q in moduli).bit_length()
    return data.StructLayout({"value": value_shape,
                              "residues": data.ArrayLayout(unsigned(width), len(moduli))})


class Residues(wiring.Component):
    """Pipeline stage: signed value ``v`` in, ``{value: v, residues: [v mod q_0, v mod q_1, ...]}`` out.

    Every residue is in ``[0, q_i)``: ``v`` if ``v >= 0`` else ``q_i + v`` (one adder and a mux per
    prime; both computed for every sample: no data-dependent timing).  Equal to
    :func:`hhe_gen.models.sampler.to_residues` for every ``|v| <= bound``.

    Parameters
    ----------
    moduli : sequence of int   the RNS primes (any moduli > bound)
    value_shape : signed shape of the incoming values
    bound : int                largest |v| that can arrive (default: what ``value_shape`` holds)

    Members
    -------
    i_stream : In(stream.Signature(value_shape))
    o_stream : Out(stream.Signature(residue_layout(value_shape, moduli)))

    Latency 1 cycle, one value per cycle (a registered stage; ``i_stream.ready`` follows
    ``o_stream.ready`` combinationally).
    """

    def __init__(self, moduli, value_shape, bound: int | None = None):
        with validating(self):
            shape = Shape.cast(value_shape)
            if not shape.signed:
                raise ParameterError("value_shape", value_shape, "a signed shape")
            if bound is None:
                bound = 1 << (shape.width - 1)
            self.moduli = check_moduli(moduli, bound)
        self.value_shape = signed(shape.width)
        self.layout = residue_layout(self.value_shape, self.moduli)
        super().__init__({"i_stream": In(stream.Signature(self.value_shape)),
                          "o_stream": Out(stream.Signature(self.layout))})

    def elaborate(self, platform):
        m = Module()
        enable = ~self.o_stream.valid | self.o_stream.ready
        v = self.i_stream.payload
        m.d.comb += self.i_stream.ready.eq(enable)
        with m.If(enable):
            m.d.sync += [self.o_stream.valid.eq(self.i_stream.valid), self.o_stream.payload.value.eq(v)]
            for i, q in enumerate(self.moduli):
                m.d.sync += self.o_stream.payload.residues[i].eq(Mux(v < 0, q + v, v))
        return m
