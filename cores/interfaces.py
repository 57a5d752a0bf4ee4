"""The interface vocabulary every core uses from the engine on: one word for each shape.

- **Polynomial beat**: ``P`` coefficients of one residue polynomial (lane ``j`` of beat ``k`` is
  coefficient ``k*P + j`` in the stream's order), the prime index they belong to, and ``last`` on
  the polynomial's final beat (:func:`poly_beat_layout`).  Cores whose streams predate the vocabulary
  carry the bare coefficient array; :class:`PolyFramer` adds the framing in front of the engine.
- **RNS order** (:class:`RnsOrder`): how the residues of several primes follow each other on a
  stream: ``PRIME_MAJOR`` = prime 0's N coefficients, then prime 1's, ...; ``COEFF_MAJOR`` = each
  beat carries all primes' residues of its coefficients.  :data:`RNS_ORDERS` records each core's.
- **Framing**: ``last`` marks the final beat of anything with an end (a polynomial, a packet, a
  message); streams that carry a bare word per beat have no ``last``.
- **Command / status** (:func:`command_members`): ``cmd`` (an input stream: the command is taken
  on its handshake), ``busy`` (a command is in progress), ``done`` (one-cycle pulse: it has
  completed), ``error`` (valid with ``done``: it completed with a data error).
- **Abort**: one input named ``abort`` (:data:`ABORT`): a one-cycle strobe that drops the command or
  message in progress and returns the core to idle, ready for a new one in the next cycle.  No
  handshake completes in a cycle with ``abort`` high.
- **Clock enable**: ``en`` for pipelines that advance only when enabled (arith cores).

The cores keep the port names their tests and proofs use where they were already in the
vocabulary (``i_stream`` / ``o_stream``, ``cmd`` / ``busy`` / ``done``, ``abort``, ``en``);
:func:`check_vocabulary` lists what a component's signature does differently (tests/cores run it
over every core).
"""

from __future__ import annotations

from enum import Enum

from amaranth.hdl import Module, Mux, Shape, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.params.checks import check_int

__all__ = ["ABORT", "RnsOrder", "RNS_ORDERS", "poly_beat_layout", "command_members",
           "PolyFramer", "check_vocabulary", "ALLOWED_CONTROL"]

ABORT = "abort"


class RnsOrder(Enum):
    """How residues of several primes follow each other on a stream."""
    PRIME_MAJOR = "prime-major"     # prime 0's N coefficients, then prime 1's, ...
    COEFF_MAJOR = "coeff-major"     # a beat carries every prime's residue of its coefficients


RNS_ORDERS = {
    "hhe_gen.cores.ckks.encoder.Encoder.o_stream": RnsOrder.PRIME_MAJOR,
    "hhe_gen.cores.ckks.decoder.Decoder.i_stream": RnsOrder.COEFF_MAJOR,
    "hhe_gen.cores.ntt.iterative.IterativeNtt": RnsOrder.PRIME_MAJOR,
    "hhe_gen.cores.sampler.uniform.UniformModQ.o_stream": RnsOrder.PRIME_MAJOR,
    "hhe_gen.cores.sampler.residues.Residues.o_stream": RnsOrder.COEFF_MAJOR,
}
"""The RNS order of every core stream that carries several primes' residues (the engine's buffers
turn one into the other: a polynomial buffer holds one prime's row)."""

ALLOWED_CONTROL = {"abort", "en", "cmd", "busy", "done", "error", "i_stream", "o_stream"}
"""Control-port names of the vocabulary (data ports and core-specific inputs are free)."""

_OLD_ABORT_NAMES = ("clear", "restart", "flush", "reset", "rst", "soft_reset", "cancel")


def poly_beat_layout(width: int, lanes: int, primes: int) -> data.StructLayout:
    """A polynomial beat: ``data`` (``lanes`` coefficients of ``width`` bits), ``prime`` (the index of
    the prime they are residues of, 0 .. primes-1) and ``last`` (the polynomial's final beat)."""
    check_int("width", width, 1, 64)
    check_int("lanes", lanes, 1, 1 << 16)
    check_int("primes", primes, 1, 256)
    return data.StructLayout({"data": data.ArrayLayout(unsigned(width), lanes),
                              "prime": range(max(primes, 2)), "last": 1})


