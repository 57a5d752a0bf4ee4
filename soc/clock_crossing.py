"""The accelerator in a clock domain of its own: its streams, pulses and status carried across to the
system clock, behind the same members as the accelerator itself.

The accelerator may not meet the SoC's system clock (LiteDRAM and LiteEth want theirs); it then
runs in a domain ``cd`` of its own and :class:`AcceleratorCrossing` stands between it and the
peripheral (:class:`.accelerator.Accelerator`), which works in ``sys`` as if the accelerator were
there:

- the instruction, memory (command, write and read beats) and UDP streams go through LiteX's
  ``stream.ClockDomainCrossing`` (asynchronous FIFOs);
- packets leaving are held in ``sys`` until their last beat is in (:class:`WholePackets`):
  LiteEth's UDP port wants a packet without a gap, and a slower clock would leave gaps;
- ``clear`` crosses as a pulse, ``abort`` as a count (aborts in quick succession are never lost):
  the engine's soft reset, then the instructions and arriving UDP beats already in the crossing are
  drained in ``cd``,
  and ``sys`` holds its words until the snapshot shows the drain of its latest abort done;
- the status and the counters kept in ``cd`` cross together as one word (Migen's
  ``BusSynchronizer``): a coherent snapshot, so ``busy`` and the counters read with it agree.

With ``cd == "sys"`` every member is a wire to the accelerator and nothing is added.

Parameters
----------
core : :class:`.accel_instance.AcceleratorInstance`   built in the domain ``cd``
cd : str                   the accelerator's clock domain
stream_depth : int         depth of each asynchronous FIFO
packet_depth : int         beats of :class:`WholePackets` (a packet is at most 368 beats: 1472 bytes)

Members (all in ``sys``)
------------------------
instr, rdata, udp_rx : sinks;  cmd, wdata, udp_tx : sources   (as on the core)
abort, clear : Signal, in      pulses
clear_core : Signal            ``clear`` in ``cd``: what the counters kept there use
pending : Signal, out          instructions handed to the crossing that the engine has not taken yet,
                               or an abort still draining: the engine counts as busy
snapshot(signals) -> list      the ``cd`` signals as seen in ``sys`` (all from one ``cd`` cycle)

Latency
-------
An asynchronous FIFO: about three cycles of the receiving clock; a snapshot: about eight cycles of
the slower clock, every time again; an abort: a count crossing (about eight cycles of the slower
clock), 16 cycles of draining, then a snapshot.
"""

from __future__ import annotations

from migen import Cat, If, Mux, Signal
from migen.genlib.cdc import BusSynchronizer, PulseSynchronizer

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from hhe_gen.params.checks import check_int

__all__ = ["AcceleratorCrossing", "WholePackets", "STREAM_DEPTH"]

STREAM_DEPTH = 16
"""Default depth of each asynchronous FIFO: also the arriving UDP beats that can sit in the
receive crossing, past the receive FIFO, while the engine takes none (drained at an abort)."""

_FLUSH_CYCLES = 16
"""Cycles of ``cd`` an abort drains the instruction crossing for: longer than a word takes to
become visible on the reading side of an asynchronous FIFO."""


