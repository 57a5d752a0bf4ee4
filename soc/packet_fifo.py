"""The receive FIFO in front of the accelerator's ``i_udp``: whole packets or nothing, flushed on abort.

LiteEth's UDP port cannot be held back (Etherbone shares it), so arriving beats are always taken;
a packet that does not fit is dropped whole, from its first beat to its last, never cut: a cut
packet (a head without its ``last``) would run into the next packet, and the accelerator's
depacketizer would drop the two as one.  A packet is stored as it arrives and leaves only once
its last beat is in (store and forward), so a packet that is dropped half-way has given nothing
out.  ``flush`` (the accelerator's abort) forgets every beat held and the rest of the packet
arriving then (dropped up to its ``last``); the engine's abort forgets the part of a packet it
had taken, so what it sees next starts at a packet's first beat.

Parameters
----------
layout : stream layout with ``last`` (LiteEth's ``eth_udp_user_description(32)``)
depth : int      beats, a power of two (a packet longer than this is always dropped)

Members
-------
sink : stream.Endpoint(layout)    always ready
source : stream.Endpoint(layout)  whole packets, in order (``first`` is not kept)
flush : Signal, in                pulse: forget everything held and the packet arriving
level : Signal, out               beats held (the packet being stored and the beat at the output
                                  included: at most ``depth + 1``)
dropped : Signal(32), out         packets dropped because they did not fit (since ``clear``)
clear : Signal, in                pulse: ``dropped`` to 0

Latency
-------
A packet's first beat can leave two cycles after its last beat entered; then one beat per cycle.
"""

from __future__ import annotations

from migen import READ_FIRST, Cat, If, Memory, Mux, Signal

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from hhe_gen.params.checks import check_int

__all__ = ["PacketFifo"]


class PacketFifo(LiteXModule):
    """Store-and-forward FIFO that drops whole packets when full (module docstring)."""

    def __init__(self, layout, depth: int):
        check_int("depth", depth, 2, 1 << 16)
        if depth & (depth - 1):
            raise ValueError(f"PacketFifo depth must be a power of two, not {depth}")
        self.sink, self.source = sink, source = stream.Endpoint(layout), stream.Endpoint(layout)
        self.flush, self.clear = Signal(), Signal()
        self.dropped = dropped = Signal(32)
        log2 = depth.bit_length() - 1
        self.level = level = Signal(log2 + 2)

        def packed(ep):
            return Cat(ep.payload.raw_bits(), ep.param.raw_bits(), ep.last)

        width = len(packed(sink))
        self.specials.mem = mem = Memory(width, depth)
        self.specials.wp = wp = mem.get_port(write_capable=True)
        self.specials.rp = rp = mem.get_port(has_re=True, mode=READ_FIRST)   # the data registered: its slot is free

        wr, committed, rd = Signal(log2 + 1), Signal(log2 + 1), Signal(log2 + 1)   # one bit more than an address
        dropping = Signal()          # the packet arriving is being dropped (up to its last beat)
        arriving = Signal()          # a packet has started arriving and its last beat is not in yet
        out_valid = Signal()
        full, fetch, beat, stored = Signal(), Signal(), Signal(), Signal(log2 + 1)
        self.comb += [
            sink.ready.eq(1),
            beat.eq(sink.valid),
            stored.eq(wr - rd),
            level.eq(stored + out_valid),
            full.eq(stored == depth),
            wp.adr.eq(wr[:log2]), wp.dat_w.eq(packed(sink)),
            wp.we.eq(beat & ~self.flush & ~dropping & ~full),
            fetch.eq(~self.flush & (rd != committed) & (~out_valid | source.ready)),
            rp.adr.eq(rd[:log2]), rp.re.eq(fetch),
            packed(source).eq(rp.dat_r), source.valid.eq(out_valid),
        ]
        self.sync += [
            If(beat, arriving.eq(~sink.last)),
            If(self.flush,
                wr.eq(0), committed.eq(0), rd.eq(0), out_valid.eq(0),
                dropping.eq(Mux(beat, ~sink.last, arriving)),
            ).Else(
                If(beat,
                    If(dropping,
                        If(sink.last, dropping.eq(0)),
                    ).Elif(full,                    # it does not fit: gone from its first beat on
                        wr.eq(committed), dropping.eq(~sink.last), dropped.eq(dropped + 1),
                    ).Else(
                        wr.eq(wr + 1), If(sink.last, committed.eq(wr + 1)),
                    ),
                ),
                If(fetch, rd.eq(rd + 1), out_valid.eq(1)).Elif(source.ready, out_valid.eq(0)),
            ),
            If(self.clear, dropped.eq(0)),
        ]

