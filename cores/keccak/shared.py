"""One SHAKE XOF shared by several clients, one client at a time (DNA-HHE's one PRNG unit).

::

    client 0 (req, absorb, restart) --+                       +--> squeeze (valid to the holder)
    client 1 (req, absorb, restart) --+--> holder mux --> ShakeXof
    ...                                                        (data to every client)

A client raises ``req`` for as long as it needs the XOF (a whole task: its messages, restarts
and squeezing).  While nobody holds the XOF and no restart is pending, the lowest-numbered
requesting client is granted in the same cycle (``grant`` is combinational then, so a client
whose request finds the XOF free sees no added cycle) and holds it from the next cycle until it
drops ``req``.  In the first cycle the holder's ``req`` is low, the XOF restarts (its ``abort``),
so every client is granted a sponge that is clean, as after reset; a client that requested
meanwhile is granted in the next cycle.

Only the granted client's ``absorb`` and ``restart`` reach the XOF; its squeeze stream's
``valid`` goes to the granted client alone and ``ready`` comes from it, so a client that is not
granted sees its absorb stream not ready and nothing to squeeze.  The squeezed data go to every
client (a client ignores them while it is not granted); nothing a client wrote is visible to
another after the restart.

Parameters
----------
clients : int           number of clients (>= 1)
variant, beat_bytes, rounds_per_cycle, ring : the XOF's (:class:`.xof.ShakeXof`; ``variant`` 128 or
                        256)

Members
-------
client{i} : In(xof_client_signature(beat_bytes)) for i in 0 .. clients - 1
xof : the :class:`.xof.ShakeXof` (after construction)

Latency
-------
The XOF's own (:class:`.xof.ShakeXof`), nothing added while a client holds it; a request that
finds the XOF free is granted in the same cycle; one that waits for a holder is granted two
cycles after the holder's last ``req`` (the cycle between is the restart's).
"""

from __future__ import annotations

from amaranth.hdl import Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.params.checks import check_int

from .xof import ShakeXof, absorb_layout, byte_stream_signature, check_beat_bytes

__all__ = ["xof_client_signature", "SharedXof"]


def xof_client_signature(beat_bytes: int) -> wiring.Signature:
    """A client's port on :class:`SharedXof`, as the client drives it: ``req`` (Out: hold the XOF),
    ``grant`` (In: the XOF is this client's in this cycle), ``restart`` (Out: the XOF's ``abort``,
    seen only while granted), ``absorb`` (Out stream of :func:`.xof.absorb_layout`) and ``squeeze``
    (In byte stream of ``beat_bytes``)."""
    w = check_beat_bytes(beat_bytes)
    return wiring.Signature({
        "req": Out(1), "grant": In(1), "restart": Out(1),
        "absorb": Out(stream.Signature(absorb_layout(w))),
        "squeeze": In(byte_stream_signature(w)),
    })


class SharedXof(wiring.Component):
    """One ShakeXof, granted to one client at a time (see the module docstring)."""

    @quiet_on_error
    def __init__(self, clients: int, *, variant=256, beat_bytes: int = 8, rounds_per_cycle: int = 1,
                 ring: bool = False):
        self.clients = check_int("clients", clients, 1, 16)
        self.xof = ShakeXof(variant, beat_bytes=beat_bytes, rounds_per_cycle=rounds_per_cycle, ring=ring)
        self.beat_bytes = self.xof.beat_bytes
        self.rounds_per_cycle = self.xof.rounds_per_cycle
        super().__init__({f"client{i}": In(xof_client_signature(self.beat_bytes)) for i in range(self.clients)})
        self.holding = Signal()
        self.holder = Signal(range(max(2, self.clients)))

    def elaborate(self, platform):
        m = Module()
        m.submodules.xof = xof = self.xof
        ports = [getattr(self, f"client{i}") for i in range(self.clients)]
        holding, holder = self.holding, self.holder
        release = Signal()                      # the holder dropped req: the XOF restarts in this cycle
        m.d.comb += release.eq(holding & ~_pick(holder, [port.req for port in ports]))

        # the grant: the holder's while it requests; else, from the cycle after a release on, the
        # first requester's
        free = ~holding
        earlier = Const(0)
        grants = []
        for i, port in enumerate(ports):
            g = Signal(name=f"grant{i}")
            m.d.comb += g.eq(port.req & Mux(holding, holder == i, free & ~earlier))
            earlier = earlier | port.req
            grants.append(g)
            m.d.comb += port.grant.eq(g)
        with m.If(release):
            m.d.sync += holding.eq(0)
        with m.Elif(~holding):
            for i in reversed(range(self.clients)):     # the first requester wins
                with m.If(grants[i]):
                    m.d.sync += [holding.eq(1), holder.eq(i)]

        # the holder's streams to the XOF, the XOF's output to the holder
        absorb_valid, restart, take = Const(0), Const(0), Const(0)
        for g, port in zip(grants, ports):
            absorb_valid = absorb_valid | (g & port.absorb.valid)
            restart = restart | (g & port.restart)
            take = take | (g & port.squeeze.ready)
            m.d.comb += [port.absorb.ready.eq(g & xof.i_stream.ready),
                         port.squeeze.valid.eq(g & xof.o_stream.valid),
                         port.squeeze.payload.eq(xof.o_stream.payload)]
        payload = ports[0].absorb.payload
        for g, port in zip(grants[1:], ports[1:]):
            payload = Mux(g, port.absorb.payload, payload)
        m.d.comb += [xof.i_stream.valid.eq(absorb_valid), xof.i_stream.payload.eq(payload),
                     xof.o_stream.ready.eq(take), xof.abort.eq(restart | release)]
        return m


def _pick(index, values):
    """``values[index]`` as a chain of multiplexers."""
    out = values[0]
    for i, v in enumerate(values[1:], 1):
        out = Mux(index == i, v, out)
    return out