def command_members(cmd_layout, *, error: bool = False, abort: bool = False) -> dict:
    """Signature members of the command / status shape: ``cmd`` (In stream of ``cmd_layout``),
    ``busy``, ``done`` and optionally ``error`` (Out) and ``abort`` (In)."""
    members = {"cmd": In(stream.Signature(cmd_layout)), "busy": Out(1), "done": Out(1)}
    if error:
        members["error"] = Out(1)
    if abort:
        members[ABORT] = In(1)
    return members


def check_vocabulary(component: wiring.Component) -> list[str]:
    """What a component's signature names outside the vocabulary (empty: it conforms).

    Checked: an abort-like input must be called ``abort``; ``busy`` / ``done`` / ``error`` are
    one-bit outputs; a ``cmd`` member is an input stream; ``i_stream`` is an input and ``o_stream``
    an output stream.
    """
    problems = []
    members = component.signature.members
    for name, member in members.items():
        if name in _OLD_ABORT_NAMES or name.endswith("_abort"):
            problems.append(f"{name}: an abort input is named {ABORT!r}")
        if name in ("busy", "done", "error") and (not member.is_port or member.flow != Out
                                                  or Shape.cast(member.shape) != unsigned(1)):
            problems.append(f"{name}: a one-bit output")
        if name == ABORT and (not member.is_port or member.flow != In or Shape.cast(member.shape) != unsigned(1)):
            problems.append(f"{name}: a one-bit input")
        if name in ("cmd", "i_stream", "o_stream"):
            want = Out if name == "o_stream" else In
            if member.is_port or member.flow != want or not isinstance(member.signature, stream.Signature):
                problems.append(f"{name}: an {'output' if want == Out else 'input'} stream")
    return problems


class PolyFramer(wiring.Component):
    """Adds polynomial framing to a bare coefficient stream: ``prime`` (from ``prime`` at the first
    beat, held for the polynomial) and ``last`` on every ``beats``-th beat.

    Parameters
    ----------
    width, lanes, primes : as :func:`poly_beat_layout`
    beats : int     beats per polynomial (N / lanes)

    Members
    -------
    i_stream : In(stream.Signature(ArrayLayout(width, lanes)))
    o_stream : Out(stream.Signature(poly_beat_layout(width, lanes, primes)))
    prime : In(range(primes))   the prime index, sampled with each polynomial's first beat
    abort : In(1)               restart the beat count (the next beat is a first beat)

    Latency
    -------
    Combinational (no register): a beat passes in the cycle it is offered.
    """

    def __init__(self, width: int, lanes: int, primes: int, beats: int):
        self.beats = check_int("beats", beats, 1, 1 << 20)
        self.out_layout = poly_beat_layout(width, lanes, primes)
        super().__init__({
            "i_stream": In(stream.Signature(data.ArrayLayout(unsigned(width), lanes))),
            "o_stream": Out(stream.Signature(self.out_layout)),
            "prime": In(range(max(primes, 2))),
            ABORT: In(1),
        })

    def elaborate(self, platform):
        m = Module()
        count = Signal(range(self.beats))
        held = Signal.like(self.prime)
        first = count == 0
        last = count == self.beats - 1
        take = self.o_stream.valid & self.o_stream.ready
        m.d.comb += [
            self.o_stream.valid.eq(self.i_stream.valid & ~self.abort),
            self.i_stream.ready.eq(self.o_stream.ready & ~self.abort),
            self.o_stream.payload.data.eq(self.i_stream.payload),
            self.o_stream.payload.prime.eq(Mux(first, self.prime, held)),
            self.o_stream.payload.last.eq(last),
        ]
        with m.If(self.abort):
            m.d.sync += count.eq(0)
        with m.Elif(take):
            m.d.sync += count.eq(Mux(last, 0, count + 1))
            with m.If(first):
                m.d.sync += held.eq(self.prime)
        return m

