"""Parameter checks and small helpers shared by the sampler cores."""

from __future__ import annotations

from amaranth.hdl import Mux, ResetInserter
from amaranth.lib import wiring

from hhe_gen.params.errors import ParameterError

IN_BYTES = (1, 2, 4, 8)


def check_in_bytes(in_bytes) -> int:
    """The byte-stream width W (bytes per beat) of the shared byte-stream contract."""
    if in_bytes not in IN_BYTES or isinstance(in_bytes, bool):
        raise ParameterError("in_bytes", in_bytes, "1, 2, 4 or 8 bytes per beat")
    return int(in_bytes)


def popcount(bits) -> object:
    """Sum of the bits of a list of 1-bit values (an adder tree)."""
    return balanced_sum(bits)


def balanced_sum(values) -> object:
    """Sum of a list of values as a balanced tree of two-input adders (0 for an empty list)."""
    terms = list(values)
    if not terms:
        return 0
    while len(terms) > 1:
        nxt = [terms[i] + terms[i + 1] for i in range(0, len(terms) - 1, 2)]
        if len(terms) % 2:
            nxt.append(terms[-1])
        terms = nxt
    return terms[0]


def negate_if(sign, magnitude):
    """``-magnitude`` if ``sign`` else ``magnitude`` (both arms evaluated: no data-dependent path)."""
    return Mux(sign, -magnitude, magnitude)


def chain(m, component, stages, names):
    """Connect ``component.i_stream -> stages[0] -> ... -> stages[-1] -> component.o_stream``.

    Every stage is reset by ``component.abort`` (``ResetInserter``); while ``clear`` is high no
    transfer happens on the outer streams (``i_stream.ready`` and ``o_stream.valid`` are low).
    """
    for name, stage in zip(names, stages):
        m.submodules[name] = ResetInserter(component.abort)(stage)
    for a, b in zip(stages, stages[1:]):
        wiring.connect(m, a.o_stream, b.i_stream)
    first, last = stages[0].i_stream, stages[-1].o_stream
    m.d.comb += [
        first.valid.eq(component.i_stream.valid & ~component.abort),
        first.payload.eq(component.i_stream.payload),
        component.i_stream.ready.eq(first.ready & ~component.abort),
        component.o_stream.valid.eq(last.valid & ~component.abort),
        component.o_stream.payload.eq(last.payload),
        last.ready.eq(component.o_stream.ready & ~component.abort),
    ]
