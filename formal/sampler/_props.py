"""Stream handshake properties used by the sampler harnesses (local: no shared helpers existed
in ``formal/common`` when these were written).

Rules of ``amaranth.lib.stream`` enforced here: once ``valid`` is high it stays high until the
transfer (``valid & ready``), and the payload does not change meanwhile.  For a stream the
harness drives (a DUT input, or a DUT output's ``ready``) the rules are assumed; for a stream the
DUT drives they are asserted.  ``exempt`` (e.g. the DUT's ``clear``) releases the rule in the cycle
it is high and in the cycle after.
"""

from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Assume, Signal, Value


def _held(m, s, exempt, tag):
    """1 when the previous cycle had valid & ~ready (and no exemption): a transfer is pending."""
    exempt = Value.cast(exempt)
    pending = Signal(name=f"{tag}_pending")
    prev_payload = Signal(s.payload.shape(), name=f"{tag}_prev_payload")
    m.d.sync += [pending.eq(s.valid & ~s.ready & ~exempt), prev_payload.eq(s.payload)]
    return pending, prev_payload


def drive_source(m, s, *, exempt=0, tag="i"):
    """Drive a DUT input stream from free values under the stream rules (assumed)."""
    m.d.comb += [s.valid.eq(AnySeq(1)), s.payload.eq(AnySeq(len(Value.cast(s.payload))))]
    pending, prev_payload = _held(m, s, exempt, tag)
    with m.If(pending & ~Value.cast(exempt)):
        m.d.comb += [Assume(s.valid), Assume(Value.cast(s.payload) == Value.cast(prev_payload))]


def check_source(m, s, *, exempt=0, tag="o", free_ready=True):
    """Assert the stream rules on a DUT output stream; its ``ready`` is free when ``free_ready``."""
    if free_ready:
        m.d.comb += s.ready.eq(AnySeq(1))
    pending, prev_payload = _held(m, s, exempt, tag)
    with m.If(pending & ~Value.cast(exempt)):
        m.d.comb += [Assert(s.valid), Assert(Value.cast(s.payload) == Value.cast(prev_payload))]