class WholePackets(LiteXModule):
    """A FIFO that lets a packet out only once its last beat is in, so it leaves without a gap.

    A beat keeps only its ``data`` (with ``first`` and ``last``: 34 bits for LiteEth's 32-bit UDP
    port, so 512 beats are one 512 x 36 block RAM); the rest of a packet (its parameters, as on its
    first beat, and the last beat's other payload fields, LiteEth's ``last_be`` and ``error``) is
    kept once per packet, in a small FIFO written as the last beat enters.  A packet leaves once
    its entry there is in; its beats other than the last carry zero in those payload fields.

    Parameters
    ----------
    layout : stream layout (with ``last``) that has a ``data`` payload field
    depth : int      beats; a packet longer than this would never leave
    packets : int    whole packets held at most (in distributed RAM)

    Members
    -------
    sink, source : stream.Endpoint(layout)
    complete : Signal   whole packets held
    """

    def __init__(self, layout, depth: int, packets: int = 16):
        check_int("packets", packets, 2, 64)
        self.sink, self.source = sink, source = stream.Endpoint(layout), stream.Endpoint(layout)
        params = [name for name, *_ in layout.param_layout]
        tail = [name for name, *_ in layout.payload_layout if name != "data"]
        width = {name: w for name, w, *_ in layout.param_layout + layout.payload_layout}
        self.beats = beats = stream.SyncFIFO([("data", width["data"])], depth, buffered=True)
        self.heads = heads = stream.SyncFIFO([(n, width[n]) for n in params + tail], packets)
        self.complete = heads.level
        starting = Signal(reset=1)                     # the next beat accepted starts a packet
        held = {n: Signal(width[n], name=f"first_{n}") for n in params}
        accepted = Signal()
        self.comb += [
            accepted.eq(sink.valid & sink.ready),
            sink.ready.eq(beats.sink.ready & heads.sink.ready),
            beats.sink.valid.eq(sink.valid & heads.sink.ready),
            beats.sink.data.eq(sink.data), beats.sink.first.eq(starting), beats.sink.last.eq(sink.last),
            heads.sink.valid.eq(sink.valid & sink.last & beats.sink.ready),
            [getattr(heads.sink, n).eq(Mux(starting, getattr(sink, n), held[n])) for n in params],
            [getattr(heads.sink, n).eq(getattr(sink, n)) for n in tail],
            source.valid.eq(beats.source.valid & heads.source.valid),
            beats.source.ready.eq(source.ready & heads.source.valid),
            heads.source.ready.eq(source.valid & source.ready & beats.source.last),
            source.data.eq(beats.source.data), source.first.eq(beats.source.first),
            source.last.eq(beats.source.last),
            [getattr(source, n).eq(getattr(heads.source, n)) for n in params],
            [getattr(source, n).eq(Mux(beats.source.last, getattr(heads.source, n), 0)) for n in tail],
        ]
        self.sync += If(accepted, starting.eq(sink.last), If(starting, [held[n].eq(getattr(sink, n)) for n in params]))


