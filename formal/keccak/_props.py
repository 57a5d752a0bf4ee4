"""Stream handshake properties for the Keccak harnesses.

Local helpers: ``formal/common`` (the shared stream properties) did not exist yet when these were
written; they state the same rules and can be replaced by the shared ones later.

Rules of ``amaranth.lib.stream``: once ``valid`` is high it stays high until the transfer
(``valid & ready``), and the payload does not change meanwhile.  For a stream the harness drives
(a DUT input) the rules are assumed; for a stream the DUT drives they are asserted.  ``abort`` (the
DUT's restart strobe) releases the rule in the cycle it is high.
"""

from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Assume, Signal, Value


def _pending(m, s, tag):
    """(pending, previous payload): pending is 1 when the previous cycle offered a beat that was
    not taken."""
    pending = Signal(name=f"{tag}_pending")
    prev = Signal(len(Value.cast(s.payload)), name=f"{tag}_prev_payload")
    m.d.sync += [pending.eq(s.valid & ~s.ready), prev.eq(Value.cast(s.payload))]
    return pending, prev


def assume_source(m, s, *, abort=0, tag="i"):
    """Drive the DUT's input stream ``s`` from free values that obey the stream rules."""
    m.d.comb += [s.valid.eq(AnySeq(1)), Value.cast(s.payload).eq(AnySeq(len(Value.cast(s.payload))))]
    pending, prev = _pending(m, s, tag)
    with m.If(pending & ~Value.cast(abort)):
        m.d.comb += [Assume(s.valid), Assume(Value.cast(s.payload) == prev)]


def assert_source(m, s, *, abort=0, tag="o", free_ready=True):
    """Assert the stream rules on the DUT's output stream ``s`` (its ``ready`` free if asked)."""
    if free_ready:
        m.d.comb += s.ready.eq(AnySeq(1))
    pending, prev = _pending(m, s, tag)
    with m.If(pending & ~Value.cast(abort)):
        m.d.comb += [Assert(s.valid), Assert(Value.cast(s.payload) == prev)]