class AcceleratorCrossing(LiteXModule):
    """The accelerator seen from ``sys`` (module docstring)."""

    def __init__(self, core, cd: str = "sys", *, stream_depth: int = STREAM_DEPTH, packet_depth: int = 512):
        check_int("stream_depth", stream_depth, 4, 1024)
        check_int("packet_depth", packet_depth, 368, 1 << 16)
        self.cd = cd
        self.has_network = core.has_network
        self.abort, self.clear = Signal(), Signal()
        self.pending = Signal()
        if cd == "sys":
            self.instr, self.cmd, self.wdata, self.rdata = core.instr, core.cmd, core.wdata, core.rdata
            if core.has_network:
                self.udp_tx, self.udp_rx = core.udp_tx, core.udp_rx
            self.clear_core = self.clear
            self.comb += core.abort.eq(self.abort)
            return

        def crossing(endpoint, to_core: bool):
            cdc = stream.ClockDomainCrossing(endpoint.description, cd_from="sys" if to_core else cd,
                                             cd_to=cd if to_core else "sys", depth=stream_depth)
            self.submodules += cdc
            self.comb += (cdc.source.connect(endpoint) if to_core else endpoint.connect(cdc.sink))
            return cdc.sink if to_core else cdc.source

        instr_cdc = stream.ClockDomainCrossing(core.instr.description, cd_from="sys", cd_to=cd, depth=stream_depth)
        self.submodules += instr_cdc
        self.instr = stream.Endpoint(core.instr.description)
        self.cmd, self.wdata = crossing(core.cmd, False), crossing(core.wdata, False)
        self.rdata = crossing(core.rdata, True)
        if core.has_network:
            self.packets = WholePackets(core.udp_tx.description, packet_depth)
            self.comb += crossing(core.udp_tx, False).connect(self.packets.sink)
            self.udp_tx = self.packets.source
            udp_rx_cdc = stream.ClockDomainCrossing(core.udp_rx.description, cd_from="sys", cd_to=cd,
                                                    depth=stream_depth)
            self.submodules += udp_rx_cdc
            self.udp_rx = udp_rx_cdc.sink

        # abort: the engine's soft reset, then the instruction crossing drained.  Aborts are counted
        # in sys and the count crosses as a value, so aborts in quick succession are never lost; sys
        # holds its words until the snapshot shows the drain done for its latest abort
        sync_core = getattr(self.sync, cd)
        aborts, seen, drained_for = Signal(4), Signal(4), Signal(4)
        aborts_core = BusSynchronizer(4, "sys", cd)
        clear_ps = PulseSynchronizer("sys", cd)
        self.submodules += aborts_core, clear_ps
        draining = Signal(max=_FLUSH_CYCLES + 1)
        new_abort = Signal()
        self.sync += If(self.abort, aborts.eq(aborts + 1))
        self.comb += [aborts_core.i.eq(aborts), new_abort.eq(aborts_core.o != seen), core.abort.eq(new_abort),
                      clear_ps.i.eq(self.clear)]
        self.clear_core = clear_ps.o
        sync_core += [
            If(new_abort, seen.eq(aborts_core.o), draining.eq(_FLUSH_CYCLES)).Elif(
                draining != 0, draining.eq(draining - 1), If(draining == 1, drained_for.eq(seen))),
        ]
        if core.has_network:
            # arriving beats already in the crossing at an abort are drained with the instructions:
            # the receive FIFO in sys empties at the abort, so what reaches the engine after the drain
            # is a packet that arrived later (or the tail of one, which the depacketizer drops whole)
            # (the crossing's depth and the words in flight: every beat written before the abort)
            rx_drain = Signal(max=stream_depth + _FLUSH_CYCLES + 1)
            sync_core += If(new_abort, rx_drain.eq(stream_depth + _FLUSH_CYCLES)).Elif(
                rx_drain != 0, rx_drain.eq(rx_drain - 1))
            rx_draining = (rx_drain != 0) | new_abort
            self.comb += [udp_rx_cdc.source.connect(core.udp_rx, omit={"valid", "ready"}),
                          core.udp_rx.valid.eq(udp_rx_cdc.source.valid & ~rx_draining),
                          udp_rx_cdc.source.ready.eq(core.udp_rx.ready | rx_draining)]
        flushing = Signal()
        self.comb += [
            self.instr.connect(instr_cdc.sink, omit={"valid", "ready"}),
            instr_cdc.sink.valid.eq(self.instr.valid & ~flushing),
            self.instr.ready.eq(instr_cdc.sink.ready & ~flushing),
            instr_cdc.source.connect(core.instr, omit={"valid", "ready"}),
            core.instr.valid.eq(instr_cdc.source.valid & (draining == 0) & ~new_abort),
            instr_cdc.source.ready.eq((core.instr.ready & ~new_abort) | (draining != 0)),
        ]

        # words handed over (sys) against words taken off the crossing (cd), compared in the snapshot
        handed, taken = Signal(16), Signal(16)
        self.sync += If(instr_cdc.sink.valid & instr_cdc.sink.ready, handed.eq(handed + 1))
        sync_core += If(instr_cdc.source.valid & instr_cdc.source.ready, taken.eq(taken + 1))
        self._snapshot_sources = [taken, drained_for]
        self._handed, self._aborts, self._flushing = handed, aborts, flushing
        self._snapshot_signals = None

    def snapshot(self, signals: list) -> list:
        """``signals`` (in ``cd``) as seen in ``sys``; call once, with everything that must agree."""
        if self.cd == "sys":
            return list(signals)
        if self._snapshot_signals is not None:
            raise RuntimeError("AcceleratorCrossing.snapshot is called once")
        sources = self._snapshot_sources + list(signals)
        width = sum(len(s) for s in sources)
        self.sync_snapshot = bus = BusSynchronizer(width, self.cd, "sys")
        self.submodules += bus
        self.comb += bus.i.eq(Cat(*sources))
        out, offset = [], 0
        for s in sources:
            out.append(bus.o[offset:offset + len(s)])
            offset += len(s)
        taken, drained_for = out.pop(0), out.pop(0)
        self.comb += [self._flushing.eq(drained_for != self._aborts),
                      self.pending.eq((taken != self._handed) | self._flushing)]
        self._snapshot_signals = out
        return out
